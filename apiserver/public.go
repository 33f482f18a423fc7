package apiserver

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/pages"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/store"
)

// The public pages are what a customer reaches from an
// invite: no token, a signed link instead. They answer HTML, never
// problem+json, and reveal nothing about a link that does not verify.

// Per-address limits of the public pages: a customer opens a page, posts
// it, maybe corrects it; a link scanner or a script gets 429 soon after.
// The address is the client's (addressLimits), so behind a load balancer
// one customer over the limit never holds back another.
const (
	publicRatePerSecond = 1
	publicRateBurst     = 20
)

// UnsubscribePath is where the one-click unsubscribe links point.
const UnsubscribePath = "/unsubscribe"

// maxUnsubscribeBody bounds what an unsubscribe POST may carry: RFC 8058's
// "List-Unsubscribe=One-Click", or the confirm page's same form.
const maxUnsubscribeBody = 1 << 10

// guardPage limits a public page per client address: per customer, also
// behind a trusted proxy.
func (s *server) guardPage(w http.ResponseWriter, r *http.Request, handle http.HandlerFunc) {
	if ok, wait := s.publicLimits.allow(r, s.now()); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(wait.Seconds()+0.999))))
		s.pages.Unavailable(w, http.StatusTooManyRequests, s.pages.AcceptLanguage(r.Header.Get("Accept-Language")))
		return
	}
	handle(w, r)
}

// pageError answers a failure of a public page: an unknown event is the
// same 404 as a bad link; an unreachable database is 503 with
// Retry-After; anything else is logged and answered alike, without
// detail.
func (s *server) pageError(w http.ResponseWriter, r *http.Request, err error) {
	locale := s.pages.AcceptLanguage(r.Header.Get("Accept-Language"))
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.pages.NotFound(w, locale)
		return
	case errors.Is(err, store.ErrUnavailable):
		infoFrom(r.Context()).err = err
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		s.pages.Unavailable(w, http.StatusServiceUnavailable, locale)
		return
	}
	infoFrom(r.Context()).err = err
	s.pages.Unavailable(w, http.StatusInternalServerError, locale)
}

// linkTarget verifies a signed link's query and loads its event; a link
// that does not verify, or whose event is gone, is store.ErrNotFound.
func (s *server) linkTarget(r *http.Request, links *signedlink.Links, query url.Values) (store.InviteContent, error) {
	eventID, ok := links.Verify(query)
	if !ok {
		return store.InviteContent{}, store.ErrNotFound
	}
	return s.store.LoadInviteContent(r.Context(), eventID)
}

// expired reports whether the feedback link of c is past its lifetime: it
// expires FeedbackLinkTTL after the invite was (last) sent; a link of an
// invite never sent does not.
func (s *server) expired(c store.InviteContent) bool {
	return s.feedbackLinkTTL > 0 && c.SentAt != nil && s.now().Sub(*c.SentAt) > s.feedbackLinkTTL
}

// feedbackView is the form of the event c, with the link's signature.
func (s *server) feedbackView(c store.InviteContent, sig string) pages.FeedbackView {
	v := pages.FeedbackView{Locale: c.Locale, Brand: c.Account.Brand(), Action: s.feedbackPath, EventID: c.EventID, Sig: sig}
	for _, p := range c.Products {
		v.Products = append(v.Products, pages.Product{Name: p.Name, ImageURL: p.ImageURL})
	}
	return v
}

// feedbackPage is GET {feedback path}: the form, with the review given so
// far when there is one. A valid link works whether or not the invite was
// ever sent; once its lifetime after the send is over, it gets the 410
// page.
func (s *server) feedbackPage(w http.ResponseWriter, r *http.Request) {
	c, err := s.linkTarget(r, s.feedbackLinks, r.URL.Query())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	if s.expired(c) {
		s.pages.Expired(w, pages.ExpiredView{Locale: c.Locale, Brand: c.Account.Brand()})
		return
	}
	v := s.feedbackView(c, r.URL.Query().Get(signedlink.ParamSignature))
	switch rev, err := s.store.ReviewOfEvent(r.Context(), c.EventID); {
	case err == nil:
		v.Rating, v.Comment = rev.Rating, rev.Comment
	case !errors.Is(err, store.ErrNotFound):
		s.pageError(w, r, err)
		return
	}
	s.pages.Feedback(w, http.StatusOK, v)
}

// postFeedback is POST {feedback path}: stores the review (one per event;
// a second post replaces it) and thanks, or shows the form again with
// what was wrong and the reader's answers kept.
func (s *server) postFeedback(w http.ResponseWriter, r *http.Request) {
	f, problems, err := pages.ParseFeedback(r)
	if err != nil {
		s.pages.BadRequest(w, s.pages.AcceptLanguage(r.Header.Get("Accept-Language")))
		return
	}
	c, err := s.linkTarget(r, s.feedbackLinks, url.Values{signedlink.ParamEvent: {f.EventID}, signedlink.ParamSignature: {f.Sig}})
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	if s.expired(c) {
		s.pages.Expired(w, pages.ExpiredView{Locale: c.Locale, Brand: c.Account.Brand()})
		return
	}
	if len(problems) > 0 {
		v := s.feedbackView(c, f.Sig)
		v.Rating, v.Comment, v.Errors = f.Rating, f.Comment, problems
		s.pages.Feedback(w, http.StatusBadRequest, v)
		return
	}
	rev, saved, err := s.store.SaveReview(r.Context(), store.ReviewInput{EventID: c.EventID, Rating: f.Rating, Comment: f.Comment,
		Locale: s.pages.Pick(c.Locale)})
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	if saved == store.SavedCreated {
		s.metrics.Review(rev.Rating)
	}
	if saved != store.SavedUnchanged {
		s.signalReview(c.EventID, rev.ID)
	}
	s.pages.Thanks(w, pages.ThanksView{Locale: c.Locale, Brand: c.Account.Brand(), Rating: rev.Rating,
		EditURL: s.feedbackLinks.URL(c.EventID)})
}

// unsubscribePage is GET /unsubscribe: only the page asking to confirm.
// A GET never unsubscribes: mail scanners follow links.
func (s *server) unsubscribePage(w http.ResponseWriter, r *http.Request) {
	c, err := s.linkTarget(r, s.unsubscribeLinks, r.URL.Query())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	q := url.Values{signedlink.ParamEvent: {c.EventID}, signedlink.ParamSignature: {r.URL.Query().Get(signedlink.ParamSignature)}}
	s.pages.Unsubscribe(w, http.StatusOK, pages.UnsubscribeView{Locale: c.Locale, Brand: c.Account.Brand(),
		Action: UnsubscribePath + "?" + q.Encode(), Address: mail.MaskEmail(c.Email)})
}

// unsubscribe is POST /unsubscribe?event=…&sig=…: RFC 8058's one-click
// unsubscribe as a mailbox provider sends it (body
// "List-Unsubscribe=One-Click"), and the confirm page's button. The signed
// link is what authorises it; the body is read (bounded) but not required.
// The event's email address goes on the account's suppression list as
// unsubscribed; repeating it is harmless.
func (s *server) unsubscribe(w http.ResponseWriter, r *http.Request) {
	if _, err := io.Copy(io.Discard, io.LimitReader(r.Body, maxUnsubscribeBody)); err != nil {
		s.pages.BadRequest(w, s.pages.AcceptLanguage(r.Header.Get("Accept-Language")))
		return
	}
	c, err := s.linkTarget(r, s.unsubscribeLinks, r.URL.Query())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	if address := lowerAddress(c.Email); address != "" {
		if _, _, err := s.store.AddSuppression(r.Context(), c.AccountID, address, invite.Email, invite.Unsubscribed, c.EventID); err != nil {
			s.pageError(w, r, err)
			return
		}
	}
	s.pages.Unsubscribed(w, pages.UnsubscribedView{Locale: c.Locale, Brand: c.Account.Brand()})
}
