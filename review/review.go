// Package review owns the rules of a customer's review once it exists:
// whether the public may see it (its publication status and the shop's
// reports), how its author is named in public, how the aggregates of
// ratings add up, and what the texts around it (comments, replies, notes)
// may hold.
//
// It is pure: no I/O, no clock. The store locks the rows, calls these
// functions with what it read, and writes what they return, in one
// transaction; the API and the public endpoints call the same functions,
// so every part of Touchpoint answers "is this review public?" and "what
// is its average?" alike.
//
// The rule at its heart: a shop cannot hide a review. It can report one;
// a reported review stays public until the operator decides, except that
// a report of personal data hides it at once. Only the operator removes a
// review.
package review

import (
	"errors"
	"slices"
)

// Status is where a review, or a product review, stands in publication.
// A product review always has its review's status and report reason:
// the customer wrote them together, and they are reported and decided
// together.
type Status string

// Statuses. Every review is published as it arrives.
const (
	Published Status = "published"
	// Reported: the shop reported it; the operator has not decided yet.
	Reported Status = "reported"
	// Removed: the operator removed it. Only the operator can.
	Removed Status = "removed"
)

// Statuses lists the statuses in their documented order.
func Statuses() []Status { return []Status{Published, Reported, Removed} }

// Valid reports whether s is one of Statuses.
func (s Status) Valid() bool { return slices.Contains(Statuses(), s) }

// Reason is why a shop reported a review.
type Reason string

// Reasons a shop may give.
const (
	Spam      Reason = "spam"
	Offensive Reason = "offensive"
	// PersonalData: the review holds someone's personal data. The one
	// reason that hides a review before the operator has looked at it.
	PersonalData    Reason = "personal_data"
	NotAnExperience Reason = "not_an_experience"
)

// Reasons lists the reasons in their documented order.
func Reasons() []Reason { return []Reason{Spam, Offensive, PersonalData, NotAnExperience} }

// Valid reports whether r is one of Reasons.
func (r Reason) Valid() bool { return slices.Contains(Reasons(), r) }

// Public reports whether a review with status s, reported for reason r
// (ignored unless s is Reported), is shown to the public: it is published,
// or reported for a reason other than personal data. This is the one
// definition; the SQL that selects public rows (the generated column
// "public" of reviews and product_reviews) says the same, and a test of
// the store holds the two together.
func Public(s Status, r Reason) bool {
	switch s {
	case Published:
		return true
	case Reported:
		return r != PersonalData
	}
	return false
}

// Decision is the operator's decision on a review.
type Decision string

// Decisions.
const (
	Publish Decision = "publish"
	Remove  Decision = "remove"
)

// Decisions lists the decisions.
func Decisions() []Decision { return []Decision{Publish, Remove} }

// Valid reports whether d is one of Decisions.
func (d Decision) Valid() bool { return slices.Contains(Decisions(), d) }

// Moderation is a review's publication state.
type Moderation struct {
	Status Status
	// Reason is the report's reason while Status is Reported, else "".
	Reason Reason
	// Settled: the operator published the review and the customer has
	// not changed it since. A settled review cannot be reported again:
	// otherwise a shop could hide it anew with every report of personal
	// data, however often the operator put it back.
	Settled bool
}

// Errors of Report: the shop's report cannot change the review.
var (
	// ErrRemoved: the operator has removed the review already.
	ErrRemoved = errors.New("the review has been removed")
	// ErrSettled: the operator has decided to publish the review after
	// a report, and it has not changed since.
	ErrSettled = errors.New("the operator has already decided to publish this review")
)

// Report is the state after the shop reports the review for reason, and
// whether anything changed. A published review becomes reported. A
// reported one keeps its reason unless the new one is personal data,
// which hides it at once; reporting it again for another reason changes
// nothing (the operator will look at it anyway). A removed or settled
// review cannot be reported (ErrRemoved, ErrSettled).
func (m Moderation) Report(reason Reason) (Moderation, bool, error) {
	switch {
	case m.Status == Removed:
		return m, false, ErrRemoved
	case m.Settled:
		return m, false, ErrSettled
	case m.Status == Reported && (m.Reason == reason || reason != PersonalData):
		return m, false, nil
	}
	return Moderation{Status: Reported, Reason: reason}, true, nil
}

// Decide is the state after the operator's decision, and whether anything
// changed. The operator may decide on any review, reported or not, and
// may reverse an earlier decision.
func (m Moderation) Decide(d Decision) (Moderation, bool) {
	next := Moderation{Status: Removed}
	if d == Publish {
		next = Moderation{Status: Published, Settled: true}
	}
	return next, next != m
}

// Edited is the state after the customer changed the review: the
// operator's decision to publish it covered the old text, so it can be
// reported again. A reported or removed review stays as it is.
func (m Moderation) Edited() Moderation {
	m.Settled = false
	return m
}
