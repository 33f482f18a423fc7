package pages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/templates"
)

// The handlers of the pages a customer reaches from an invite: no token,
// a signed link instead. They answer HTML, never problem+json, and reveal
// nothing about a link that does not verify. The API mounts them on the
// routes of its route table, behind its per-address limit.

// UnsubscribePath is where the one-click unsubscribe links point.
const UnsubscribePath = "/unsubscribe"

// maxUnsubscribeBody bounds what an unsubscribe POST may carry: RFC 8058's
// "List-Unsubscribe=One-Click", or the confirm page's same form.
const maxUnsubscribeBody = 1 << 10

// retryAfter is the Retry-After of a 503 page, in seconds: the API's.
const retryAfter = 5

// Store is what the handlers need of the store.
type Store interface {
	LoadInviteContent(ctx context.Context, eventID string) (invitedb.InviteContent, error)
	ReviewOfEvent(ctx context.Context, eventID string) (reviewdb.Review, error)
	SaveReview(ctx context.Context, in reviewdb.ReviewInput) (reviewdb.Review, reviewdb.Saved, error)
	AddSuppression(ctx context.Context, accountID, address string, medium invite.Medium,
		reason invite.SuppressionReason, eventID string) (suppressiondb.Suppression, bool, error)
	MarkOpened(ctx context.Context, eventID string) (bool, error)
	LoadTestSend(ctx context.Context, id string) (templatedb.TestSend, error)
	Account(ctx context.Context, id string) (accountdb.Account, error)
}

// HandlerOptions are the handlers' dependencies.
type HandlerOptions struct {
	Store Store // required
	// FeedbackLinks and UnsubscribeLinks verify the signed links: the
	// feedback page is served at the path of FeedbackLinks' base URL, the
	// unsubscribe page at UnsubscribePath. Required.
	FeedbackLinks, UnsubscribeLinks *signedlink.Links
	// FeedbackLinkTTL is how long after its invite was sent a feedback
	// link works (then the page answers 410); 0: forever. Unsubscribe
	// links never expire.
	FeedbackLinkTTL time.Duration
	// Now is the clock of the links' lifetime; default time.Now.
	Now func() time.Time
	// Metrics counts the reviews given. Optional.
	Metrics *metrics.Set
	// Reviewed is told of a review stored or changed (a post that changes
	// nothing is not told), to end a waiting reminder. Optional.
	Reviewed func(eventID, reviewID string)
	// Report is given the internal error behind a 5xx page, for the
	// request's log line; the reader never sees it. Optional.
	Report func(r *http.Request, err error)
	// HSTS makes every page send Strict-Transport-Security: set it when
	// the base URL is https.
	HSTS bool
}

// Handler serves the customer pages. Its methods are the handlers of the
// routes the API mounts.
type Handler struct {
	pages *Pages
	o     HandlerOptions
}

// NewHandler parses the pages (New) and builds their handlers. It panics
// without a Store or the link makers, which is a wiring mistake.
func NewHandler(o HandlerOptions) (*Handler, error) {
	if o.Store == nil || o.FeedbackLinks == nil || o.UnsubscribeLinks == nil {
		panic("pages.NewHandler: Store, FeedbackLinks and UnsubscribeLinks are required")
	}
	p, err := New()
	if err != nil {
		return nil, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Reviewed == nil {
		o.Reviewed = func(string, string) {}
	}
	if o.Report == nil {
		o.Report = func(*http.Request, error) {}
	}
	p.HSTS = o.HSTS
	return &Handler{pages: p, o: o}, nil
}

// FeedbackPath is the path the feedback page is served at: that of the
// feedback links.
func (h *Handler) FeedbackPath() string { return h.o.FeedbackLinks.Path() }

// locale is the reader's language for a page that knows no event.
func (h *Handler) locale(r *http.Request) string {
	return h.pages.AcceptLanguage(r.Header.Get("Accept-Language"))
}

// TooManyRequests is the 429 page of a reader's address over its limit,
// with Retry-After in whole seconds (at least 1).
func (h *Handler) TooManyRequests(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(wait.Seconds()+0.999))))
	h.pages.Unavailable(w, http.StatusTooManyRequests, h.locale(r))
}

// MethodNotAllowed is the 405 page of a method that no route of the page
// answers, in the reader's language, with Allow listing those that do.
func (h *Handler) MethodNotAllowed(w http.ResponseWriter, r *http.Request, allow []string) {
	h.pages.MethodNotAllowed(w, h.locale(r), allow)
}

// fail answers a failure of a page: an unknown event is the same 404 as a
// bad link; an unreachable database is 503 with Retry-After; anything
// else is reported and answered alike, without detail.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	locale := h.locale(r)
	switch {
	case errors.Is(err, store.ErrNotFound):
		h.pages.NotFound(w, locale)
		return
	case errors.Is(err, store.ErrUnavailable):
		h.o.Report(r, err)
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		h.pages.Unavailable(w, http.StatusServiceUnavailable, locale)
		return
	}
	h.o.Report(r, err)
	h.pages.Unavailable(w, http.StatusInternalServerError, locale)
}

// feedbackTarget verifies a feedback link's query and loads its event.
// When it reports false it has answered the request: the error page of a
// link that does not verify, or whose event is gone (404), or the 410 page
// of one past its lifetime (expired).
func (h *Handler) feedbackTarget(w http.ResponseWriter, r *http.Request, query url.Values) (invitedb.InviteContent, bool) {
	eventID, ok := h.o.FeedbackLinks.Verify(query)
	if !ok {
		h.fail(w, r, store.ErrNotFound)
		return invitedb.InviteContent{}, false
	}
	c, err := h.o.Store.LoadInviteContent(r.Context(), eventID)
	if err != nil {
		h.fail(w, r, err)
		return invitedb.InviteContent{}, false
	}
	if h.expired(c) {
		h.pages.Expired(w, ExpiredView{Locale: c.Locale, Brand: c.Account.Brand()})
		return invitedb.InviteContent{}, false
	}
	return c, true
}

// expired reports whether the feedback link of c is past its lifetime: it
// expires FeedbackLinkTTL after the invite was (last) sent; a link of an
// invite never sent does not.
func (h *Handler) expired(c invitedb.InviteContent) bool {
	return h.o.FeedbackLinkTTL > 0 && c.SentAt != nil && h.o.Now().Sub(*c.SentAt) > h.o.FeedbackLinkTTL
}

// feedbackView is the form of the event c, with the link's signature.
func (h *Handler) feedbackView(c invitedb.InviteContent, sig string) FeedbackView {
	v := FeedbackView{Locale: c.Locale, Brand: c.Account.Brand(), Action: h.FeedbackPath(), EventID: c.EventID, Sig: sig}
	for i, p := range c.Products {
		if i >= MaxProducts {
			break
		}
		v.Products = append(v.Products, Product{Name: p.Name, ImageURL: p.ImageURL, Index: i})
	}
	return v
}

// withReview fills v with the review given so far.
func withReview(v FeedbackView, rev reviewdb.Review) FeedbackView {
	v.Rating, v.Comment, v.ShowName = rev.Rating, rev.Comment, rev.ShowName
	for _, pr := range rev.Products {
		for i := range v.Products {
			if v.Products[i].Index == pr.ProductIndex {
				v.Products[i].Rating, v.Products[i].Comment = pr.Rating, pr.Comment
			}
		}
	}
	return v
}

// withAnswers fills v with a posted form, to show it again.
func withAnswers(v FeedbackView, f FeedbackForm) FeedbackView {
	v.Rating, v.Comment, v.ShowName = f.Rating, f.Comment, f.ShowName
	for i := range v.Products {
		if a, ok := f.Products[v.Products[i].Index]; ok {
			v.Products[i].Rating, v.Products[i].Comment = a.Rating, a.Comment
		}
	}
	return v
}

// ShowFeedback is GET {feedback path}: the form, with the review given so
// far when there is one. A valid link works whether or not the invite was
// ever sent; once its lifetime after the send is over, it gets the 410
// page.
func (h *Handler) ShowFeedback(w http.ResponseWriter, r *http.Request) {
	c, ok := h.feedbackTarget(w, r, r.URL.Query())
	if !ok {
		return
	}
	h.recordOpened(r, c.EventID)
	v := h.feedbackView(c, r.URL.Query().Get(signedlink.ParamSignature))
	switch rev, err := h.o.Store.ReviewOfEvent(r.Context(), c.EventID); {
	case err == nil:
		v = withReview(v, rev)
	case !errors.Is(err, store.ErrNotFound):
		h.fail(w, r, err)
		return
	}
	h.pages.Feedback(w, http.StatusOK, v)
}

// recordOpened records that the event's feedback page was opened, for
// the shop's funnel: the store keeps the first opening only, as a time on
// the event. It is the page being served, never a pixel or a request to
// anyone else. The page is shown whether or not that could be written (a
// count never keeps the customer waiting); a failure goes to the log.
func (h *Handler) recordOpened(r *http.Request, eventID string) {
	if _, err := h.o.Store.MarkOpened(r.Context(), eventID); err != nil && h.o.Report != nil {
		h.o.Report(r, fmt.Errorf("record the feedback page opened: %w", err))
	}
}

// PostFeedback is POST {feedback path}: stores the review (one per event;
// a second post replaces it) and thanks, or shows the form again with
// what was wrong and the reader's answers kept.
func (h *Handler) PostFeedback(w http.ResponseWriter, r *http.Request) {
	f, problems, err := ParseFeedback(r)
	if err != nil { // not a feedback form, or one naming a product it never asks about
		h.pages.BadRequest(w, h.locale(r))
		return
	}
	c, ok := h.feedbackTarget(w, r, url.Values{signedlink.ParamEvent: {f.EventID}, signedlink.ParamSignature: {f.Sig}})
	if !ok {
		return
	}
	// A product the event does not have: not a form this page made.
	for i := range f.Products {
		if i >= min(len(c.Products), MaxProducts) {
			h.pages.BadRequest(w, h.pages.Pick(c.Locale))
			return
		}
	}
	if len(problems) > 0 {
		v := withAnswers(h.feedbackView(c, f.Sig), f)
		v.Errors = problems
		h.pages.Feedback(w, http.StatusBadRequest, v)
		return
	}
	in := reviewdb.ReviewInput{EventID: c.EventID, Rating: f.Rating, Comment: f.Comment, Locale: h.pages.Pick(c.Locale), ShowName: f.ShowName}
	for _, i := range slices.Sorted(maps.Keys(f.Products)) {
		in.Products = append(in.Products, reviewdb.ProductRating{Index: i, Rating: f.Products[i].Rating, Comment: f.Products[i].Comment})
	}
	rev, saved, err := h.o.Store.SaveReview(r.Context(), in)
	if errors.Is(err, reviewdb.ErrProductIndex) {
		h.pages.BadRequest(w, h.pages.Pick(c.Locale))
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if saved == reviewdb.SavedCreated && rev.Rating > 0 {
		h.o.Metrics.Review(rev.Rating)
	}
	if saved != reviewdb.SavedUnchanged {
		h.o.Reviewed(c.EventID, rev.ID)
	}
	h.pages.Thanks(w, ThanksView{Locale: c.Locale, Brand: c.Account.Brand(), Rating: rev.Rating,
		EditURL: h.o.FeedbackLinks.URL(c.EventID)})
}

// unsubscriber is whom an unsubscribe link names: the customer of an
// event, or the address a template test went to.
type unsubscriber struct {
	AccountID string
	EventID   string // "" for a template test
	Address   string // as the suppression list spells it; "" when the event has none
	Medium    invite.Medium
	Locale    string
	Brand     brand.Brand
}

// unsubscribeTarget verifies an unsubscribe link's query and finds whom
// it names: a template test's link (tts-…) carries its address sealed,
// as the test forgets it once sent; an event's names its customer. A link
// that does not verify or open, or whose event or test is gone, is
// store.ErrNotFound.
func (h *Handler) unsubscribeTarget(r *http.Request) (unsubscriber, error) {
	query := r.URL.Query()
	id, ok := h.o.UnsubscribeLinks.Verify(query)
	if !ok {
		return unsubscriber{}, store.ErrNotFound
	}
	if !store.ValidID("tts", id) {
		c, err := h.o.Store.LoadInviteContent(r.Context(), id)
		return unsubscriber{AccountID: c.AccountID, EventID: c.EventID, Address: suppressiondb.ListedAddress(invite.Email, c.Email),
			Medium: invite.Email, Locale: c.Locale, Brand: c.Account.Brand()}, err
	}
	address, ok := h.o.UnsubscribeLinks.Unseal(query, id)
	if !ok {
		return unsubscriber{}, store.ErrNotFound
	}
	ts, err := h.o.Store.LoadTestSend(r.Context(), id)
	if err != nil {
		return unsubscriber{}, err
	}
	acc, err := h.o.Store.Account(r.Context(), ts.AccountID)
	if err != nil {
		return unsubscriber{}, err
	}
	medium := templates.Kind(ts.Kind).Medium()
	return unsubscriber{AccountID: ts.AccountID, Address: suppressiondb.ListedAddress(medium, address), Medium: medium, Locale: ts.Locale,
		Brand: acc.Brand()}, nil
}

// ShowUnsubscribe is GET /unsubscribe: only the page asking to confirm.
// A GET never unsubscribes: mail scanners follow links.
func (h *Handler) ShowUnsubscribe(w http.ResponseWriter, r *http.Request) {
	u, err := h.unsubscribeTarget(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := url.Values{}
	for _, p := range []string{signedlink.ParamEvent, signedlink.ParamSignature, signedlink.ParamSealed} {
		if v := r.URL.Query().Get(p); v != "" {
			q.Set(p, v)
		}
	}
	h.pages.Unsubscribe(w, http.StatusOK, UnsubscribeView{Locale: u.Locale, Brand: u.Brand,
		Action: UnsubscribePath + "?" + q.Encode(), Address: mail.MaskEmail(u.Address)})
}

// PostUnsubscribe is POST /unsubscribe?event=…&sig=…: RFC 8058's one-click
// unsubscribe as a mailbox provider sends it (body
// "List-Unsubscribe=One-Click"), and the confirm page's button. The signed
// link is what authorises it; the body is read (bounded) but not required.
// The email address it names goes on the account's suppression list as
// unsubscribed, by the customer; repeating it is harmless.
func (h *Handler) PostUnsubscribe(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, io.LimitReader(r.Body, maxUnsubscribeBody)); err != nil {
		h.pages.BadRequest(w, h.locale(r))
		return
	}
	u, err := h.unsubscribeTarget(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if u.Address != "" {
		if _, _, err := h.o.Store.AddSuppression(r.Context(), u.AccountID, u.Address, u.Medium, invite.Unsubscribed, u.EventID); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	h.pages.Unsubscribed(w, UnsubscribedView{Locale: u.Locale, Brand: u.Brand})
}
