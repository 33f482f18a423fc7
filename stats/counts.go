// Package stats is the funnel of a shop's invites: what is counted for
// an event at each step (accepted, sent, skipped and why, opened,
// reviewed, unsubscribed, the ratings), the keys those counts are kept
// under (the account, the quarter hour and the day the event was
// accepted, its event type, channel, language and medium), the periods
// and groupings a reader may ask for, the rates read off the counts, and
// the funnel drawn as text.
//
// Counts follow an event, not a moment: every count of an event belongs
// to the time it was accepted, so "of the events accepted in March, how
// many were sent, opened, reviewed" is one question, and a rate never
// exceeds what it is a rate of. A count is the number of events in a
// state now (an invite failed and then sent after a retry is sent, once),
// so the store keeps them as deltas between an event's contribution
// before and after each change (Delta).
//
// It is pure: the store applies the deltas in the transaction of each
// change and reads the sums; the API and the CLI shape and draw them.
package stats

import (
	"slices"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/invite"
)

// Column is one count kept per key.
type Column int

// The counts. Pending, Scheduled (sending included), Sent, Skipped… by
// reason, Failed and Cancelled count the invites in each state: each
// event is in exactly one of them.
const (
	Accepted Column = iota
	Pending
	Scheduled
	Sent
	Failed
	Cancelled
	SkippedEventTypeInactive
	SkippedSettingInactive
	SkippedRecentlyInvited
	SkippedSuppressed
	SkippedNoAddress
	SkippedQuotaExceeded
	SkippedOther
	// Opened: the invite's feedback page was opened at least once.
	Opened
	// Reviewed: the event has a review (with or without a shop rating).
	Reviewed
	// Rated1 … Rated5: reviews by their shop rating.
	Rated1
	Rated2
	Rated3
	Rated4
	Rated5
	// Unsubscribed: the customer opted out through this event's invite
	// (the unsubscribe link, or STOP to its text message).
	Unsubscribed
	// Delivered and Bounced: what the mail provider reported of the
	// invite after the relay accepted it.
	Delivered
	Bounced
	numColumns
)

var columnNames = [numColumns]string{
	"accepted", "pending", "scheduled", "sent", "failed", "cancelled",
	"skipped_event_type_inactive", "skipped_setting_inactive", "skipped_recently_invited",
	"skipped_suppressed", "skipped_no_address", "skipped_quota_exceeded", "skipped_other",
	"opened", "reviewed", "rated_1", "rated_2", "rated_3", "rated_4", "rated_5",
	"unsubscribed", "delivered", "bounced",
}

// skippedColumns are the skip reasons an invite can end with, by column.
var skippedColumns = map[invite.Reason]Column{
	invite.EventTypeInactive: SkippedEventTypeInactive,
	invite.SettingInactive:   SkippedSettingInactive,
	invite.RecentlyInvited:   SkippedRecentlyInvited,
	invite.Suppressed:        SkippedSuppressed,
	invite.NoAddress:         SkippedNoAddress,
	invite.QuotaExceeded:     SkippedQuotaExceeded,
}

// Columns names every count, in Column order: the store's column names.
func Columns() []string { return slices.Clone(columnNames[:]) }

// Counts are the counts of one key, indexed by Column.
type Counts [numColumns]int64

// Add returns c + d.
func (c Counts) Add(d Counts) Counts {
	for i := range c {
		c[i] += d[i]
	}
	return c
}

// Sub returns c - d.
func (c Counts) Sub(d Counts) Counts {
	for i := range c {
		c[i] -= d[i]
	}
	return c
}

// Zero reports whether every count is 0.
func (c Counts) Zero() bool { return c == Counts{} }

// Skipped returns the skipped invites by reason (only reasons with a
// count); invites skipped for a reason this version does not know are
// under "other".
func (c Counts) Skipped() map[string]int64 {
	out := map[string]int64{}
	for r, col := range skippedColumns {
		if c[col] != 0 {
			out[string(r)] = c[col]
		}
	}
	if c[SkippedOther] != 0 {
		out["other"] = c[SkippedOther]
	}
	return out
}

// SkippedTotal is the number of skipped invites, whatever the reason.
func (c Counts) SkippedTotal() int64 {
	n := c[SkippedOther]
	for _, col := range skippedColumns {
		n += c[col]
	}
	return n
}

// Slot is the length of the finest time bucket counts are kept in: a
// quarter hour, so any time zone's midnight (all are whole quarter hours
// from UTC) falls on a bucket's edge.
const Slot = 15 * time.Minute

// Key is where an event's counts are kept.
type Key struct {
	AccountID   string
	Slot        time.Time // the quarter hour the event was accepted in (UTC)
	EventTypeID string
	ChannelID   string
	Locale      string // the language the customer is addressed in (Language)
	Medium      invite.Medium
}

// Day is the UTC day of the key's slot, as the daily counts keep it.
func (k Key) Day() time.Time {
	y, m, d := k.Slot.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Compare orders keys as the store writes them (in one order everywhere,
// so two writers never wait on each other's rows in a cycle).
func (k Key) Compare(o Key) int {
	if c := strings.Compare(k.AccountID, o.AccountID); c != 0 {
		return c
	}
	if c := k.Slot.Compare(o.Slot); c != 0 {
		return c
	}
	for _, p := range [][2]string{{k.EventTypeID, o.EventTypeID}, {k.ChannelID, o.ChannelID},
		{k.Locale, o.Locale}, {string(k.Medium), string(o.Medium)}} {
		if c := strings.Compare(p[0], p[1]); c != 0 {
			return c
		}
	}
	return 0
}

// Facts are what an event counts for, as its row says.
type Facts struct {
	EventID     string // not part of the key
	AccountID   string
	ReceivedAt  time.Time
	EventTypeID string
	ChannelID   string
	Locale      string
	// Invite is the invite's state (status, reason, medium).
	Invite       invite.State
	Opened       bool
	Reviewed     bool
	Rating       int // the review's shop rating, 1–5; 0 for none
	Unsubscribed bool
	// Delivery is the invite mail's status as its provider reported it:
	// "delivered", "bounced", "complained" (delivered, then marked as
	// spam) or "" (no report).
	Delivery string
}

// Key is where f is counted.
func (f Facts) Key() Key {
	return Key{AccountID: f.AccountID, Slot: f.ReceivedAt.UTC().Truncate(Slot), EventTypeID: f.EventTypeID,
		ChannelID: f.ChannelID, Locale: f.Locale, Medium: f.Invite.Medium}
}

// Counts is the event's contribution: 1 in each column it counts in.
func (f Facts) Counts() Counts {
	var c Counts
	c[Accepted] = 1
	c[StatusColumn(f.Invite.Status, f.Invite.Reason)] = 1
	flag := func(col Column, on bool) {
		if on {
			c[col] = 1
		}
	}
	flag(Opened, f.Opened)
	flag(Reviewed, f.Reviewed)
	if f.Reviewed && f.Rating >= 1 && f.Rating <= 5 {
		c[Rated1+Column(f.Rating-1)] = 1
	}
	flag(Unsubscribed, f.Unsubscribed)
	// A complaint came from a mailbox the invite was delivered to.
	flag(Delivered, f.Delivery == "delivered" || f.Delivery == "complained")
	flag(Bounced, f.Delivery == "bounced")
	return c
}

// StatusColumn is the column an invite in status st (skipped for reason)
// counts in. Sending is still scheduled; a status this version does not
// know counts as pending.
func StatusColumn(st invite.Status, reason invite.Reason) Column {
	switch st {
	case invite.Scheduled, invite.Sending:
		return Scheduled
	case invite.Sent:
		return Sent
	case invite.Failed:
		return Failed
	case invite.Cancelled:
		return Cancelled
	case invite.Skipped:
		if col, ok := skippedColumns[reason]; ok {
			return col
		}
		return SkippedOther
	}
	return Pending
}

// KeyedCounts are counts to add at a key.
type KeyedCounts struct {
	Key    Key
	Counts Counts
}

// Delta is what the counts change by when an event's facts change from
// before to after (before nil: the event is new): its contribution
// leaves before's key and arrives at after's, merged when the key is the
// same, sorted by key, without zero entries.
func Delta(before *Facts, after Facts) []KeyedCounts {
	out := []KeyedCounts{{Key: after.Key(), Counts: after.Counts()}}
	if before != nil {
		bk, bc := before.Key(), before.Counts()
		if bk == out[0].Key {
			out[0].Counts = out[0].Counts.Sub(bc)
		} else {
			var zero Counts
			out = append(out, KeyedCounts{Key: bk, Counts: zero.Sub(bc)})
		}
	}
	out = slices.DeleteFunc(out, func(k KeyedCounts) bool { return k.Counts.Zero() })
	slices.SortFunc(out, func(a, b KeyedCounts) int { return a.Key.Compare(b.Key) })
	return out
}

// languages are the languages a customer is addressed in.
var languages = []string{"da", "de", "en", "es", "fr", "nl"}

// Languages lists the languages counts are kept by, sorted.
func Languages() []string { return slices.Clone(languages) }

// Language is the language an event with defaultLocale is counted under:
// the locale's language ("de" for "de_AT", "de-at" or "DE"), when it is
// one of Languages, else "en" — the language its invite and pages use.
// The store's SQL function touchpoint_language is the same rule (a test
// holds them together).
func Language(defaultLocale string) string {
	lang, _, _ := strings.Cut(strings.ReplaceAll(strings.Trim(defaultLocale, " "), "-", "_"), "_")
	lang = strings.ToLower(lang)
	if slices.Contains(languages, lang) {
		return lang
	}
	return "en"
}

// Merge adds up keyed counts (of several changes in one transaction)
// into one list sorted by key, without zero entries.
func Merge(parts ...[]KeyedCounts) []KeyedCounts {
	var out []KeyedCounts
	for _, p := range parts {
		for _, kc := range p {
			i := slices.IndexFunc(out, func(o KeyedCounts) bool { return o.Key == kc.Key })
			if i < 0 {
				out = append(out, kc)
				continue
			}
			out[i].Counts = out[i].Counts.Add(kc.Counts)
		}
	}
	out = slices.DeleteFunc(out, func(k KeyedCounts) bool { return k.Counts.Zero() })
	slices.SortFunc(out, func(a, b KeyedCounts) int { return a.Key.Compare(b.Key) })
	return out
}
