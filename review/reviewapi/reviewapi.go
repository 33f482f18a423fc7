// Package reviewapi serves the API's routes of a shop's own reviews
// (/reviews/…, /product-reviews/…, /products/summary): reading them and
// their product reviews, the aggregates of public ratings, reporting a
// review to the operator, its history, and answering it in public. The
// rules (who may hide what, how an average rounds, what a text may hold)
// are package review's; these handlers read, check and write, through a
// small interface of what they use of store/reviewdb. The API mounts them
// on the routes of its route table, behind its authentication and access
// groups, and answers their errors (apiwire.API).
package reviewapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/text"
)

// Store is what the handlers read and change of an account's reviews.
type Store interface {
	Review(ctx context.Context, accountID, id string) (reviewdb.Review, error)
	ListReviews(ctx context.Context, accountID string, f reviewdb.ReviewFilter, p pg.Page) ([]reviewdb.Review, *pg.Cursor, error)
	ReviewHistory(ctx context.Context, accountID, id string, p pg.Page) ([]reviewdb.HistoryEntry, *pg.Cursor, error)
	ReportReview(ctx context.Context, accountID, id string, reason review.Reason, note, actor string) (reviewdb.Review, bool, error)
	SetReply(ctx context.Context, accountID, id, text, actor string) (reviewdb.Review, bool, error)
	DeleteReply(ctx context.Context, accountID, id, actor string) error
	ProductReview(ctx context.Context, accountID, id string) (reviewdb.ProductReview, error)
	ListProductReviews(ctx context.Context, accountID string, f reviewdb.ProductReviewFilter, p pg.Page) ([]reviewdb.ProductReview, *pg.Cursor, error)
	ReviewAggregate(ctx context.Context, accountID string) (review.Aggregate, error)
	ProductAggregate(ctx context.Context, accountID string, k review.ProductKey) (review.Aggregate, error)
}

// Handler serves the routes of the reviews. Its methods are the handlers
// of the routes the API mounts.
type Handler struct {
	api   apiwire.API
	store Store
}

// New builds the handlers on the API that mounts them and on st.
func New(api apiwire.API, st Store) *Handler { return &Handler{api: api, store: st} }

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

// List is GET /reviews: the account's reviews, newest first, filtered.
func (h *Handler) List(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "eventTypeId", "channelId", "rating", "minRating", "status", "createdFrom", "createdTo")
	f := reviewdb.ReviewFilter{EventTypeID: q.ID("eventTypeId", "ety"), ChannelID: q.ID("channelId", "chl"),
		Rating: q.Rating("rating"), MinRating: q.Rating("minRating"), Status: status(q, "status"),
		CreatedFrom: optTimestamp(q, "createdFrom"), CreatedTo: optTimestamp(q, "createdTo")}
	p := q.Page("rev")
	if err := q.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	rs, next, err := h.store.ListReviews(r.Context(), h.api.AccountID(r), f, p)
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(rs, next, reviewOut))
}

// Get is GET /reviews/{id}: one review with its product reviews.
func (h *Handler) Get(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "rev", "review")
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	rev, err := h.store.Review(r.Context(), h.api.AccountID(r), id)
	if err != nil {
		h.api.Fail(w, r, apiwire.About("review", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, reviewOut(rev))
}

// Summary is GET /reviews/summary: the account's public shop
// ratings, from the row kept with every change.
func (h *Handler) Summary(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r)
	q.NoPage()
	if err := q.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	a, err := h.store.ReviewAggregate(r.Context(), h.api.AccountID(r))
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, a.Summary())
}

// ListProductReviews is GET /product-reviews: the account's product
// reviews, filtered.
func (h *Handler) ListProductReviews(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "sku", "gtin", "mpn", "minRating", "status", "createdFrom", "createdTo")
	f := reviewdb.ProductReviewFilter{SKU: q.ProductKey("sku"), GTIN: q.ProductKey("gtin"), MPN: q.ProductKey("mpn"),
		MinRating: q.Rating("minRating"), Status: status(q, "status"),
		CreatedFrom: optTimestamp(q, "createdFrom"), CreatedTo: optTimestamp(q, "createdTo")}
	p := q.Page("prv")
	if err := q.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	ps, next, err := h.store.ListProductReviews(r.Context(), h.api.AccountID(r), f, p)
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(ps, next, productReviewOut))
}

// GetProductReview is GET /product-reviews/{id}.
func (h *Handler) GetProductReview(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "prv", "product review")
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	p, err := h.store.ProductReview(r.Context(), h.api.AccountID(r), id)
	if err != nil {
		h.api.Fail(w, r, apiwire.About("product review", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, productReviewOut(p))
}

// ProductSummary is GET /products/summary?sku=|gtin=|mpn=: the public
// ratings of one product, from the row kept with every change. A product
// nobody has rated yet has count 0.
func (h *Handler) ProductSummary(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "sku", "gtin", "mpn")
	q.NoPage()
	key := q.OneProductKey()
	if err := q.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	a, err := h.store.ProductAggregate(r.Context(), h.api.AccountID(r), key)
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, a.Summary())
}

// reportIn is POST /reviews/{id}/report.
type reportIn struct {
	Reason review.Reason `json:"reason" required:"true"`
	Note   *string       `json:"note"`
}

// Report is POST /reviews/{id}/report: the shop asks the operator
// to look at a review. It stays public until the operator decides, unless
// the reason is personal data (see review.Moderation.Report). 200 with the
// review; 409 when the operator has removed it, or has published it after
// a report and it has not changed since.
func (h *Handler) Report(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "rev", "review")
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	var in reportIn
	if err := h.api.DecodeJSON(w, r, &in); err != nil {
		h.api.Fail(w, r, err)
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
		h.api.Fail(w, r, err)
		return
	}
	rev, _, err := h.store.ReportReview(r.Context(), h.api.AccountID(r), id, in.Reason, note, h.api.ClientID(r))
	switch {
	case errors.Is(err, review.ErrRemoved):
		h.api.Fail(w, r, apiwire.Errorf(http.StatusConflict, "the operator has removed this review; there is nothing left to report"))
		return
	case errors.Is(err, review.ErrSettled):
		h.api.Fail(w, r, apiwire.Errorf(http.StatusConflict, "the operator has looked at this review after a report and kept it "+
			"published; it can be reported again once the customer changes it"))
		return
	case err != nil:
		h.api.Fail(w, r, apiwire.About("review", "", err))
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

// History is GET /reviews/{id}/history: every change of the review,
// newest first.
func (h *Handler) History(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "rev", "review")
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	q := apiquery.Parse(r)
	p := q.PageOf(func(id string) bool { n, err := strconv.ParseInt(id, 10, 64); return err == nil && n > 0 })
	if err := q.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	hs, next, err := h.store.ReviewHistory(r.Context(), h.api.AccountID(r), id, p)
	if err != nil {
		h.api.Fail(w, r, apiwire.About("review", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(hs, next, historyOut))
}

// replyIn is PUT /reviews/{id}/reply.
type replyIn struct {
	Text string `json:"text" required:"true"`
}

// PutReply is PUT /reviews/{id}/reply: sets or replaces the shop's public
// reply; 200 with the reply.
func (h *Handler) PutReply(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "rev", "review")
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	var in replyIn
	if err := h.api.DecodeJSON(w, r, &in); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	reply := text.Clean(text.Multiline, in.Text)
	var errs apiwire.Invalid
	errs.Check("text", textProblem(reply, true))
	if err := errs.Err(); err != nil {
		h.api.Fail(w, r, err)
		return
	}
	rev, _, err := h.store.SetReply(r.Context(), h.api.AccountID(r), id, reply, h.api.ClientID(r))
	if err != nil {
		h.api.Fail(w, r, apiwire.About("review", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, replyOut(rev))
}

// DeleteReply is DELETE /reviews/{id}/reply: 204, or 404 when there is no
// reply.
func (h *Handler) DeleteReply(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "rev", "review")
	if err != nil {
		h.api.Fail(w, r, err)
		return
	}
	err = h.store.DeleteReply(r.Context(), h.api.AccountID(r), id, h.api.ClientID(r))
	switch {
	case errors.Is(err, reviewdb.ErrNoReply):
		h.api.Fail(w, r, apiwire.Errorf(http.StatusNotFound, "the review has no reply"))
		return
	case err != nil:
		h.api.Fail(w, r, apiwire.About("review", "", err))
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
func status(q *apiquery.Query, name string) review.Status {
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
func optTimestamp(q *apiquery.Query, name string) *time.Time {
	if t := q.Time(name); !t.IsZero() {
		return &t
	}
	return nil
}
