package apiserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/httpmw"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/sms"
)

// reqInfo is what the middleware learns about a request, shared through
// its context: set by requestID, filled in by later steps, read by the
// log line.
type reqInfo struct {
	id        string
	route     string         // the route's path template, "" when none matched
	principal auth.Principal // zero for public routes and failed auth
	err       error          // the internal error behind the answer, for the log only
	eventID   string         // the event a POST /events accepted
}

type infoKey struct{}

// infoFrom returns the request's info; requests that did not pass through
// requestID (direct handler tests) get a fresh one.
func infoFrom(ctx context.Context) *reqInfo {
	if info, ok := ctx.Value(infoKey{}).(*reqInfo); ok {
		return info
	}
	return &reqInfo{}
}

// accountID is the authenticated account that scopes every query.
func accountID(r *http.Request) string { return infoFrom(r.Context()).principal.AccountID }

// clientID is the id of the API client that made the request: who did it,
// in histories.
func clientID(r *http.Request) string { return infoFrom(r.Context()).principal.ClientID }

// requestID gives every request its id (httpmw.RequestID) and the info
// that the later steps fill in.
func requestID(next http.Handler) http.Handler {
	return httpmw.RequestID(func(ctx context.Context, id string) context.Context {
		return context.WithValue(ctx, infoKey{}, &reqInfo{id: id})
	}, next)
}

// logRequests writes one JSON line per request (httpmw.Log): 5xx at error
// level (with the internal error), probes at debug. It logs the path with
// every address in it masked (loggedPath), but neither the query string
// (it may hold customer emails) nor any header (the Authorization header
// above all).
func (s *server) logRequests(next http.Handler) http.Handler {
	describe := func(r *http.Request) httpmw.Line {
		info := infoFrom(r.Context())
		line := httpmw.Line{RequestID: info.id, Path: loggedPath(r.URL), Route: info.route, Err: info.err,
			Probe: info.route == "/healthz" || info.route == "/readyz"}
		if p := info.principal; p.AccountID != "" {
			line.Attrs = append(line.Attrs, slog.String("account_id", p.AccountID), slog.String("client_id", p.ClientID))
		}
		if info.eventID != "" {
			line.Attrs = append(line.Attrs, slog.String("event_id", info.eventID))
		}
		return line
	}
	observe := func(route, method string, status int, took time.Duration) {
		s.metrics.Request("api", route, method, status, took)
	}
	return httpmw.Log(s.log, describe, observe, next)
}

// loggedPath is a request's path as the log shows it: each segment that
// holds an email address or a phone number (a suppression's {address},
// or whatever a caller put in a path) masked as the senders mask them in
// their logs ("j***@example.com", "***5678"), the rest as sent.
func loggedPath(u *url.URL) string {
	segs := strings.Split(u.EscapedPath(), "/")
	for i, seg := range segs {
		v, err := url.PathUnescape(seg)
		if err != nil {
			v = seg
		}
		switch {
		case strings.Contains(v, "@"):
			segs[i] = mail.MaskEmail(v)
		case phoneLike(v):
			segs[i] = sms.MaskNumber(v)
		}
	}
	return strings.Join(segs, "/")
}

// phoneLike reports whether s could be a phone number in any spelling:
// seven digits or more, with nothing but "+", spaces and the usual
// separators between them. Ids carry letters and are never taken for one.
func phoneLike(s string) bool {
	digits := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune("+ ()-./", r):
		default:
			return false
		}
	}
	return digits >= 7
}

// recoverPanics answers a panicking handler with a plain 500 and records
// the panic and its stack for the log line.
func (s *server) recoverPanics(next http.Handler) http.Handler {
	return httpmw.Recover(func(w http.ResponseWriter, r *http.Request, err error, answered bool) {
		info := infoFrom(r.Context())
		info.err = err
		if answered {
			return // too late to change the answer
		}
		writeProblem(w, info.id, newError(http.StatusInternalServerError,
			"internal error; report the request id %s if it persists", info.id))
	}, next)
}

// authenticate reads the bearer token and asks the Authenticator who it
// belongs to. A missing token is challenged without an error code
// (RFC 6750 §3.1); anything else unusable is invalid_token.
func (s *server) authenticate(r *http.Request) (auth.Principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return auth.Principal{}, unauthorized("", "a bearer token is required")
	}
	scheme, token, _ := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return auth.Principal{}, unauthorized("invalid_token", "the Authorization header must be \"Bearer <token>\"")
	}
	p, err := s.auth.Authenticate(r.Context(), token)
	switch {
	case err == nil && p.AccountID != "":
		s.metrics.TokenVerification("ok")
		return p, nil
	case err == nil, errors.Is(err, auth.ErrInvalidToken):
		s.metrics.TokenVerification("invalid")
		// The reason (expired, idle, revoked, …) stays in the log: telling
		// a forger which check failed helps nobody else.
		infoFrom(r.Context()).err = err
		return auth.Principal{}, unauthorized("invalid_token", "the access token is invalid or expired")
	}
	s.metrics.TokenVerification("unavailable")
	return auth.Principal{}, err // unavailable (503) or internal (500), mapped by fail
}

func unauthorized(code, detail string) *apiError {
	challenge := `Bearer realm="touchpoint"`
	if code != "" {
		challenge += fmt.Sprintf(`, error=%q, error_description=%q`, code, detail)
	}
	e := newError(http.StatusUnauthorized, "%s", detail)
	e.header = map[string]string{"WWW-Authenticate": challenge}
	return e
}
