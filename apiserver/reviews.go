package apiserver

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/touchpoint/touchpoint/store"
)

// reviewJSON is a review (SPEC §11.2): no customer data, the event holds it.
type reviewJSON struct {
	ID          string    `json:"id"`
	EventID     string    `json:"eventId"`
	EventTypeID string    `json:"eventTypeId"`
	ChannelID   string    `json:"channelId"`
	Rating      int       `json:"rating"`
	Comment     string    `json:"comment"`
	Locale      string    `json:"locale"`
	CreatedAt   timestamp `json:"createdAt"`
	UpdatedAt   timestamp `json:"updatedAt"`
}

func reviewOut(r store.Review) reviewJSON {
	return reviewJSON{ID: r.ID, EventID: r.EventID, EventTypeID: r.EventTypeID, ChannelID: r.ChannelID, Rating: r.Rating,
		Comment: r.Comment, Locale: r.Locale, CreatedAt: timestamp(r.CreatedAt), UpdatedAt: timestamp(r.UpdatedAt)}
}

func (s *server) listReviews(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r, "eventTypeId", "channelId", "rating", "minRating", "createdFrom", "createdTo")
	f := store.ReviewFilter{EventTypeID: q.id("eventTypeId", "ety"), ChannelID: q.id("channelId", "chl"),
		Rating: q.rating("rating"), MinRating: q.rating("minRating")}
	if t := q.timestamp("createdFrom"); !t.IsZero() {
		f.CreatedFrom = &t
	}
	if t := q.timestamp("createdTo"); !t.IsZero() {
		f.CreatedTo = &t
	}
	p := q.page("rev")
	if err := q.err(); err != nil {
		s.fail(w, r, err)
		return
	}
	rs, next, err := s.store.ListReviews(r.Context(), accountID(r), f, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newList(rs, next, reviewOut))
}

func (s *server) getReview(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "rev", "review")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rev, err := s.store.Review(r.Context(), accountID(r), id)
	if err != nil {
		s.fail(w, r, about("review", "", err))
		return
	}
	writeJSON(w, http.StatusOK, reviewOut(rev))
}

// rating reads a rating filter, 1–5; 0 when absent.
func (q *query) rating(name string) int {
	v := q.get(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 5 {
		q.fail(name, "must be an integer from 1 to 5")
		return 0
	}
	return n
}

// reviewSummary is the event's review as GET /events/{id} shows it.
type reviewSummary struct {
	ID        string    `json:"id"`
	Rating    int       `json:"rating"`
	CreatedAt timestamp `json:"createdAt"`
}

// reviewSummaryOf decodes the review column of an event row (nil: none).
func reviewSummaryOf(raw []byte) (*reviewSummary, error) {
	if raw == nil {
		return nil, nil
	}
	var r struct {
		ID        string    `json:"id"`
		Rating    int       `json:"rating"`
		CreatedAt time.Time `json:"createdAt"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return &reviewSummary{ID: r.ID, Rating: r.Rating, CreatedAt: timestamp(r.CreatedAt)}, nil
}
