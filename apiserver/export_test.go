package apiserver

import "github.com/touchpoint/touchpoint/auth"

// Route is a route of routes.go as the tests outside the package see it.
type Route struct {
	Method, Path string
	// Groups are the access groups that may call it, in the order full,
	// events, readonly; nil for a public route (the public pages at
	// /feedback and /unsubscribe included).
	Groups []string
}

// Routes lists the routes of routes.go, which New serves and nothing else.
func Routes() []Route {
	var out []Route
	for _, rt := range (&server{feedbackPath: "/feedback"}).routes() {
		r := Route{Method: rt.method, Path: rt.path}
		if rt.access&public == 0 {
			for _, g := range []string{auth.GroupFull, auth.GroupEvents, auth.GroupReadonly} {
				if rt.access.allows(g) {
					r.Groups = append(r.Groups, g)
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// BatchBytesInFlight is the number of request bytes of batches that the
// server holds now; BatchBytesOf, of them those of one account.
func (a *Server) BatchBytesInFlight() int64 { return a.s.batchBytes.Held() }

func (a *Server) BatchBytesOf(account string) int64 { return a.s.batchBytes.HeldBy(account) }
