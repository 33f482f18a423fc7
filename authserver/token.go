package authserver

import (
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/authdb"
)

// tokenResponse is the documented (Keycloak-shaped) token response, in
// its field order.
type tokenResponse struct {
	AccessToken      string `json:"access_token"`
	ExpiresIn        int    `json:"expires_in"`
	RefreshExpiresIn int    `json:"refresh_expires_in"`
	TokenType        string `json:"token_type"`
	NotBeforePolicy  int64  `json:"not-before-policy"`
	Scope            string `json:"scope"`
}

// claims of an access token (RFC 9068 plus the account and access group,
// which the API re-reads from the client row rather than trusting).
type claims struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"`
	AZP      string `json:"azp"`
	ClientID string `json:"client_id"`
	IssuedAt int64  `json:"iat"`
	Expiry   int64  `json:"exp"`
	JTI      string `json:"jti"`
	Scope    string `json:"scope"`
	Account  string `json:"account"`
	Group    string `json:"group"`
}

// oauthError is an RFC 6749 §5.2 error answer.
type oauthError struct {
	status      int
	code        string
	description string
	basic       bool   // client authentication used Basic: challenge it
	retryAfter  string // seconds, for 429
}

func (e *oauthError) Error() string { return e.code + ": " + e.description }

func badRequest(format string, args ...any) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: "invalid_request", description: fmt.Sprintf(format, args...)}
}

// token is POST /oauth/token: the client-credentials grant.
//
// Error choices: a wrong audience is invalid_target (RFC 8693 §2.2.2 uses
// it for the audience parameter); an oversized body is 413 with
// invalid_request; missing client credentials are invalid_request like
// any missing parameter; too many failed authentications answer 429
// slow_down with Retry-After, without checking the secret.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	resp, err := s.grant(w, r)
	if err != nil {
		var oe *oauthError
		if !errors.As(err, &oe) {
			s.log.Error("token request failed", "error", err)
			oe = &oauthError{status: http.StatusServiceUnavailable, code: "temporarily_unavailable",
				description: "try again shortly", retryAfter: "1"}
		}
		if oe.basic {
			h.Set("WWW-Authenticate", `Basic realm="touchpoint"`)
		}
		if oe.retryAfter != "" {
			h.Set("Retry-After", oe.retryAfter)
		}
		writeJSON(w, oe.status, "no-store", map[string]string{"error": oe.code, "error_description": oe.description})
		return
	}
	writeJSON(w, http.StatusOK, "no-store", resp)
}

func (s *Server) grant(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return nil, &oauthError{status: http.StatusMethodNotAllowed, code: "invalid_request", description: "use POST"}
	}
	if r.URL.RawQuery != "" {
		// Credentials in a URL end up in logs.
		return nil, badRequest("parameters belong in the request body, not the URL")
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, badRequest("Content-Type must be application/x-www-form-urlencoded")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, &oauthError{status: http.StatusRequestEntityTooLarge, code: "invalid_request", description: "request body too large"}
		}
		return nil, badRequest("cannot read the request body")
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, badRequest("malformed form body")
	}
	for _, name := range slices.Sorted(maps.Keys(form)) { // a stable message when several repeat
		if len(form[name]) > 1 {
			return nil, badRequest("parameter %s is repeated", name)
		}
	}
	switch gt := form.Get("grant_type"); gt {
	case "":
		return nil, badRequest("missing grant_type")
	case "client_credentials":
	case "authorization_code":
		return s.codeGrant(r, form)
	default:
		return nil, s.unsupportedGrant()
	}
	id, secret, basic, err := clientCredentials(r, form)
	if err != nil {
		return nil, err
	}
	if aud := strings.TrimRight(form.Get("audience"), "/"); aud != "" && aud != s.opts.Audience {
		return nil, &oauthError{status: http.StatusBadRequest, code: "invalid_target", description: "audience must be " + s.opts.Audience}
	}
	c, err := s.authenticate(r, id, secret, basic)
	if err != nil {
		return nil, err
	}
	return s.issue(c)
}

// clientCredentials reads the client id and secret from HTTP Basic
// (RFC 6749 §2.3.1: each form-url-encoded first) or from the form.
func clientCredentials(r *http.Request, form url.Values) (id, secret string, basic bool, err error) {
	id, secret = form.Get("client_id"), form.Get("client_secret")
	if r.Header.Get("Authorization") != "" {
		u, p, ok := r.BasicAuth()
		if ok {
			u, err = url.QueryUnescape(u)
			if err == nil {
				p, err = url.QueryUnescape(p)
			}
		}
		if !ok || err != nil {
			return "", "", true, &oauthError{status: http.StatusUnauthorized, code: "invalid_client",
				description: "malformed Basic authorization", basic: true}
		}
		if (id != "" && id != u) || (secret != "" && secret != p) {
			return "", "", true, badRequest("client credentials differ between the Authorization header and the body")
		}
		id, secret, basic = u, p, true
	}
	switch {
	case id == "":
		return "", "", basic, badRequest("missing client_id")
	case secret == "":
		return "", "", basic, badRequest("missing client_secret")
	}
	return id, secret, basic, nil
}

// authenticate checks a built-in client's secret in constant time. An
// unknown id, a linked external client or a client without a secret
// still spend one hash and one comparison, so timing says nothing.
//
// Failed attempts are limited per (client id, client address) and per
// client address (failureLimits), checked before the secret. A client id
// that is not a built-in client's (cli-<uuid>) cannot authenticate here:
// it is refused before it becomes a limiter key or a log field, and only
// counts against its address.
func (s *Server) authenticate(r *http.Request, id, secret string, basic bool) (authdb.Client, error) {
	now := s.opts.Now()
	addr := s.clients.Addr(r)
	wellFormed := store.ValidID("cli", id)
	if !wellFormed {
		id = "" // never a key, never logged
	}
	if wait := s.failures.wait(id, addr, now); wait > 0 {
		secs := strconv.Itoa(int(math.Ceil(wait.Seconds())))
		return authdb.Client{}, &oauthError{status: http.StatusTooManyRequests, code: "slow_down", retryAfter: secs,
			description: "too many failed authentication attempts; retry after " + secs + "s"}
	}
	refused := func() error {
		s.failures.fail(id, addr, now)
		if wellFormed {
			s.log.Info("client authentication failed", "client_id", id, "remote", addr.String())
		} else {
			s.log.Info("client authentication failed: client_id is not a built-in client id", "remote", addr.String())
		}
		return &oauthError{status: http.StatusUnauthorized, code: "invalid_client", description: "client authentication failed", basic: basic}
	}
	if !wellFormed {
		return authdb.Client{}, refused()
	}
	c, err := s.opts.Store.ClientByID(r.Context(), id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return c, fmt.Errorf("look up client: %w", err)
	}
	known := err == nil && c.Issuer == "" && len(c.SecretHash) > 0
	want := s.dummyHash
	if known {
		want = c.SecretHash
	}
	if !hmac.Equal(HashClientSecret(s.clientKey, secret), want) || !known {
		return c, refused()
	}
	return c, nil
}

// issue signs an access token for c with the current key.
func (s *Server) issue(c authdb.Client) (*tokenResponse, error) {
	now := s.opts.Now()
	iat := now.Unix()
	var nbp int64
	if nb := c.NotBefore.Unix(); nb > 0 {
		nbp = nb
		// Revoked within this second: RevokeTokens rounded not-before up
		// to the next second, so a token fetched just after a revocation
		// must not be born revoked.
		iat = max(iat, nb)
	}
	jti := make([]byte, 18)
	rand.Read(jti)
	tok, err := s.sign(claims{
		Issuer: s.opts.Issuer, Subject: c.ClientID, Audience: s.opts.Audience, AZP: c.ClientID, ClientID: c.ClientID,
		IssuedAt: iat, Expiry: iat + int64(s.opts.TokenLifetime/time.Second),
		JTI: base64.RawURLEncoding.EncodeToString(jti), Scope: Scope, Account: c.AccountID, Group: c.AccessGroup,
	}, now)
	if err != nil {
		return nil, err
	}
	return &tokenResponse{AccessToken: tok, ExpiresIn: int(s.opts.IdleTimeout / time.Second), TokenType: "bearer",
		NotBeforePolicy: nbp, Scope: Scope}, nil
}
