package console

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/text"
)

// reviewPages are the pages of the reviews and their replies and reports.
type reviewPages struct{ *Handler }

// The shop's reviews: the list with its filters, a review's page with its
// products, history and proof, and the forms that answer and report it.
// What a reply may hold, what a report does and who may see a review are
// package review's rules; these handlers read, ask and show.

// pageSize is the length of every list of the console.
const pageSize = 25

// reviewFilters is the filter form of the list, as typed.
type reviewFilters struct {
	Rating, MaxRating, Status, Product, From, To, Answered string
}

// query is the filters as a query string, for the next page's link.
func (f reviewFilters) query() url.Values {
	q := url.Values{}
	for k, v := range map[string]string{"rating": f.Rating, "maxRating": f.MaxRating, "status": f.Status, "product": f.Product,
		"from": f.From, "to": f.To, "answered": f.Answered} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

type reviewsView struct {
	Filters  reviewFilters
	Errors   fieldErrors
	Reviews  []reviewdb.Review
	Next     string // the next page's address, "" on the last page
	Filtered bool
	Statuses []review.Status
}

// readFilters reads the list's query into a store filter; each value it
// cannot read is an error on its field, in the reader's language.
func readFilters(q url.Values, t func(string, ...any) string) (reviewFilters, reviewdb.ReviewFilter, fieldErrors) {
	in := reviewFilters{Rating: q.Get("rating"), MaxRating: q.Get("maxRating"), Status: q.Get("status"), Product: q.Get("product"),
		From: q.Get("from"), To: q.Get("to"), Answered: q.Get("answered")}
	var f reviewdb.ReviewFilter
	var errs fieldErrors
	rating := func(field, v string) int {
		if v == "" {
			return 0
		}
		n, ok := formInt(v)
		if !ok || !review.ValidRating(n) {
			errs.add(field, t("error_rating"))
			return 0
		}
		return n
	}
	f.Rating, f.MaxRating = rating("rating", in.Rating), rating("maxRating", in.MaxRating)
	if in.Status != "" {
		if s := review.Status(in.Status); s.Valid() {
			f.Status = s
		} else {
			errs.add("status", t("error_choice"))
		}
	}
	f.Product = strings.TrimSpace(in.Product)
	if text.Check(text.Identifier, f.Product) != nil {
		errs.add("product", t("error_identifier"))
	}
	day := func(field, v string, next bool) *time.Time {
		if v == "" {
			return nil
		}
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			errs.add(field, t("error_date"))
			return nil
		}
		if next { // "to" includes its day
			d = d.AddDate(0, 0, 1)
		}
		return &d
	}
	f.CreatedFrom, f.CreatedTo = day("from", in.From, false), day("to", in.To, true)
	switch in.Answered {
	case "":
	case "yes", "no":
		a := in.Answered == "yes"
		f.Answered = &a
	default:
		errs.add("answered", t("error_choice"))
	}
	return in, f, errs
}

func (h reviewPages) reviews(w http.ResponseWriter, r *http.Request, p Person) {
	q := r.URL.Query()
	in, f, errs := readFilters(q, h.translator(r))
	v := reviewsView{Filters: in, Errors: errs, Statuses: review.Statuses(), Filtered: len(in.query()) > 0}
	page, ok := readPage(q)
	if !ok {
		h.notFound(w, r)
		return
	}
	if len(errs) > 0 {
		h.render(w, r, http.StatusBadRequest, "reviews", "reviews_title", "reviews", v)
		return
	}
	rs, next, err := h.opts.Reviews.ListReviews(r.Context(), p.AccountID, f, page)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v.Reviews = rs
	if next != nil {
		nq := in.query()
		nq.Set("cursor", next.Encode())
		v.Next = strings.TrimSuffix(Prefix, "/") + "/reviews?" + nq.Encode()
	}
	h.render(w, r, http.StatusOK, "reviews", "reviews_title", "reviews", v)
}

// readPage reads ?cursor= of a list; ok is false for a cursor that is
// not one of ours.
func readPage(q url.Values) (store.Page, bool) {
	p := store.Page{Limit: pageSize}
	if c := q.Get("cursor"); c != "" {
		cur, err := store.DecodeCursor(c)
		if err != nil {
			return p, false
		}
		p.After = &cur
	}
	return p, true
}

type reviewView struct {
	Review    reviewdb.Review
	Author    string
	History   []historyRow
	VerifyURL string // the public verify page; "" while the review is not public
	Reasons   []review.Reason
	// The forms, as typed when one was refused.
	Reply        string
	ReplyError   string
	Reason       string
	Note         string
	ReportErrors fieldErrors
	// CanReply and CanReport show the forms to those who may use them
	// (the server checks again on every post).
	CanReply, CanReport bool
}

// historyRow is one change of a review, with who made it.
type historyRow struct {
	reviewdb.HistoryEntry
	By string // a person's address, "customer", "operator" or a client's id
}

func (h reviewPages) loadReview(w http.ResponseWriter, r *http.Request, p Person) (reviewView, bool) {
	id := r.PathValue("id")
	if !store.ValidID("rev", id) {
		h.notFound(w, r)
		return reviewView{}, false
	}
	rev, err := h.opts.Reviews.Review(r.Context(), p.AccountID, id)
	if errors.Is(err, store.ErrNotFound) {
		err = errNotFound
	}
	if err != nil {
		h.fail(w, r, err)
		return reviewView{}, false
	}
	hs, _, err := h.opts.Reviews.ReviewHistory(r.Context(), p.AccountID, id, store.Page{Limit: 100})
	if err != nil {
		h.fail(w, r, err)
		return reviewView{}, false
	}
	v := reviewView{Review: rev, Reasons: review.Reasons(), Reply: rev.ReplyText,
		CanReply: h.opts.Allows(p.Role, ReplyReview), CanReport: h.opts.Allows(p.Role, ReportReview)}
	v.Author = rev.Author(h.views.Language(p.Language, r))
	if rev.Public {
		v.VerifyURL = h.base + "/public/reviews/" + rev.ID + "/verify"
	}
	actors := make([]string, len(hs))
	for i, e := range hs {
		actors[i] = e.Actor
	}
	names := h.actorNames(r, p, actors)
	for _, e := range hs {
		v.History = append(v.History, historyRow{HistoryEntry: e, By: names[e.Actor]})
	}
	return v, true
}

func (h reviewPages) review(w http.ResponseWriter, r *http.Request, p Person) {
	v, ok := h.loadReview(w, r, p)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, "review", "review_title", "reviews", v)
}

// putReply writes or changes the shop's public reply from the form's
// textarea "text".
func (h reviewPages) putReply(w http.ResponseWriter, r *http.Request, p Person) {
	v, ok := h.loadReview(w, r, p)
	if !ok {
		return
	}
	reply := text.Clean(text.Multiline, r.PostForm.Get("text"))
	if err := review.CheckText(reply, true); err != nil {
		v.Reply, v.ReplyError = r.PostForm.Get("text"), h.textError(r, err)
		h.render(w, r, http.StatusBadRequest, "review", "review_title", "reviews", v)
		return
	}
	if _, _, err := h.opts.Reviews.SetReply(r.Context(), p.AccountID, v.Review.ID, reply, p.ID); err != nil {
		h.fail(w, r, notFound(err))
		return
	}
	h.seeOther(w, r, "/reviews/"+v.Review.ID, "reply_saved")
}

func (h reviewPages) deleteReply(w http.ResponseWriter, r *http.Request, p Person) {
	id := r.PathValue("id")
	if !store.ValidID("rev", id) {
		h.notFound(w, r)
		return
	}
	err := h.opts.Reviews.DeleteReply(r.Context(), p.AccountID, id, p.ID)
	if err != nil && !errors.Is(err, reviewdb.ErrNoReply) { // gone already: done
		h.fail(w, r, notFound(err))
		return
	}
	h.seeOther(w, r, "/reviews/"+id, "reply_deleted")
}

// reportReview asks the operator to look at the review, for a reason and
// with an optional note.
func (h reviewPages) reportReview(w http.ResponseWriter, r *http.Request, p Person) {
	v, ok := h.loadReview(w, r, p)
	if !ok {
		return
	}
	t := h.translator(r)
	v.Reason, v.Note = r.PostForm.Get("reason"), r.PostForm.Get("note")
	reason := review.Reason(v.Reason)
	if !reason.Valid() {
		v.ReportErrors.add("reason-"+string(review.Reasons()[0]), t("error_reason"))
	}
	note := text.Clean(text.Multiline, v.Note)
	if err := review.CheckText(note, false); err != nil {
		v.ReportErrors.add("note", h.textError(r, err))
	}
	if len(v.ReportErrors) == 0 {
		_, _, err := h.opts.Reviews.ReportReview(r.Context(), p.AccountID, v.Review.ID, reason, note, p.ID)
		switch {
		case errors.Is(err, review.ErrRemoved):
			v.ReportErrors.add("reason-"+string(review.Reasons()[0]), t("error_report_removed"))
		case errors.Is(err, review.ErrSettled):
			v.ReportErrors.add("reason-"+string(review.Reasons()[0]), t("error_report_settled"))
		case err != nil:
			h.fail(w, r, notFound(err))
			return
		default:
			h.seeOther(w, r, "/reviews/"+v.Review.ID, "reported")
			return
		}
	}
	h.render(w, r, http.StatusBadRequest, "review", "review_title", "reviews", v)
}

// textError words review.CheckText's error in the reader's language.
func (h reviewPages) textError(r *http.Request, err error) string {
	t := h.translator(r)
	if errors.Is(err, review.ErrTextEmpty) {
		return t("error_required")
	}
	return t("error_too_long", "max", strconv.Itoa(review.MaxText))
}

// notFound turns the store's ErrNotFound into the console's 404.
func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errNotFound
	}
	return err
}
