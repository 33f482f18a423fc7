package review

import (
	"encoding/json"
	"strconv"
)

// MinRating and MaxRating bound every rating, of a shop or a product.
const (
	MinRating = 1
	MaxRating = 5
)

// ValidRating reports whether n is a rating (1–5).
func ValidRating(n int) bool { return n >= MinRating && n <= MaxRating }

// Aggregate is the count, sum and distribution of a set of ratings: an
// account's public shop ratings, or a product's public ratings. The store
// keeps one row of it per account and per product key, changed by Delta
// in the transaction that changes a review, so reading it never scans the
// reviews.
type Aggregate struct {
	Count int64
	Sum   int64
	// Distribution counts the ratings by value: Distribution[0] counts
	// the 1s, Distribution[4] the 5s.
	Distribution [MaxRating]int64
}

// Contribution is what one rating adds to its aggregate: nothing unless it
// is public and there is a rating (Rating 0: a review with product ratings
// only has no shop rating).
type Contribution struct {
	Public bool
	Rating int
}

// counts reports whether c adds to an aggregate.
func (c Contribution) counts() bool { return c.Public && ValidRating(c.Rating) }

// Delta is the change to an aggregate when one rating goes from before to
// after (a zero Contribution for one that did not exist, or no longer
// does). Add it to the stored row.
func Delta(before, after Contribution) Aggregate {
	var d Aggregate
	if before.counts() {
		d.Count--
		d.Sum -= int64(before.Rating)
		d.Distribution[before.Rating-1]--
	}
	if after.counts() {
		d.Count++
		d.Sum += int64(after.Rating)
		d.Distribution[after.Rating-1]++
	}
	return d
}

// IsZero reports whether a is nothing: a Delta that changes nothing.
func (a Aggregate) IsZero() bool { return a == Aggregate{} }

// Add returns a + b.
func (a Aggregate) Add(b Aggregate) Aggregate {
	a.Count += b.Count
	a.Sum += b.Sum
	for i := range a.Distribution {
		a.Distribution[i] += b.Distribution[i]
	}
	return a
}

// Average is the mean rating rounded half up to one decimal place (4.25 →
// 4.3, 4.24 → 4.2), in tenths: 43 means 4.3. ok is false when there are no
// ratings. Integer arithmetic, so no binary fraction can round it the
// wrong way.
func (a Aggregate) Average() (tenths int64, ok bool) {
	if a.Count <= 0 {
		return 0, false
	}
	// round(10·sum/count) half up = floor((20·sum + count) / (2·count)).
	return (20*a.Sum + a.Count) / (2 * a.Count), true
}

// AverageText is Average written with one decimal ("4.3"), or "" when
// there are no ratings. JSON answers write it as a number.
func (a Aggregate) AverageText() string {
	t, ok := a.Average()
	if !ok {
		return ""
	}
	return strconv.FormatInt(t/10, 10) + "." + strconv.FormatInt(t%10, 10)
}

// Summary is an aggregate as every JSON answer writes it — the shop's
// review summaries, the funnel's and the public lists alike: the average
// with one decimal, null while there are no ratings.
type Summary struct {
	Count        int64            `json:"count"`
	Average      *json.Number     `json:"average"`
	Distribution map[string]int64 `json:"distribution"`
}

// Summary is a as JSON answers write it.
func (a Aggregate) Summary() Summary {
	out := Summary{Count: a.Count, Distribution: a.DistributionMap()}
	if avg := json.Number(a.AverageText()); avg != "" {
		out.Average = &avg
	}
	return out
}

// DistributionMap is the distribution as the API writes it: {"1": n, …,
// "5": n}, every rating present.
func (a Aggregate) DistributionMap() map[string]int64 {
	m := make(map[string]int64, MaxRating)
	for i, n := range a.Distribution {
		m[strconv.Itoa(i+1)] = n
	}
	return m
}
