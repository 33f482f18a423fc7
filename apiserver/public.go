package apiserver

import (
	"net/http"

	"github.com/touchpoint/touchpoint/pages"
)

// The public pages are what a customer reaches from an invite: no token,
// a signed link instead. Their handlers are package pages'; the API
// mounts them (routes.go) behind a limit per client address.

// Per-address limits of the public pages: a customer opens a page, posts
// it, maybe corrects it; a link scanner or a script gets 429 soon after.
// The address is the client's (ratelimit.ByAddress), so behind a load balancer
// one customer over the limit never holds back another.
const (
	publicRatePerSecond = 1
	publicRateBurst     = 20
)

// guardPage limits a public page per client address: per customer, also
// behind a trusted proxy.
func (s *server) guardPage(w http.ResponseWriter, r *http.Request, handle http.HandlerFunc) {
	if ok, wait := s.publicLimits.Allow(r, s.now()); !ok {
		s.pages.TooManyRequests(w, r, wait)
		return
	}
	handle(w, r)
}

// The public endpoints of an account's reviews are package publicapi's;
// the API mounts them (routes.go) behind a limit per client address and
// the CORS headers that let any site read them.

// Per-address limits of the public endpoints: a shop's pages load the
// widget or the JSON once per visitor, and browsers and CDNs cache it, so
// an address asking for more than this is a scraper.
const (
	publicReadRatePerSecond = 10
	publicReadBurst         = 100
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
	if ok, wait := s.publicReadLimits.Allow(r, s.now()); !ok {
		if html {
			s.publicReviews.TooManyRequests(w, r, wait)
			return
		}
		s.fail(w, r, tooManyRequests(wait))
		return
	}
	handle(w, r)
}
