package apiserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/text"
)

// reviewAPI is the routes of the reviews, product reviews and the funnel's counts.
type reviewAPI struct{ *server }

// The shop's side of its reviews: reading them and their product
// reviews, the aggregates, reporting a review to the operator and
// answering it in public. The rules (who may hide what, how an average
// rounds, what a text may hold) are package review's; these handlers
// read, check and write.

// reviewJSON is a review: no customer data, the event holds it; author
// is the name the public sees.
type reviewJSON struct {
	ID           string              `json:"id"`
	EventID      string              `json:"eventId"`
	EventTypeID  string              `json:"eventTypeId"`
	ChannelID    string              `json:"channelId"`
	Rating       *int                `json:"rating"`
	Comment      string              `json:"comment"`
	Locale       string              `json:"locale"`
	Author       string              `json:"author"`
	Status       review.Status       `json:"status"`
	ReportReason *review.Reason      `json:"reportReason"`
	Public       bool                `json:"public"`
	Reply        *replyJSON          `json:"reply"`
	Products     []productReviewJSON `json:"products"`
	CreatedAt    apiwire.Timestamp   `json:"createdAt"`
	UpdatedAt    apiwire.Timestamp   `json:"updatedAt"`
}

// replyJSON is the shop's public reply to a review.
type replyJSON struct {
	Text      string            `json:"text"`
	CreatedAt apiwire.Timestamp `json:"createdAt"`
	UpdatedAt apiwire.Timestamp `json:"updatedAt"`
}

func reviewOut(r reviewdb.Review) reviewJSON {
	out := reviewJSON{ID: r.ID, EventID: r.EventID, EventTypeID: r.EventTypeID, ChannelID: r.ChannelID, Rating: optInt(r.Rating),
		Comment: r.Comment, Locale: r.Locale, Author: r.Author(r.Locale), Status: r.Status, Public: r.Public,
		Products: make([]productReviewJSON, len(r.Products)), CreatedAt: apiwire.Timestamp(r.CreatedAt), UpdatedAt: apiwire.Timestamp(r.UpdatedAt)}
	if r.ReportReason != "" {
		out.ReportReason = &r.ReportReason
	}
	out.Reply = replyOut(r)
	for i, p := range r.Products {
		out.Products[i] = productReviewOut(p)
	}
	return out
}

func replyOut(r reviewdb.Review) *replyJSON {
	if r.ReplyCreatedAt == nil {
		return nil
	}
	return &replyJSON{Text: r.ReplyText, CreatedAt: apiwire.Timestamp(*r.ReplyCreatedAt), UpdatedAt: apiwire.Timestamp(*r.ReplyUpdatedAt)}
}

// productReviewJSON is a product review, with the product as the event
// gave it (null for what it did not give).
type productReviewJSON struct {
	ID        string            `json:"id"`
	ReviewID  string            `json:"reviewId"`
	EventID   string            `json:"eventId"`
	Product   productJSON       `json:"product"`
	Rating    int               `json:"rating"`
	Comment   string            `json:"comment"`
	Status    review.Status     `json:"status"`
	Public    bool              `json:"public"`
	CreatedAt apiwire.Timestamp `json:"createdAt"`
	UpdatedAt apiwire.Timestamp `json:"updatedAt"`
}

type productJSON struct {
	Name     *string `json:"name"`
	SKU      *string `json:"sku"`
	GTIN     *string `json:"gtin"`
	MPN      *string `json:"mpn"`
	Brand    *string `json:"brand"`
	URL      *string `json:"url"`
	ImageURL *string `json:"imageUrl"`
}

func productReviewOut(p reviewdb.ProductReview) productReviewJSON {
	return productReviewJSON{ID: p.ID, ReviewID: p.ReviewID, EventID: p.EventID,
		Product: productJSON{Name: optText(p.Name), SKU: optText(p.SKU), GTIN: optText(p.GTIN), MPN: optText(p.MPN),
			Brand: optText(p.Brand), URL: optText(p.URL), ImageURL: optText(p.ImageURL)},
		Rating: p.Rating, Comment: p.Comment, Status: p.Status, Public: p.Public,
		CreatedAt: apiwire.Timestamp(p.CreatedAt), UpdatedAt: apiwire.Timestamp(p.UpdatedAt)}
}

func optInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func optText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// summaryJSON is an aggregate of public ratings: average null when there
// are none.
type summaryJSON struct {
	Count        int64            `json:"count"`
	Average      *json.Number     `json:"average"`
	Distribution map[string]int64 `json:"distribution"`
}

func summaryOut(a review.Aggregate) summaryJSON {
	out := summaryJSON{Count: a.Count, Distribution: a.DistributionMap()}
	if avg := json.Number(a.AverageText()); avg != "" {
		out.Average = &avg
	}
	return out
}

func (s reviewAPI) listReviews(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r, "eventTypeId", "channelId", "rating", "minRating", "status", "createdFrom", "createdTo")
	f := reviewdb.ReviewFilter{EventTypeID: q.ID("eventTypeId", "ety"), ChannelID: q.ID("channelId", "chl"),
		Rating: q.Rating("rating"), MinRating: q.Rating("minRating"), Status: q.status("status"),
		CreatedFrom: q.optTimestamp("createdFrom"), CreatedTo: q.optTimestamp("createdTo")}
	p := q.Page("rev")
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	rs, next, err := s.reviews.ListReviews(r.Context(), accountID(r), f, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(rs, next, reviewOut))
}

func (s reviewAPI) getReview(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "rev", "review")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rev, err := s.reviews.Review(r.Context(), accountID(r), id)
	if err != nil {
		s.fail(w, r, apiwire.About("review", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, reviewOut(rev))
}

// getReviewSummary is GET /reviews/summary: the account's public shop
// ratings, from the row kept with every change.
func (s reviewAPI) getReviewSummary(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r)
	q.NoPage()
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.reviews.ReviewAggregate(r.Context(), accountID(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, summaryOut(a))
}

func (s reviewAPI) listProductReviews(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r, "sku", "gtin", "mpn", "minRating", "status", "createdFrom", "createdTo")
	f := reviewdb.ProductReviewFilter{SKU: q.ProductKey("sku"), GTIN: q.ProductKey("gtin"), MPN: q.ProductKey("mpn"),
		MinRating: q.Rating("minRating"), Status: q.status("status"),
		CreatedFrom: q.optTimestamp("createdFrom"), CreatedTo: q.optTimestamp("createdTo")}
	p := q.Page("prv")
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	ps, next, err := s.reviews.ListProductReviews(r.Context(), accountID(r), f, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(ps, next, productReviewOut))
}

func (s reviewAPI) getProductReview(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "prv", "product review")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.reviews.ProductReview(r.Context(), accountID(r), id)
	if err != nil {
		s.fail(w, r, apiwire.About("product review", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, productReviewOut(p))
}

// getProductSummary is GET /products/summary?sku=|gtin=|mpn=: the public
// ratings of one product, from the row kept with every change. A product
// nobody has rated yet has count 0.
func (s reviewAPI) getProductSummary(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r, "sku", "gtin", "mpn")
	q.NoPage()
	key := q.OneProductKey()
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := s.reviews.ProductAggregate(r.Context(), accountID(r), key)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, summaryOut(a))
}

// reportIn is POST /reviews/{id}/report.
type reportIn struct {
	Reason review.Reason `json:"reason" required:"true"`
	Note   *string       `json:"note"`
}

// reportReview is POST /reviews/{id}/report: the shop asks the operator
// to look at a review. It stays public until the operator decides, unless
// the reason is personal data (see review.Moderation.Report). 200 with the
// review; 409 when the operator has removed it, or has published it after
// a report and it has not changed since.
func (s reviewAPI) reportReview(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "rev", "review")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var in reportIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	var errs apiwire.Invalid
	errs.Check("reason", apiwire.OneOf(in.Reason, review.Reasons()...))
	note := ""
	if in.Note != nil {
		note = text.Clean(text.Multiline, *in.Note)
		errs.Check("note", textProblem(note, false))
	}
	if err := errs.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	info := infoFrom(r.Context())
	rev, _, err := s.reviews.ReportReview(r.Context(), accountID(r), id, in.Reason, note, info.principal.ClientID)
	switch {
	case errors.Is(err, review.ErrRemoved):
		s.fail(w, r, newError(http.StatusConflict, "the operator has removed this review; there is nothing left to report"))
		return
	case errors.Is(err, review.ErrSettled):
		s.fail(w, r, newError(http.StatusConflict, "the operator has looked at this review after a report and kept it "+
			"published; it can be reported again once the customer changes it"))
		return
	case err != nil:
		s.fail(w, r, apiwire.About("review", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, reviewOut(rev))
}

// historyJSON is one change of a review.
type historyJSON struct {
	Action string            `json:"action"`
	Status review.Status     `json:"status"`
	Reason *review.Reason    `json:"reason"`
	Note   *string           `json:"note"`
	By     string            `json:"by"`
	At     apiwire.Timestamp `json:"at"`
}

func historyOut(h reviewdb.HistoryEntry) historyJSON {
	out := historyJSON{Action: h.Action, Status: h.Status, Note: optText(h.Note), By: h.Actor, At: apiwire.Timestamp(h.At)}
	if h.Reason != "" {
		out.Reason = &h.Reason
	}
	return out
}

// reviewHistory is GET /reviews/{id}/history: every change of the review,
// newest first.
func (s reviewAPI) reviewHistory(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "rev", "review")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := parseQuery(r)
	p := q.PageOf(func(id string) bool { n, err := strconv.ParseInt(id, 10, 64); return err == nil && n > 0 })
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	hs, next, err := s.reviews.ReviewHistory(r.Context(), accountID(r), id, p)
	if err != nil {
		s.fail(w, r, apiwire.About("review", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(hs, next, historyOut))
}

// replyIn is PUT /reviews/{id}/reply.
type replyIn struct {
	Text string `json:"text" required:"true"`
}

// putReply is PUT /reviews/{id}/reply: sets or replaces the shop's public
// reply; 200 with the reply.
func (s reviewAPI) putReply(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "rev", "review")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var in replyIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	reply := text.Clean(text.Multiline, in.Text)
	var errs apiwire.Invalid
	errs.Check("text", textProblem(reply, true))
	if err := errs.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	rev, _, err := s.reviews.SetReply(r.Context(), accountID(r), id, reply, clientID(r))
	if err != nil {
		s.fail(w, r, apiwire.About("review", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, replyOut(rev))
}

// deleteReply is DELETE /reviews/{id}/reply: 204, or 404 when there is no
// reply.
func (s reviewAPI) deleteReply(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "rev", "review")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	err = s.reviews.DeleteReply(r.Context(), accountID(r), id, clientID(r))
	switch {
	case errors.Is(err, reviewdb.ErrNoReply):
		s.fail(w, r, newError(http.StatusNotFound, "the review has no reply"))
		return
	case err != nil:
		s.fail(w, r, apiwire.About("review", "", err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// textProblem says what is wrong with a cleaned reply or note.
func textProblem(s string, required bool) string {
	if err := review.CheckText(s, required); err != nil {
		return err.Error()
	}
	return ""
}

// status reads a publication status filter.
func (q *query) status(name string) review.Status {
	v := review.Status(q.Get(name))
	if v != "" {
		if msg := apiwire.OneOf(v, review.Statuses()...); msg != "" {
			q.Fail(name, msg)
			return ""
		}
	}
	return v
}

// optTimestamp reads an RFC 3339 time; nil when absent.
func (q *query) optTimestamp(name string) *time.Time {
	if t := q.Time(name); !t.IsZero() {
		return &t
	}
	return nil
}

// reviewSummary is the event's review as GET /events/{id} shows it.
type reviewSummary struct {
	ID        string            `json:"id"`
	Rating    *int              `json:"rating"`
	CreatedAt apiwire.Timestamp `json:"createdAt"`
}

// reviewSummaryOf decodes the review column of an event row (nil: none).
func reviewSummaryOf(raw []byte) (*reviewSummary, error) {
	if raw == nil {
		return nil, nil
	}
	var r struct {
		ID        string    `json:"id"`
		Rating    *int      `json:"rating"`
		CreatedAt time.Time `json:"createdAt"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return &reviewSummary{ID: r.ID, Rating: r.Rating, CreatedAt: apiwire.Timestamp(r.CreatedAt)}, nil
}
