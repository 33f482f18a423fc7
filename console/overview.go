package console

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/store/statsdb"
)

// The overview: how the last 30 days went, and what waits on the shop.

// overviewDays is the period of the overview's funnel, today included.
const overviewDays = 30

// lowRating is the highest rating the overview counts as low: a review
// rated so waits for an answer.
const lowRating = 2

// attentionList is how many of each kind of review the overview lists.
const attentionList = 5

// bar is one bar of a chart: its name, its number and its length as a
// share of the longest, in percent for the SVG.
type bar struct {
	Key   string // the text key of its name
	Label string // a name of its own (a rating: "5")
	Count int64
	Width string // "62.5%"
	Share string // of the first bar, for the table: "62.5 %"; "" for the first
	Y     int    // the baseline of its label in the chart
}

// The geometry of a bar chart, in CSS pixels: each row is a label, then
// its bar.
const (
	rowHeight = 46
	labelY    = 16 // the label's baseline from the top of its row
	barY      = 24 // the bar's top from the top of its row
	barHeight = 14
)

// layoutBars sets each bar's place in the chart and returns its height.
func layoutBars(bs []bar) int {
	for i := range bs {
		bs[i].Y = i*rowHeight + labelY
	}
	return len(bs) * rowHeight
}

// BarY is the top of the bar below the label.
func (b bar) BarY() int { return b.Y - labelY + barY }

type overviewView struct {
	From, To      string // the period, YYYY-MM-DD
	Funnel        []bar
	FunnelHeight  int
	Ratings       []bar // 5 down to 1
	RatingsHeight int
	RatingCount   int64
	Average       string // "4.3"; "" when there is no rating
	Reported      []reviewdb.Review
	ReportedCount string // "3", "1000+"
	Low           []reviewdb.Review
	LowCount      string
	LowRating     int
	Bounce        rateView
	Complaint     rateView
}

// rateView is a rate of the mail against its threshold.
type rateView struct {
	Value     string // "1.2 %"; "" when nothing was sent
	Threshold string // "5 %"
	Alarming  bool
	N, Of     int64
}

func newRate(r stats.Rate) rateView {
	v := rateView{Threshold: percent(r.Threshold), Alarming: r.Alarming(), N: r.N, Of: r.Of}
	if x, ok := r.Value(); ok {
		v.Value = percent(x)
	}
	return v
}

// percent writes a share as a percentage with what precision it needs.
func percent(x float64) string {
	return strconv.FormatFloat(x*100, 'f', -1, 64) + " %"
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request, p Person) {
	ctx := r.Context()
	today := h.now().UTC().Truncate(24 * time.Hour)
	from := today.AddDate(0, 0, -(overviewDays - 1))
	period, errs := stats.ParsePeriod(from.Format(time.DateOnly), today.Format(time.DateOnly), "")
	if len(errs) > 0 {
		h.fail(w, r, fmt.Errorf("overview period: %v", errs))
		return
	}
	groups, err := h.opts.Stats.InviteStats(ctx, statsdb.Query{AccountID: p.AccountID, From: period.Start(), To: period.End(),
		GroupBy: stats.GroupDay})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	total := stats.Total(groups)
	v := overviewView{From: from.Format(time.DateOnly), To: today.Format(time.DateOnly), LowRating: lowRating}
	way := total.Way()
	for i, s := range way {
		b := bar{Key: "funnel_" + s.Name, Count: s.Count, Width: width(s.Count, way[0].Count)}
		if i > 0 {
			b.Share = share(s.Count, way[0].Count)
		}
		v.Funnel = append(v.Funnel, b)
	}

	v.FunnelHeight = layoutBars(v.Funnel)

	agg, err := h.opts.Reviews.ReviewAggregate(ctx, p.AccountID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v.RatingCount, v.Average = agg.Count, agg.AverageText()
	dist := agg.DistributionMap()
	var most int64
	for _, n := range dist {
		most = max(most, n)
	}
	for star := review.MaxRating; star >= review.MinRating; star-- {
		n := dist[strconv.Itoa(star)]
		v.Ratings = append(v.Ratings, bar{Label: strconv.Itoa(star), Count: n, Width: width(n, most), Share: share(n, agg.Count)})
	}

	v.RatingsHeight = layoutBars(v.Ratings)

	att, err := h.opts.Reviews.ReviewAttention(ctx, p.AccountID, lowRating)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v.ReportedCount, v.LowCount = capped(att.Reported), capped(att.LowUnanswered)
	page := store.Page{Limit: attentionList}
	if att.Reported > 0 {
		if v.Reported, _, err = h.opts.Reviews.ListReviews(ctx, p.AccountID, reviewdb.ReviewFilter{Status: review.Reported}, page); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	if att.LowUnanswered > 0 {
		no := false
		v.Low, _, err = h.opts.Reviews.ListReviews(ctx, p.AccountID, reviewdb.ReviewFilter{MaxRating: lowRating, Answered: &no}, page)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		v.Low = withoutRemoved(v.Low)
	}

	complaints, err := h.opts.Reports.ComplaintsSince(ctx, p.AccountID, period.Start())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v.Bounce = newRate(total.BounceRate())
	v.Complaint = newRate(stats.ComplaintRate(complaints, total[stats.Sent]))
	h.render(w, r, http.StatusOK, "overview", "overview_title", "overview", v)
}

// withoutRemoved leaves out the reviews the operator removed: nobody
// sees them, so nobody need answer them.
func withoutRemoved(rs []reviewdb.Review) []reviewdb.Review {
	out := rs[:0]
	for _, r := range rs {
		if r.Status != review.Removed {
			out = append(out, r)
		}
	}
	return out
}

// width is n's share of the longest bar as an SVG length.
func width(n, longest int64) string {
	if longest <= 0 || n <= 0 {
		return "0%"
	}
	return strconv.FormatFloat(float64(n)*100/float64(longest), 'f', 2, 64) + "%"
}

// share is n's share of all, for a table: "62.5 %", "–" of nothing.
func share(n, all int64) string {
	if all <= 0 {
		return "–"
	}
	return strconv.FormatFloat(float64(n)*100/float64(all), 'f', 1, 64) + " %"
}

// capped writes a count that stops at reviewdb.AttentionCap.
func capped(n int64) string {
	if n >= reviewdb.AttentionCap {
		return strconv.Itoa(reviewdb.AttentionCap) + "+"
	}
	return strconv.FormatInt(n, 10)
}
