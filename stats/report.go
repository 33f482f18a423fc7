package stats

import (
	"math"
	"slices"

	"github.com/touchpoint/touchpoint/review"
)

// Group is the counts of one key of a grouping: a day (YYYY-MM-DD), an
// event type's or channel's id, a language or a medium.
type Group struct {
	Key    string
	Counts Counts
}

// Complete returns groups sorted by key; grouped by day, every day of p
// is there, with zero counts for a day without events.
func Complete(p Period, by GroupBy, groups []Group) []Group {
	out := slices.Clone(groups)
	if by == GroupDay {
		have := map[string]bool{}
		for _, g := range groups {
			have[g.Key] = true
		}
		for _, d := range p.Days() {
			if !have[d] {
				out = append(out, Group{Key: d})
			}
		}
	}
	slices.SortFunc(out, func(a, b Group) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	return out
}

// Total is the sum of groups.
func Total(groups []Group) Counts {
	var c Counts
	for _, g := range groups {
		c = c.Add(g.Counts)
	}
	return c
}

// ReviewRate is reviewed / sent, rounded to four decimal places; ok is
// false when nothing was sent.
func (c Counts) ReviewRate() (rate float64, ok bool) {
	return ratio(c[Reviewed], c[Sent])
}

// ratio is n / of rounded half up to four decimal places, or not ok for
// of ≤ 0.
func ratio(n, of int64) (float64, bool) {
	if of <= 0 {
		return 0, false
	}
	return math.Floor(float64(n)*10000/float64(of)+0.5) / 10000, true
}

// Ratings are the shop ratings of the reviews counted, as review
// aggregates are kept: count, sum, distribution; their Average is the
// averageRating.
func (c Counts) Ratings() review.Aggregate {
	var a review.Aggregate
	for i := range review.MaxRating {
		n := c[Rated1+Column(i)]
		a.Count += n
		a.Sum += n * int64(i+1)
		a.Distribution[i] = n
	}
	return a
}

// The rates at which an account's mail needs a look, the same as the
// alerts that page the operator (deploy/alerts.yml).
const (
	// ComplaintRateAlert: mailbox providers throttle or refuse a sender
	// whose mail is reported as spam more often than 0.3 %.
	ComplaintRateAlert = 0.003
	// BounceRateAlert: providers put a sender under review above 5 %
	// bounces (Amazon SES's review threshold); the list needs cleaning.
	BounceRateAlert = 0.05
	// MinMailForRates is the mail below which no rate alarms: one bounce
	// or complaint alone would pass either threshold.
	MinMailForRates = 100
)

// Rate is a share of an account's mail with the threshold above which it
// alarms.
type Rate struct {
	N, Of     int64
	Threshold float64
}

// Value is N / Of; ok is false when nothing was sent.
func (r Rate) Value() (float64, bool) { return ratio(r.N, r.Of) }

// Alarming reports whether the rate passes its threshold on at least
// MinMailForRates messages.
func (r Rate) Alarming() bool {
	return r.Of >= MinMailForRates && float64(r.N) > r.Threshold*float64(r.Of)
}

// BounceRate is the share of the sent invites and reminders that
// bounced.
func (c Counts) BounceRate() Rate {
	return Rate{N: c[Bounced], Of: c[Sent], Threshold: BounceRateAlert}
}

// ComplaintRate is the share of sent mail reported as spam.
func ComplaintRate(complaints, sent int64) Rate {
	return Rate{N: complaints, Of: sent, Threshold: ComplaintRateAlert}
}
