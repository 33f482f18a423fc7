package apiserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/auth"
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

// requestID adopts a sane incoming X-Request-Id (so a caller's id follows
// the request through the logs) or makes one, and echoes it. Every answer
// also says X-Content-Type-Options: nosniff, so no browser takes a JSON
// or YAML answer that echoes input for a page or a script.
func requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !saneRequestID(id) {
			b := make([]byte, 16)
			rand.Read(b) // never fails
			id = hex.EncodeToString(b)
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Request-Id", id)
		info := &reqInfo{id: id}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), infoKey{}, info)))
	})
}

// saneRequestID accepts 1–128 characters that cannot forge log lines or
// headers: letters, digits and . _ : -.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:-", c)) {
			return false
		}
	}
	return true
}

// recorder remembers the status and size of an answer for the log.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	n, err := rec.ResponseWriter.Write(b)
	rec.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the real writer.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// logRequests writes one JSON line per request: 5xx at error level (with
// the internal error), probes at debug. It logs the path with every
// address in it masked (loggedPath), but neither the query string (it may
// hold customer emails) nor any header (the Authorization header above
// all).
func (s *server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		info := infoFrom(r.Context())
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		level := slog.LevelInfo
		switch {
		case rec.status >= 500:
			level = slog.LevelError
		case info.route == "/healthz" || info.route == "/readyz":
			level = slog.LevelDebug
		}
		attrs := []slog.Attr{
			slog.String("request_id", info.id),
			slog.String("method", r.Method),
			slog.String("path", loggedPath(r.URL)),
			slog.String("route", info.route),
			slog.Int("status", rec.status),
			slog.Int64("bytes", rec.bytes),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
			slog.String("remote_addr", r.RemoteAddr),
		}
		if p := info.principal; p.AccountID != "" {
			attrs = append(attrs, slog.String("account_id", p.AccountID), slog.String("client_id", p.ClientID))
		}
		if info.eventID != "" {
			attrs = append(attrs, slog.String("event_id", info.eventID))
		}
		if info.err != nil {
			attrs = append(attrs, slog.String("error", info.err.Error()))
		}
		s.log.LogAttrs(r.Context(), level, "request", attrs...)
		s.metrics.Request("api", info.route, r.Method, rec.status, time.Since(start))
	})
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
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler { // the documented way to abort a response
				panic(v)
			}
			info := infoFrom(r.Context())
			info.err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
			if rec, ok := w.(*recorder); ok && rec.status != 0 {
				return // too late to change the answer
			}
			writeProblem(w, info.id, newError(http.StatusInternalServerError,
				"internal error; report the request id %s if it persists", info.id))
		}()
		next.ServeHTTP(w, r)
	})
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
