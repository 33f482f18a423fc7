package apiserver

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

	"github.com/touchpoint/touchpoint/pages"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

// The public endpoints of an account's reviews: no token, readable from
// any site (CORS *), cached by anyone for five minutes, with a strong
// ETag. What they show, and how, is package publication's; these handlers
// read the rows, hand them over and write the answer.

// Per-address limits of the public endpoints: a shop's pages load the
// widget or the JSON once per visitor, and browsers and CDNs cache it, so
// an address asking for more than this is a scraper.
const (
	publicReadRatePerSecond = 10
	publicReadBurst         = 100
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

// guardPublic limits a public endpoint per client address (as the
// customer pages are, through trusted proxies) and sets the CORS header
// on every answer, errors too, so a page of another site can read them;
// on https, Strict-Transport-Security too, as on the customer pages.
func (s *server) guardPublic(w http.ResponseWriter, r *http.Request, html bool, handle http.HandlerFunc) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Expose-Headers", "ETag")
	if s.hsts {
		pages.SetHSTS(w.Header())
	}
	if ok, wait := s.publicReadLimits.allow(r, s.now()); !ok {
		if html {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(wait.Seconds()+0.999))))
			s.errorPages.Unavailable(w, http.StatusTooManyRequests, publication.AcceptLanguage(r.Header.Get("Accept-Language")))
			return
		}
		s.fail(w, r, tooManyRequests(wait))
		return
	}
	handle(w, r)
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
func (s *server) writePublicJSON(w http.ResponseWriter, r *http.Request, contentType string, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// JSON-LD keeps encoding/json's HTML escaping (it may be pasted into a
	// <script> element); the plain JSON answers write text as it is, like
	// the rest of the API.
	enc.SetEscapeHTML(contentType == publication.ContentTypeJSONLD)
	if err := enc.Encode(v); err != nil {
		s.fail(w, r, err)
		return
	}
	writePublic(w, r, contentType, b.Bytes())
}

// publicAccount reads the account of the path's {acc} (404 when it is
// none), once q, the request's query, has been found good.
func (s *server) publicAccount(r *http.Request, q *query) (accountdb.Account, error) {
	if err := q.err(); err != nil {
		return accountdb.Account{}, err
	}
	return s.accountByID(r, mux.Vars(r)["acc"])
}

func (s *server) accountByID(r *http.Request, id string) (accountdb.Account, error) {
	if !store.ValidID("acc", id) {
		return accountdb.Account{}, newError(http.StatusNotFound, "account not found")
	}
	a, err := s.accounts.Account(r.Context(), id)
	if err != nil {
		return accountdb.Account{}, about("account", "", err)
	}
	return a, nil
}

// accountReviews reads what every public view of an account shows: its
// aggregate and a page of its public reviews.
func (s *server) accountReviews(ctx context.Context, accountID string, f store.PublicReviewFilter, p store.Page) (
	review.Aggregate, []store.PublicReview, *store.Cursor, error) {
	agg, err := s.store.ReviewAggregate(ctx, accountID)
	if err != nil {
		return review.Aggregate{}, nil, nil, err
	}
	rs, next, err := s.store.PublicReviews(ctx, accountID, f, p)
	return agg, rs, next, err
}

// productReviews reads what every public view of a product shows: its
// aggregate and a page of its public reviews.
func (s *server) productReviews(ctx context.Context, accountID string, k review.ProductKey, p store.Page) (
	review.Aggregate, []store.PublicProductReview, *store.Cursor, error) {
	agg, err := s.store.ProductAggregate(ctx, accountID, k)
	if err != nil {
		return review.Aggregate{}, nil, nil, err
	}
	ps, next, err := s.store.PublicProductReviews(ctx, accountID, k, p)
	return agg, ps, next, err
}

// publicURL is the absolute address of a public path.
func (s *server) publicURL(path string) string { return s.publicBase + path }

func (s *server) verifyURL(reviewID string) string {
	return s.publicURL("/public/reviews/" + url.PathEscape(reviewID) + "/verify")
}

// getPublicReviews is GET /public/accounts/{acc}/reviews: the account's
// public reviews, newest first, with the aggregate and a proof each.
func (s *server) getPublicReviews(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r, "locale", "minRating")
	f := store.PublicReviewFilter{Locale: q.locale("locale"), MinRating: q.rating("minRating")}
	p := q.page("rev")
	a, err := s.publicAccount(r, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	agg, rs, next, err := s.accountReviews(r.Context(), a.ID, f, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, err := s.publication.ListOf(r.Context(), a, agg, rs, next)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writePublicJSON(w, r, "application/json", list)
}

// getAccountJSONLD is GET /public/accounts/{acc}/reviews.jsonld.
func (s *server) getAccountJSONLD(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r)
	q.noPage()
	a, err := s.publicAccount(r, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	agg, rs, _, err := s.accountReviews(r.Context(), a.ID, store.PublicReviewFilter{MinRating: review.MinRating},
		store.Page{Limit: publication.LatestInJSONLD})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writePublicJSON(w, r, publication.ContentTypeJSONLD, publication.OrganizationOf(a, agg, rs))
}

// publicProductQuery reads ?account=&sku=|gtin=|mpn= (and the page).
func (s *server) publicProductQuery(r *http.Request, list bool) (accountdb.Account, review.ProductKey, store.Page, error) {
	q := parseQuery(r, "account", "sku", "gtin", "mpn")
	if !list {
		q.noPage()
	}
	key := q.oneProductKey()
	acc := q.get("account")
	if acc == "" && len(q.errs) == 0 {
		q.fail("account", "is required: the id of the account whose reviews to show")
	}
	p := q.page("prv")
	if err := q.err(); err != nil {
		return accountdb.Account{}, review.ProductKey{}, p, err
	}
	a, err := s.accountByID(r, acc)
	return a, key, p, err
}

// getPublicProductReviews is GET /public/products/reviews: one product's
// public reviews with its aggregate.
func (s *server) getPublicProductReviews(w http.ResponseWriter, r *http.Request) {
	a, k, p, err := s.publicProductQuery(r, true)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	agg, ps, next, err := s.productReviews(r.Context(), a.ID, k, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	list, err := s.publication.ProductListOf(r.Context(), a, agg, ps, next)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writePublicJSON(w, r, "application/json", list)
}

// getProductJSONLD is GET /public/products/reviews.jsonld.
func (s *server) getProductJSONLD(w http.ResponseWriter, r *http.Request) {
	a, k, _, err := s.publicProductQuery(r, false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	agg, ps, _, err := s.productReviews(r.Context(), a.ID, k, store.Page{Limit: publication.LatestInJSONLD})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ld, err := publication.ProductOf(k, agg, ps)
	if errors.Is(err, publication.ErrNotReviewed) {
		err = newError(http.StatusNotFound, "no public review of this product")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writePublicJSON(w, r, publication.ContentTypeJSONLD, ld)
}

// getJWKS is GET /public/accounts/{acc}/jwks.json: every publication key
// the account ever had, newest first.
func (s *server) getJWKS(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r)
	q.noPage()
	a, err := s.publicAccount(r, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	set, err := s.publication.JWKS(r.Context(), a.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writePublicJSON(w, r, "application/jwk-set+json", set)
}

// getWidget is GET /public/accounts/{acc}/widget: the HTML widget for an
// iframe — the latest reviews (of one product with ?sku=) — or, with
// ?view=all, every review a page at a time.
func (s *server) getWidget(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r, "locale", "theme", "sku", "view")
	lang := q.locale("locale")
	if lang == "" {
		lang = publication.AcceptLanguage(r.Header.Get("Accept-Language"))
		w.Header().Set("Vary", "Accept-Language")
	}
	theme := q.get("theme")
	if theme != "" && theme != publication.ThemeLight && theme != publication.ThemeDark {
		q.fail("theme", `must be "light" or "dark"`)
	}
	sku := q.productKey("sku")
	all := false
	switch q.get("view") {
	case "":
	case "all":
		all = true
	default:
		q.fail("view", `must be "all"`)
	}
	p := q.page("rev")
	if err := q.err(); err != nil {
		s.errorPages.BadRequest(w, publication.Pick(lang))
		return
	}
	a, err := s.accountByID(r, mux.Vars(r)["acc"])
	if err != nil {
		s.publicPageError(w, r, publication.Pick(lang), err)
		return
	}
	if !all {
		p = store.Page{Limit: publication.LatestInWidget}
	} else if r.URL.Query().Get("limit") == "" {
		p.Limit = publication.AllPerPage
	}
	v := publication.Widget{Locale: lang, Theme: theme, Account: a, VerifyURL: s.verifyURL}
	var next *store.Cursor
	if sku != "" {
		k := review.ProductKey{Kind: review.SKU, Value: sku}
		var ps []store.PublicProductReview
		v.Aggregate, ps, _, err = s.productReviews(r.Context(), a.ID, k, store.Page{Limit: publication.LatestInWidget})
		if err != nil {
			s.publicPageError(w, r, publication.Pick(lang), err)
			return
		}
		for _, pr := range ps {
			v.Reviews = append(v.Reviews, pr.Review)
		}
	} else {
		if v.Aggregate, v.Reviews, next, err = s.accountReviews(r.Context(), a.ID, store.PublicReviewFilter{}, p); err != nil {
			s.publicPageError(w, r, publication.Pick(lang), err)
			return
		}
	}
	base := "/public/accounts/" + url.PathEscape(a.ID) + "/widget"
	params := url.Values{"locale": {lang}}
	if theme != "" {
		params.Set("theme", theme)
	}
	switch {
	case !all && sku == "":
		params.Set("view", "all")
		v.AllURL = s.publicURL(base + "?" + params.Encode())
	case all && next != nil:
		params.Set("view", "all")
		params.Set("cursor", next.Encode())
		v.NextURL = s.publicURL(base + "?" + params.Encode())
	}
	body, err := v.Render()
	if err != nil {
		s.publicPageError(w, r, publication.Pick(lang), err)
		return
	}
	w.Header().Set("Content-Security-Policy", publication.WidgetCSP)
	w.Header().Set("Referrer-Policy", "strict-origin-when-cross-origin")
	writePublic(w, r, publication.ContentTypeHTML, body)
}

// getFeed is GET /public/accounts/{acc}/feeds/google-product-reviews.xml:
// Google's Product Reviews Feed of every public product review, streamed.
// Its strong ETag is made of the account's publication version, read
// before the reviews, and the feed renderer's version
// (publication.FeedETag), so it is known before the first byte.
func (s *server) getFeed(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r)
	q.noPage()
	a, err := s.publicAccount(r, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	version, err := s.store.PublicationVersion(r.Context(), a.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	etag := publication.FeedETag(s.publicBase, a.ID, version)
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", publicCacheControl)
	if notModified(r, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", publication.ContentTypeXML)
	h.Set("X-Content-Type-Options", "nosniff")
	feed := publication.Feed{Account: a, ReviewURL: s.verifyURL}
	started := false
	err = feed.Write(&startWriter{w: w, rc: http.NewResponseController(w), started: &started}, func(fn func(store.FeedItem) error) error {
		return s.store.EachPublicProductReview(r.Context(), a.ID, feedBatch, fn)
	})
	if err != nil {
		if !started {
			h.Del("ETag")
			h.Del("Cache-Control")
			s.fail(w, r, err)
			return
		}
		// The status is out: the document stays unfinished, which any
		// XML parser refuses. Record why.
		infoFrom(r.Context()).err = err
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

// getVerifyPage is GET /public/reviews/{id}/verify: in the reader's
// language, what the review's proof states; with ?proof=, whether that
// proof is valid and still matches the review.
func (s *server) getVerifyPage(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r, "locale", "proof")
	q.noPage()
	lang := q.locale("locale")
	if lang == "" {
		lang = publication.AcceptLanguage(r.Header.Get("Accept-Language"))
		w.Header().Set("Vary", "Accept-Language")
	}
	brought := q.get("proof")
	if err := q.err(); err != nil {
		s.errorPages.BadRequest(w, publication.Pick(lang))
		return
	}
	id := mux.Vars(r)["id"]
	if !store.ValidID("rev", id) {
		s.errorPages.NotFound(w, publication.Pick(lang))
		return
	}
	rev, err := s.store.PublicReviewByID(r.Context(), id)
	if err != nil {
		s.publicPageError(w, r, lang, err)
		return
	}
	a, err := s.accounts.Account(r.Context(), rev.AccountID)
	if err != nil {
		s.publicPageError(w, r, lang, err)
		return
	}
	proof, err := s.publication.Sign(r.Context(), rev)
	if err != nil {
		s.publicPageError(w, r, lang, err)
		return
	}
	_, kid, err := s.publication.Verify(r.Context(), rev.AccountID, proof)
	if err != nil {
		s.publicPageError(w, r, lang, err)
		return
	}
	v := publication.VerifyPage{Locale: lang, Account: a, Review: rev, Proof: proof, KID: kid,
		JWKSURL: s.publicURL("/public/accounts/" + url.PathEscape(a.ID) + "/jwks.json"), VerifyURL: s.verifyURL(rev.ID)}
	if brought != "" {
		if v.Brought, err = s.publication.Check(r.Context(), rev, brought); err != nil {
			s.publicPageError(w, r, lang, err)
			return
		}
	}
	body, err := v.Render()
	if err != nil {
		s.publicPageError(w, r, lang, err)
		return
	}
	w.Header().Set("Content-Security-Policy", publication.VerifyCSP)
	w.Header().Set("Referrer-Policy", "no-referrer")
	writePublic(w, r, publication.ContentTypeHTML, body)
}

// publicPageError answers a failure of the verify page with an HTML page:
// 404 for a review that is not public (or none), 503 when the database is
// away, else 500; the real error is logged.
func (s *server) publicPageError(w http.ResponseWriter, r *http.Request, lang string, err error) {
	var ae *apiError
	switch {
	case errors.Is(err, store.ErrNotFound), errors.As(err, &ae) && ae.status == http.StatusNotFound:
		s.errorPages.NotFound(w, lang)
	case errors.Is(err, store.ErrUnavailable):
		infoFrom(r.Context()).err = err
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		s.errorPages.Unavailable(w, http.StatusServiceUnavailable, lang)
	default:
		infoFrom(r.Context()).err = err
		s.errorPages.Unavailable(w, http.StatusInternalServerError, lang)
	}
}

// locale reads a language parameter of the public endpoints: a locale
// such as "de" or "de_AT" (also "de-AT"), at most 35 characters.
func (q *query) locale(name string) string {
	v := q.get(name)
	if v == "" {
		return ""
	}
	if len(v) > 35 || strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) >= 0 {
		q.fail(name, `must be a language such as "de" or "de_AT"`)
		return ""
	}
	return strings.ReplaceAll(v, "-", "_")
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
