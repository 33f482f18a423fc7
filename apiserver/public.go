package apiserver

import (
	"net/http"
)

// The public pages are what a customer reaches from an invite: no token,
// a signed link instead. Their handlers are package pages'; the API
// mounts them (routes.go) behind a limit per client address.

// Per-address limits of the public pages: a customer opens a page, posts
// it, maybe corrects it; a link scanner or a script gets 429 soon after.
// The address is the client's (addressLimits), so behind a load balancer
// one customer over the limit never holds back another.
const (
	publicRatePerSecond = 1
	publicRateBurst     = 20
)

// guardPage limits a public page per client address: per customer, also
// behind a trusted proxy.
func (s *server) guardPage(w http.ResponseWriter, r *http.Request, handle http.HandlerFunc) {
	if ok, wait := s.publicLimits.allow(r, s.now()); !ok {
		s.pages.TooManyRequests(w, r, wait)
		return
	}
	handle(w, r)
}
