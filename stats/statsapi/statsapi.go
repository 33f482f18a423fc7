// Package statsapi serves the API's routes of the funnel (GET
// /stats/invites and GET /stats/reviews): the counts the store keeps with
// every change, summed over the period and grouping asked for. What is
// counted, the periods and the rates are package stats'; the counts are
// read through a small interface of what the handlers use of
// store/statsdb. The API mounts them on the routes of its route table,
// behind its authentication and access groups (any group may read them),
// and answers their errors (apiwire.API).
package statsapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store/statsdb"
)

// Store is what the handlers read of the funnel's counts.
type Store interface {
	InviteStats(ctx context.Context, q statsdb.Query) ([]stats.Group, error)
}

// Handler serves the routes of the funnel. Its methods are the handlers
// of the routes the API mounts.
type Handler struct {
	api   apiwire.API
	store Store
}

// New builds the handlers on the API that mounts them and on st.
func New(api apiwire.API, st Store) *Handler { return &Handler{api: api, store: st} }

// inviteStatsJSON is one group of GET /stats/invites.
type inviteStatsJSON struct {
	Key           string           `json:"key"`
	Accepted      int64            `json:"accepted"`
	Sent          int64            `json:"sent"`
	Delivered     int64            `json:"delivered"`
	Bounced       int64            `json:"bounced"`
	Opened        int64            `json:"opened"`
	Reviewed      int64            `json:"reviewed"`
	Unsubscribed  int64            `json:"unsubscribed"`
	Skipped       map[string]int64 `json:"skipped"`
	Failed        int64            `json:"failed"`
	Cancelled     int64            `json:"cancelled"`
	Waiting       int64            `json:"waiting"`
	ReviewRate    *float64         `json:"reviewRate"`
	AverageRating *json.Number     `json:"averageRating"`
}

func inviteStatsOut(g stats.Group) inviteStatsJSON {
	c := g.Counts
	out := inviteStatsJSON{Key: g.Key, Accepted: c[stats.Accepted], Sent: c[stats.Sent], Delivered: c[stats.Delivered],
		Bounced: c[stats.Bounced], Opened: c[stats.Opened], Reviewed: c[stats.Reviewed], Unsubscribed: c[stats.Unsubscribed],
		Skipped: c.Skipped(), Failed: c[stats.Failed], Cancelled: c[stats.Cancelled], Waiting: c[stats.Pending] + c[stats.Scheduled]}
	if r, ok := c.ReviewRate(); ok {
		out.ReviewRate = &r
	}
	if avg := json.Number(c.Ratings().AverageText()); avg != "" {
		out.AverageRating = &avg
	}
	return out
}

// reviewStatsJSON is one group of GET /stats/reviews.
type reviewStatsJSON struct {
	Key string `json:"key"`
	review.Summary
}

// statsPeriodJSON says which period and grouping an answer counts.
type statsPeriodJSON struct {
	From     string        `json:"from"`
	To       string        `json:"to"`
	TimeZone string        `json:"timeZone"`
	GroupBy  stats.GroupBy `json:"groupBy"`
}

// query reads from, to, timeZone and groupBy, and the groups of the
// account's counts for them.
func (h *Handler) query(w http.ResponseWriter, r *http.Request) (statsPeriodJSON, []stats.Group, bool) {
	q := apiquery.Parse(r, "from", "to", "timeZone", "groupBy")
	q.NoPage()
	if err := q.Err(); err != nil { // malformed, unknown or repeated parameters first
		h.api.Fail(w, r, err)
		return statsPeriodJSON{}, nil, false
	}
	p, errs := stats.ParsePeriod(q.Get("from"), q.Get("to"), q.Get("timeZone"))
	for _, e := range errs {
		q.Fail(e.Param, e.Message)
	}
	by := stats.GroupDay
	if v := q.Get("groupBy"); v != "" {
		by = stats.GroupBy(v)
		if msg := apiwire.OneOf(by, stats.Groupings()...); msg != "" {
			q.Fail("groupBy", msg)
		}
	}
	if err := q.Err(); err != nil {
		h.api.Fail(w, r, err)
		return statsPeriodJSON{}, nil, false
	}
	groups, err := h.store.InviteStats(r.Context(), statsdb.Query{AccountID: h.api.AccountID(r), From: p.Start(), To: p.End(),
		TimeZone: p.TimeZone(), GroupBy: by})
	if errors.Is(err, statsdb.ErrUnknownTimeZone) {
		err = apiwire.Invalid{{Field: "timeZone", Message: "is not a time zone the database knows"}}
	}
	if err != nil {
		h.api.Fail(w, r, err)
		return statsPeriodJSON{}, nil, false
	}
	return statsPeriodJSON{From: q.Get("from"), To: q.Get("to"), TimeZone: p.TimeZone(), GroupBy: by},
		stats.Complete(p, by, groups), true
}

// Invites is GET /stats/invites: the funnel of each group and in all.
func (h *Handler) Invites(w http.ResponseWriter, r *http.Request) {
	period, groups, ok := h.query(w, r)
	if !ok {
		return
	}
	items := make([]inviteStatsJSON, len(groups))
	for i, g := range groups {
		items[i] = inviteStatsOut(g)
	}
	apiwire.WriteJSON(w, http.StatusOK, struct {
		statsPeriodJSON
		Total inviteStatsJSON   `json:"total"`
		Items []inviteStatsJSON `json:"items"`
	}{period, inviteStatsOut(stats.Group{Counts: stats.Total(groups)}), items})
}

// Reviews is GET /stats/reviews: the ratings of each group and in all.
func (h *Handler) Reviews(w http.ResponseWriter, r *http.Request) {
	period, groups, ok := h.query(w, r)
	if !ok {
		return
	}
	items := make([]reviewStatsJSON, len(groups))
	for i, g := range groups {
		items[i] = reviewStatsJSON{Key: g.Key, Summary: g.Counts.Ratings().Summary()}
	}
	apiwire.WriteJSON(w, http.StatusOK, struct {
		statsPeriodJSON
		Total review.Summary    `json:"total"`
		Items []reviewStatsJSON `json:"items"`
	}{period, stats.Total(groups).Ratings().Summary(), items})
}
