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
