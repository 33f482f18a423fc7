// Package publicapi serves the public endpoints of an account's reviews
// (/public/…): the JSON list and the product's, the JSON-LD of the
// account and of a product, the widget, Google's Product Reviews Feed,
// the JWKS of the account's publication keys and the verify page of a
// review. No token, readable from any site (CORS *), cached by anyone for
// five minutes, with a strong ETag. What they show, and how, is package
// publication's; these handlers read the rows, hand them over and write
// the answer. The API mounts them on the routes of its route table,
// behind its per-address limit and the CORS headers.
package publicapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/pages"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// The headers every public answer carries.
const (
	publicCacheControl = "public, max-age=300"
	// feedBatch is how many product reviews the feed reads at a time.
	feedBatch = 1000
	// feedWriteIdle is how long the feed may wait for its reader on each
	// write. The server's WriteTimeout (30 s) bounds a whole answer, and
	// a feed of a million reviews takes longer than that to stream: its
	// deadline moves on with every write instead, so a feed that keeps
	// going is never cut, and a reader that stops reading still is.
	feedWriteIdle = 30 * time.Second
)

// retryAfter is the Retry-After of a 503 page, in seconds: the API's.
const retryAfter = 5

// Store is what the public endpoints read of the reviews: only public
// rows, and the aggregates.
type Store interface {
	ReviewAggregate(ctx context.Context, accountID string) (review.Aggregate, error)
	PublicReviews(ctx context.Context, accountID string, f reviewdb.PublicReviewFilter, p pg.Page) ([]reviewdb.PublicReview, *pg.Cursor, error)
	PublicReviewByID(ctx context.Context, id string) (reviewdb.PublicReview, error)
	ProductAggregate(ctx context.Context, accountID string, k review.ProductKey) (review.Aggregate, error)
	PublicProductReviews(ctx context.Context, accountID string, k review.ProductKey, p pg.Page) ([]reviewdb.PublicProductReview, *pg.Cursor, error)
	PublicationVersion(ctx context.Context, accountID string) (int64, error)
	EachPublicProductReview(ctx context.Context, accountID string, batch int, fn func(reviewdb.FeedItem) error) error
}

// AccountStore is what the public endpoints read of an account.
type AccountStore interface {
	Account(ctx context.Context, id string) (accountdb.Account, error)
}

// Options are the handlers' dependencies.
type Options struct {
	Reviews  Store        // required
	Accounts AccountStore // required
	// Keys sign the proofs of public reviews and publish the accounts'
	// keys. Required.
	Keys *publication.Keys
	// BaseURL is the API's public address (TOUCHPOINT_BASE_URL), from
	// which the answers make absolute links (the feed's review URLs, the
	// widget's links). Empty: the origin of FeedbackLinks.
	BaseURL       string
	FeedbackLinks interface{ URL(eventID string) string }
	// Fail answers the error of a JSON endpoint as the API answers every
	// error: a refused query (*apiquery.Error) as a 400 naming its
	// parameters, an error with an HTTPStatus method with that status and
	// its text, anything else as a failure whose text the caller never
	// sees. Required.
	Fail func(w http.ResponseWriter, r *http.Request, err error)
	// Report is given the internal error behind a 5xx page, or behind a
	// feed cut off after its first byte, for the request's log line; the
	// reader never sees it. Optional.
	Report func(r *http.Request, err error)
}

// Handler serves the public endpoints. Its methods are the handlers of
// the routes the API mounts.
type Handler struct {
	o          Options
	base       string       // the origin the answers link to
	errorPages *pages.Pages // the widget's and the verify page's errors
}

// New builds the handlers, with the error pages of the widget and the
// verify page. It panics without Reviews, Accounts, Keys or Fail, which is
// a wiring mistake.
func New(o Options) (*Handler, error) {
	if o.Reviews == nil || o.Accounts == nil || o.Keys == nil || o.Fail == nil {
		panic("publicapi.New: Reviews, Accounts, Keys and Fail are required")
	}
	if o.Report == nil {
		o.Report = func(*http.Request, error) {}
	}
	p, err := pages.New()
	if err != nil {
		return nil, err
	}
	return &Handler{o: o, base: publicBase(o.BaseURL, o.FeedbackLinks), errorPages: p}, nil
}

// notFound is a 404 whose text the reader may see: the API answers it
// with its status (HTTPStatus) and text.
type notFound string

func (e notFound) Error() string { return string(e) }

// HTTPStatus is the status of the answer.
func (notFound) HTTPStatus() int { return http.StatusNotFound }

// TooManyRequests is the 429 page of an HTML endpoint (the widget, the
// verify page) asked for by an address over its limit, with Retry-After
// in whole seconds (at least 1).
func (h *Handler) TooManyRequests(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(wait.Seconds()+0.999))))
	h.errorPages.Unavailable(w, http.StatusTooManyRequests, publication.AcceptLanguage(r.Header.Get("Accept-Language")))
}

// MethodNotAllowed is the 405 page of a method that no route of an HTML
// endpoint answers, in the reader's language, with Allow listing those
// that do.
func (h *Handler) MethodNotAllowed(w http.ResponseWriter, r *http.Request, allow []string) {
	lang := apiquery.Parse(r, "locale").Locale("locale")
	if lang == "" {
		lang = publication.AcceptLanguage(r.Header.Get("Accept-Language"))
		w.Header().Set("Vary", "Accept-Language")
	}
	h.errorPages.MethodNotAllowed(w, publication.Pick(lang), allow)
}

// notModified reports whether the request's If-None-Match names etag (or
// "*"); GET compares weakly, so W/"x" matches "x" (RFC 9110 §13.1.2).
func notModified(r *http.Request, etag string) bool {
	for _, v := range r.Header.Values("If-None-Match") {
		for _, tag := range strings.Split(v, ",") {
			tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
			if tag == "*" || tag == etag {
				return true
			}
		}
	}
	return false
}

// writePublic answers a public GET with body, its strong ETag and the
// public cache headers, or 304 when the client has it already.
func writePublic(w http.ResponseWriter, r *http.Request, contentType string, body []byte) {
	etag := publication.ETag(body) // changes with the bytes, whatever rendered them
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", publicCacheControl)
	if notModified(r, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body) // a failed write means the client is gone
}

// writePublicJSON is writePublic of v as JSON.
func (h *Handler) writePublicJSON(w http.ResponseWriter, r *http.Request, contentType string, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// JSON-LD keeps encoding/json's HTML escaping (it may be pasted into a
	// <script> element); the plain JSON answers write text as it is, like
	// the rest of the API.
	enc.SetEscapeHTML(contentType == publication.ContentTypeJSONLD)
	if err := enc.Encode(v); err != nil {
		h.o.Fail(w, r, err)
		return
	}
	writePublic(w, r, contentType, b.Bytes())
}

// publicAccount reads the account of the path's {acc} (404 when it is
// none), once q, the request's query, has been found good.
func (h *Handler) publicAccount(r *http.Request, q *apiquery.Query) (accountdb.Account, error) {
	if err := q.Err(); err != nil {
		return accountdb.Account{}, err
	}
	return h.accountByID(r, mux.Vars(r)["acc"])
}

func (h *Handler) accountByID(r *http.Request, id string) (accountdb.Account, error) {
	if !pg.ValidID("acc", id) {
		return accountdb.Account{}, notFound("account not found")
	}
	a, err := h.o.Accounts.Account(r.Context(), id)
	if errors.Is(err, pg.ErrNotFound) {
		return accountdb.Account{}, notFound("account not found")
	}
	if err != nil {
		return accountdb.Account{}, err
	}
	return a, nil
}

// shown is what a public view of an account or of a product shows: the
// account, the aggregate of the account or of the product, and a page of
// public reviews (R is reviewdb.PublicReview or
// reviewdb.PublicProductReview).
type shown[R any] struct {
	account   accountdb.Account
	aggregate review.Aggregate
	reviews   []R
	next      *pg.Cursor
}

// accountReviews reads what every public view of account a shows.
func (h *Handler) accountReviews(ctx context.Context, a accountdb.Account, f reviewdb.PublicReviewFilter, p pg.Page) (
	shown[reviewdb.PublicReview], error) {
	agg, err := h.o.Reviews.ReviewAggregate(ctx, a.ID)
	if err != nil {
		return shown[reviewdb.PublicReview]{}, err
	}
	rs, next, err := h.o.Reviews.PublicReviews(ctx, a.ID, f, p)
	return shown[reviewdb.PublicReview]{account: a, aggregate: agg, reviews: rs, next: next}, err
}

// productReviews reads what every public view of account a's product k
// shows.
func (h *Handler) productReviews(ctx context.Context, a accountdb.Account, k review.ProductKey, p pg.Page) (
	shown[reviewdb.PublicProductReview], error) {
	agg, err := h.o.Reviews.ProductAggregate(ctx, a.ID, k)
	if err != nil {
		return shown[reviewdb.PublicProductReview]{}, err
	}
	ps, next, err := h.o.Reviews.PublicProductReviews(ctx, a.ID, k, p)
	return shown[reviewdb.PublicProductReview]{account: a, aggregate: agg, reviews: ps, next: next}, err
}

// publicAccountReviews is accountReviews of the path's {acc}, once q, the
// request's query, has been found good.
func (h *Handler) publicAccountReviews(r *http.Request, q *apiquery.Query, f reviewdb.PublicReviewFilter, p pg.Page) (
	shown[reviewdb.PublicReview], error) {
	a, err := h.publicAccount(r, q)
	if err != nil {
		return shown[reviewdb.PublicReview]{}, err
	}
	return h.accountReviews(r.Context(), a, f, p)
}

// answer writes v as the public JSON answer of an endpoint, or err, the
// reason there is none, through Fail.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, contentType string, v any, err error) {
	if err != nil {
		h.o.Fail(w, r, err)
		return
	}
	h.writePublicJSON(w, r, contentType, v)
}

// publicURL is the absolute address of a public path.
func (h *Handler) publicURL(path string) string { return h.base + path }

func (h *Handler) verifyURL(reviewID string) string {
	return h.publicURL("/public/reviews/" + url.PathEscape(reviewID) + "/verify")
}

// Reviews is GET /public/accounts/{acc}/reviews: the account's public
// reviews, newest first, with the aggregate and a proof each.
func (h *Handler) Reviews(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "locale", "minRating")
	f := reviewdb.PublicReviewFilter{Locale: q.Locale("locale"), MinRating: q.Rating("minRating")}
	s, err := h.publicAccountReviews(r, q, f, q.Page("rev"))
	if err != nil {
		h.o.Fail(w, r, err)
		return
	}
	list, err := h.o.Keys.ListOf(r.Context(), s.account, s.aggregate, s.reviews, s.next)
	h.answer(w, r, "application/json", list, err)
}

// AccountJSONLD is GET /public/accounts/{acc}/reviews.jsonld.
func (h *Handler) AccountJSONLD(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r)
	q.NoPage()
	s, err := h.publicAccountReviews(r, q, reviewdb.PublicReviewFilter{MinRating: review.MinRating},
		pg.Page{Limit: publication.LatestInJSONLD})
	if err != nil {
		h.o.Fail(w, r, err)
		return
	}
	h.writePublicJSON(w, r, publication.ContentTypeJSONLD, publication.OrganizationOf(s.account, s.aggregate, s.reviews))
}

// publicProductReviews reads ?account=&sku=|gtin=|mpn= and what a public
// view of that product shows: a page of its reviews (of the query's page
// for a list, else the latest for its JSON-LD).
func (h *Handler) publicProductReviews(r *http.Request, list bool) (review.ProductKey, shown[reviewdb.PublicProductReview], error) {
	q := apiquery.Parse(r, "account", "sku", "gtin", "mpn")
	if !list {
		q.NoPage()
	}
	key := q.OneProductKey()
	acc := q.Get("account")
	if acc == "" && q.Err() == nil {
		q.Fail("account", "is required: the id of the account whose reviews to show")
	}
	p := q.Page("prv")
	if err := q.Err(); err != nil {
		return key, shown[reviewdb.PublicProductReview]{}, err
	}
	a, err := h.accountByID(r, acc)
	if err != nil {
		return key, shown[reviewdb.PublicProductReview]{}, err
	}
	if !list {
		p = pg.Page{Limit: publication.LatestInJSONLD}
	}
	s, err := h.productReviews(r.Context(), a, key, p)
	return key, s, err
}

// ProductReviews is GET /public/products/reviews: one product's public
// reviews with its aggregate.
func (h *Handler) ProductReviews(w http.ResponseWriter, r *http.Request) {
	_, s, err := h.publicProductReviews(r, true)
	if err != nil {
		h.o.Fail(w, r, err)
		return
	}
	list, err := h.o.Keys.ProductListOf(r.Context(), s.account, s.aggregate, s.reviews, s.next)
	h.answer(w, r, "application/json", list, err)
}

// ProductJSONLD is GET /public/products/reviews.jsonld.
func (h *Handler) ProductJSONLD(w http.ResponseWriter, r *http.Request) {
	k, s, err := h.publicProductReviews(r, false)
	if err != nil {
		h.o.Fail(w, r, err)
		return
	}
	ld, err := publication.ProductOf(k, s.aggregate, s.reviews)
	if errors.Is(err, publication.ErrNotReviewed) {
		err = notFound("no public review of this product")
	}
	h.answer(w, r, publication.ContentTypeJSONLD, ld, err)
}

// JWKS is GET /public/accounts/{acc}/jwks.json: every publication key
// the account ever had, newest first.
func (h *Handler) JWKS(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r)
	q.NoPage()
	a, err := h.publicAccount(r, q)
	if err != nil {
		h.o.Fail(w, r, err)
		return
	}
	set, err := h.o.Keys.JWKS(r.Context(), a.ID)
	h.answer(w, r, "application/jwk-set+json", set, err)
}

// Widget is GET /public/accounts/{acc}/widget: the HTML widget for an
// iframe — the latest reviews (of one product with ?sku=) — or, with
// ?view=all, every review a page at a time.
func (h *Handler) Widget(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "locale", "theme", "sku", "view")
	lang := q.Locale("locale")
	if lang == "" {
		lang = publication.AcceptLanguage(r.Header.Get("Accept-Language"))
		w.Header().Set("Vary", "Accept-Language")
	}
	theme := q.Get("theme")
	if theme != "" && theme != publication.ThemeLight && theme != publication.ThemeDark {
		q.Fail("theme", `must be "light" or "dark"`)
	}
	sku := q.ProductKey("sku")
	all := false
	switch q.Get("view") {
	case "":
	case "all":
		all = true
	default:
		q.Fail("view", `must be "all"`)
	}
	p := q.Page("rev")
	if err := q.Err(); err != nil {
		h.errorPages.BadRequest(w, publication.Pick(lang))
		return
	}
	a, err := h.accountByID(r, mux.Vars(r)["acc"])
	if err != nil {
		h.pageError(w, r, publication.Pick(lang), err)
		return
	}
	if !all {
		p = pg.Page{Limit: publication.LatestInWidget}
	} else if r.URL.Query().Get("limit") == "" {
		p.Limit = publication.AllPerPage
	}
	v := publication.Widget{Locale: lang, Theme: theme, Account: a, VerifyURL: h.verifyURL}
	var next *pg.Cursor
	if sku != "" {
		k := review.ProductKey{Kind: review.SKU, Value: sku}
		s, err := h.productReviews(r.Context(), a, k, pg.Page{Limit: publication.LatestInWidget})
		if err != nil {
			h.pageError(w, r, publication.Pick(lang), err)
			return
		}
		v.Aggregate = s.aggregate
		for _, pr := range s.reviews {
			v.Reviews = append(v.Reviews, pr.Review)
		}
	} else {
		s, err := h.accountReviews(r.Context(), a, reviewdb.PublicReviewFilter{}, p)
		if err != nil {
			h.pageError(w, r, publication.Pick(lang), err)
			return
		}
		v.Aggregate, v.Reviews, next = s.aggregate, s.reviews, s.next
	}
	base := "/public/accounts/" + url.PathEscape(a.ID) + "/widget"
	params := url.Values{"locale": {lang}}
	if theme != "" {
		params.Set("theme", theme)
	}
	switch {
	case !all && sku == "":
		params.Set("view", "all")
		v.AllURL = h.publicURL(base + "?" + params.Encode())
	case all && next != nil:
		params.Set("view", "all")
		params.Set("cursor", next.Encode())
		v.NextURL = h.publicURL(base + "?" + params.Encode())
	}
	body, err := v.Render()
	if err != nil {
		h.pageError(w, r, publication.Pick(lang), err)
		return
	}
	w.Header().Set("Content-Security-Policy", publication.WidgetCSP)
	w.Header().Set("Referrer-Policy", "strict-origin-when-cross-origin")
	writePublic(w, r, publication.ContentTypeHTML, body)
}

// Feed is GET /public/accounts/{acc}/feeds/google-product-reviews.xml:
// Google's Product Reviews Feed of every public product review, streamed.
// Its strong ETag is made of the account's publication version, read
// before the reviews, and the feed renderer's version
// (publication.FeedETag), so it is known before the first byte.
func (h *Handler) Feed(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r)
	q.NoPage()
	a, err := h.publicAccount(r, q)
	if err != nil {
		h.o.Fail(w, r, err)
		return
	}
	version, err := h.o.Reviews.PublicationVersion(r.Context(), a.ID)
	if err != nil {
		h.o.Fail(w, r, err)
		return
	}
	etag := publication.FeedETag(h.base, a.ID, version)
	hd := w.Header()
	hd.Set("ETag", etag)
	hd.Set("Cache-Control", publicCacheControl)
	if notModified(r, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", publication.ContentTypeXML)
	hd.Set("X-Content-Type-Options", "nosniff")
	feed := publication.Feed{Account: a, ReviewURL: h.verifyURL}
	started := false
	err = feed.Write(&startWriter{w: w, rc: http.NewResponseController(w), started: &started}, func(fn func(reviewdb.FeedItem) error) error {
		return h.o.Reviews.EachPublicProductReview(r.Context(), a.ID, feedBatch, fn)
	})
	if err != nil {
		if !started {
			hd.Del("ETag")
			hd.Del("Cache-Control")
			h.o.Fail(w, r, err)
			return
		}
		// The status is out: the document stays unfinished, which any
		// XML parser refuses. Record why.
		h.o.Report(r, err)
	}
}

// startWriter notes when the first byte went out, and gives each write
// feedWriteIdle from its start.
type startWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started *bool
}

func (s *startWriter) Write(p []byte) (int, error) {
	*s.started = true
	if err := s.rc.SetWriteDeadline(time.Now().Add(feedWriteIdle)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return 0, err
	}
	return s.w.Write(p)
}

// VerifyPage is GET /public/reviews/{id}/verify: in the reader's
// language, what the review's proof states; with ?proof=, whether that
// proof is valid and still matches the review.
func (h *Handler) VerifyPage(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "locale", "proof")
	q.NoPage()
	lang := q.Locale("locale")
	if lang == "" {
		lang = publication.AcceptLanguage(r.Header.Get("Accept-Language"))
		w.Header().Set("Vary", "Accept-Language")
	}
	brought := q.Get("proof")
	if err := q.Err(); err != nil {
		h.errorPages.BadRequest(w, publication.Pick(lang))
		return
	}
	id := mux.Vars(r)["id"]
	if !pg.ValidID("rev", id) {
		h.errorPages.NotFound(w, publication.Pick(lang))
		return
	}
	body, err := h.verifyPage(r.Context(), lang, id, brought)
	if err != nil {
		h.pageError(w, r, lang, err)
		return
	}
	w.Header().Set("Content-Security-Policy", publication.VerifyCSP)
	w.Header().Set("Referrer-Policy", "no-referrer")
	writePublic(w, r, publication.ContentTypeHTML, body)
}

// verifyPage renders the verify page of review id in lang, checking the
// proof brought when there is one.
func (h *Handler) verifyPage(ctx context.Context, lang, id, brought string) ([]byte, error) {
	rev, err := h.o.Reviews.PublicReviewByID(ctx, id)
	if err != nil {
		return nil, err
	}
	a, err := h.o.Accounts.Account(ctx, rev.AccountID)
	if err != nil {
		return nil, err
	}
	proof, err := h.o.Keys.Sign(ctx, rev)
	if err != nil {
		return nil, err
	}
	_, kid, err := h.o.Keys.Verify(ctx, rev.AccountID, proof)
	if err != nil {
		return nil, err
	}
	v := publication.VerifyPage{Locale: lang, Account: a, Review: rev, Proof: proof, KID: kid,
		JWKSURL: h.publicURL("/public/accounts/" + url.PathEscape(a.ID) + "/jwks.json"), VerifyURL: h.verifyURL(rev.ID)}
	if brought != "" {
		if v.Brought, err = h.o.Keys.Check(ctx, rev, brought); err != nil {
			return nil, err
		}
	}
	return v.Render()
}

// pageError answers a failure of the widget or the verify page with an
// HTML page: 404 for a review that is not public (or none), 503 when the
// database is away, else 500; the real error is reported.
func (h *Handler) pageError(w http.ResponseWriter, r *http.Request, lang string, err error) {
	var nf notFound
	switch {
	case errors.Is(err, pg.ErrNotFound), errors.As(err, &nf):
		h.errorPages.NotFound(w, lang)
	case errors.Is(err, pg.ErrUnavailable):
		h.o.Report(r, err)
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		h.errorPages.Unavailable(w, http.StatusServiceUnavailable, lang)
	default:
		h.o.Report(r, err)
		h.errorPages.Unavailable(w, http.StatusInternalServerError, lang)
	}
}

// publicBase is the origin the public endpoints link to: base, else the
// feedback links' origin.
func publicBase(base string, feedback interface{ URL(string) string }) string {
	if base != "" {
		return strings.TrimRight(base, "/")
	}
	u, err := url.Parse(feedback.URL("x"))
	if err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
