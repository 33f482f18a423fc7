// Package signin signs people in to the console and out again, and tells
// the console who is signed in with a request.
//
// The console is an OpenID Connect relying party. A sign-in sends the
// browser to the provider with the authorization code flow, PKCE (S256),
// a state and a nonce, kept meanwhile in a sealed cookie of the
// browser's; the callback checks the state, trades the code with the PKCE
// verifier, checks the ID token (signature, issuer, audience, expiry) and
// its nonce, finds the person, and starts a fresh session in PostgreSQL,
// ending whatever session the browser had (no fixation). The session's
// cookie holds a random token of which PostgreSQL keeps the hash; every
// request looks it up, so a session ends the moment it is signed out, its
// person disabled, left idle for 30 minutes, or 12 hours old.
//
// Its routes are served on the console's handler, and it answers with the
// console's own pages (Console).
package signin

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/touchpoint/touchpoint/console"
	"github.com/touchpoint/touchpoint/internal/opaque"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Lifetimes of a session.
const (
	// SessionIdle ends a session not used for this long.
	SessionIdle = 30 * time.Minute
	// SessionLifetime ends a session this long after its sign-in, used
	// or not.
	SessionLifetime = 12 * time.Hour
	// signInAge is how long a sign-in may take at the provider: the
	// built-in issuer's link lives 15 minutes, and its mail takes a while.
	signInAge = 30 * time.Minute
)

// Paths of the console's sign-in below the API's base URL.
const (
	// Path starts a sign-in at the provider.
	Path = "/console/sign-in"
	// CallbackPath is the redirect URI the provider sends the browser
	// back to with its code.
	CallbackPath = "/console/callback"
	// SignOutPath ends the session (POST).
	SignOutPath = "/console/sign-out"
)

// ClientID is the console's client at the built-in issuer: a public
// client (no secret) that proves with PKCE that it asked for the code.
const ClientID = "touchpoint-console"

// Store is what signing in and out reads and writes.
type Store interface {
	StartSession(ctx context.Context, n persondb.NewSession) (persondb.Session, error)
	Session(ctx context.Context, tokenHash []byte, idle time.Duration) (persondb.Session, error)
	EndSession(ctx context.Context, tokenHash []byte) error
	PersonByID(ctx context.Context, id string) (persondb.Person, error)
	PersonByIdentity(ctx context.Context, issuer, subject string) (persondb.Person, error)
	MatchByEmail(ctx context.Context, issuer, subject, email string) (persondb.Person, error)
}

// Provider is the OpenID Connect provider people sign in through.
type Provider struct {
	// Issuer is exactly the iss of the provider's ID tokens.
	Issuer string
	// DiscoveryURL is where the discovery document and keys are fetched
	// when Issuer is not reachable from the API (the built-in issuer
	// inside a container network); "" fetches them from Issuer. The
	// browser is still sent to the authorization endpoint the document
	// names.
	DiscoveryURL string
	// ClientID and ClientSecret are the console's client at the
	// provider; without a secret it is a public client.
	ClientID, ClientSecret string
	// BuiltIn: the provider is Touchpoint's own issuer, whose ID tokens
	// name the person by their id.
	BuiltIn bool
	// MatchEmail lets a person not linked to the provider's account sign
	// in by the provider's verified email claim (and links them).
	MatchEmail bool
}

// Options configure the console's sign-in.
type Options struct {
	// BaseURL is the API's public address: the callback is on it, and
	// under https the cookies are Secure and __Host- prefixed.
	BaseURL  string
	Provider Provider
	Store    Store
	// SecretKey is TOUCHPOINT_SECRET_KEY: it seals the sign-in's state.
	SecretKey string
	// HTTPClient reaches the provider; default one with a 10 s timeout.
	HTTPClient *http.Client
	Logger     *slog.Logger
	Now        func() time.Time
}

// Auth signs people in and out of the console and tells who is signed in.
type Auth struct {
	o        Options
	base     string
	origin   string
	secure   bool
	box      *secretkey.Box
	session  string // cookie names
	signIn   string
	log      *slog.Logger
	now      func() time.Time
	mu       sync.Mutex
	provider *provider // nil until discovered
	pages    Console   // renders the sign-in's pages
}

// Console is the console's handler as its sign-in uses it: the sign-in's
// routes are served on it, and its pages are the console's.
type Console interface {
	// HandleFunc serves a route (a pattern of http.ServeMux).
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
	// SignInPage answers with one of the sign-in's pages: its title and
	// text by key, and a way to sign in (again).
	SignInPage(w http.ResponseWriter, r *http.Request, status int, key string)
	// Fail answers an internal error with a page that hides it.
	Fail(w http.ResponseWriter, r *http.Request, err error)
	// Forbidden answers a request the sign-in refuses.
	Forbidden(w http.ResponseWriter, r *http.Request)
	// SetHeaders sets the headers of every console page on an answer
	// that is not one (a redirect).
	SetHeaders(h http.Header)
}

// provider is the discovered provider.
type provider struct {
	oauth    *oauth2.Config
	verifier *oidc.IDTokenVerifier
}

// New checks the options. The provider is discovered at the first
// sign-in, and again after a failure, so the API starts while it is down.
func New(o Options) (*Auth, error) {
	u, err := url.Parse(o.BaseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("console: base URL %q is not an absolute http(s) URL", o.BaseURL)
	}
	if o.Store == nil || o.Provider.Issuer == "" || o.Provider.ClientID == "" || o.SecretKey == "" {
		return nil, errors.New("console: sign-in needs a store, a provider with a client id, and the secret key")
	}
	box, err := secretkey.NewBox(secretkey.Derive(o.SecretKey, secretkey.ConsoleSignIn))
	if err != nil {
		return nil, err
	}
	a := &Auth{o: o, base: strings.TrimRight(o.BaseURL, "/"), origin: u.Scheme + "://" + u.Host, secure: u.Scheme == "https",
		box: box, session: "tp-console", signIn: "tp-console-sign-in", log: o.Logger, now: o.Now}
	if a.secure {
		// Secure, host-only, Path=/: no other host of the domain, nor a
		// plain-http page, can set or overwrite them.
		a.session, a.signIn = "__Host-"+a.session, "__Host-"+a.signIn
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.o.HTTPClient == nil {
		a.o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return a, nil
}

// Mount serves the sign-in, its callback and the sign-out on the
// console's handler, whose pages render them.
func (a *Auth) Mount(c Console) {
	a.pages = c
	c.HandleFunc("GET "+Path, a.startSignIn)
	c.HandleFunc("GET "+CallbackPath, a.callback)
	c.HandleFunc("POST "+SignOutPath, a.signOut)
}

// page answers with one of the sign-in's pages: its title and text by
// key, and a way to sign in (again).
func (a *Auth) page(w http.ResponseWriter, r *http.Request, status int, key string) {
	a.pages.SignInPage(w, r, status, key)
}

// discover returns the provider, fetching its discovery document once.
func (a *Auth) discover(ctx context.Context) (*provider, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.provider != nil {
		return a.provider, nil
	}
	p := a.o.Provider
	ctx = oidc.ClientContext(ctx, a.o.HTTPClient)
	at := p.Issuer
	if p.DiscoveryURL != "" {
		at = strings.TrimRight(p.DiscoveryURL, "/")
		// go-oidc then leaves the issuer check to the verifier, which
		// makes it on every ID token.
		ctx = oidc.InsecureIssuerURLContext(ctx, p.Issuer)
	}
	op, err := oidc.NewProvider(ctx, at)
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", p.Issuer, err)
	}
	var meta struct {
		Issuer  string `json:"issuer"`
		JWKSURL string `json:"jwks_uri"`
	}
	if err := op.Claims(&meta); err != nil {
		return nil, err
	}
	if meta.Issuer != p.Issuer {
		return nil, fmt.Errorf("discovery document at %s names issuer %q, want %q", at, meta.Issuer, p.Issuer)
	}
	// The browser goes to the authorization endpoint as the document
	// names it; the API reaches the token endpoint and the keys where it
	// fetched the document.
	internal := func(u string) string {
		if rest, ok := strings.CutPrefix(u, strings.TrimRight(p.Issuer, "/")); ok && at != p.Issuer {
			return at + rest
		}
		return u
	}
	ep := op.Endpoint()
	ep.TokenURL = internal(ep.TokenURL)
	ep.AuthStyle = oauth2.AuthStyleInParams
	if p.ClientSecret != "" {
		ep.AuthStyle = oauth2.AuthStyleInHeader
	}
	// The key set outlives this request: it refetches on an unknown kid.
	keys := oidc.NewRemoteKeySet(oidc.ClientContext(context.WithoutCancel(ctx), a.o.HTTPClient), internal(meta.JWKSURL))
	a.provider = &provider{
		oauth: &oauth2.Config{ClientID: p.ClientID, ClientSecret: p.ClientSecret, Endpoint: ep,
			RedirectURL: a.base + CallbackPath, Scopes: []string{oidc.ScopeOpenID, "email"}},
		verifier: oidc.NewVerifier(p.Issuer, keys, &oidc.Config{ClientID: p.ClientID, Now: a.now}),
	}
	return a.provider, nil
}

// pending is a sign-in under way, sealed into the browser's cookie.
type pending struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Next     string    `json:"x"`
	Until    time.Time `json:"u"`
}

// sealLabel binds the sealed cookie to its purpose.
var sealLabel = []byte("console sign-in")

// startSignIn is GET /console/sign-in[?next=/console/…]: it sends the
// browser to the provider.
func (a *Auth) startSignIn(w http.ResponseWriter, r *http.Request) {
	p, err := a.discover(r.Context())
	if err != nil {
		a.log.WarnContext(r.Context(), "console: the sign-in provider cannot be reached", "error", err.Error())
		a.page(w, r, http.StatusServiceUnavailable, "sign_in_unavailable")
		return
	}
	s := pending{State: opaque.New(), Nonce: opaque.New(), Verifier: oauth2.GenerateVerifier(), Next: safeNext(r.URL.Query().Get("next")),
		Until: a.now().Add(signInAge)}
	plain, err := json.Marshal(s)
	if err == nil {
		var sealed []byte
		if sealed, err = a.box.Seal(plain, sealLabel); err == nil {
			a.setCookie(w, a.signIn, base64.RawURLEncoding.EncodeToString(sealed), signInAge)
		}
	}
	if err != nil {
		a.pages.Fail(w, r, fmt.Errorf("seal the sign-in: %w", err))
		return
	}
	a.pages.SetHeaders(w.Header())
	http.Redirect(w, r, p.oauth.AuthCodeURL(s.State, oidc.Nonce(s.Nonce), oauth2.S256ChallengeOption(s.Verifier)), http.StatusSeeOther)
}

// safeNext is where to go after signing in: a path of the console, else
// its start page. Never another site.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(u.Path, console.Prefix) || strings.ContainsAny(next, "\\\r\n") ||
		strings.HasPrefix(next, "//") {
		return console.Prefix
	}
	return u.RequestURI()
}

// pendingSignIn opens the browser's sign-in cookie; ok is false when it
// is missing, forged, sealed under another key or too old.
func (a *Auth) pendingSignIn(r *http.Request) (pending, bool) {
	var s pending
	c, err := r.Cookie(a.signIn)
	if err != nil {
		return s, false
	}
	sealed, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil {
		return s, false
	}
	plain, err := a.box.Open(sealed, sealLabel)
	if err != nil || json.Unmarshal(plain, &s) != nil || !a.now().Before(s.Until) || s.State == "" {
		return s, false
	}
	return s, true
}

// callback is GET /console/callback: the provider's answer.
func (a *Auth) callback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	s, ok := a.pendingSignIn(r)
	a.setCookie(w, a.signIn, "", -1) // one answer per sign-in
	if !ok || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(s.State)) != 1 {
		// Not this browser's sign-in (or an old one): never a session.
		a.page(w, r, http.StatusBadRequest, "sign_in_expired")
		return
	}
	if e := q.Get("error"); e != "" {
		a.log.InfoContext(ctx, "console: the provider refused a sign-in", "error", e)
		a.page(w, r, http.StatusForbidden, "sign_in_failed")
		return
	}
	if iss := q.Get("iss"); iss != "" && iss != a.o.Provider.Issuer { // RFC 9207: the answer of another provider
		a.page(w, r, http.StatusBadRequest, "sign_in_failed")
		return
	}
	p, err := a.discover(ctx)
	if err != nil {
		a.log.WarnContext(ctx, "console: the sign-in provider cannot be reached", "error", err.Error())
		a.page(w, r, http.StatusServiceUnavailable, "sign_in_unavailable")
		return
	}
	tok, err := p.oauth.Exchange(context.WithValue(ctx, oauth2.HTTPClient, a.o.HTTPClient), q.Get("code"), oauth2.VerifierOption(s.Verifier))
	if err != nil {
		a.log.InfoContext(ctx, "console: code not traded", "error", err.Error())
		a.page(w, r, http.StatusBadRequest, "sign_in_failed")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	id, err := p.verifier.Verify(ctx, raw)
	if err == nil && subtle.ConstantTimeCompare([]byte(id.Nonce), []byte(s.Nonce)) != 1 {
		err = errors.New("the ID token's nonce is not the sign-in's")
	}
	if err != nil {
		a.log.WarnContext(ctx, "console: ID token refused", "error", err.Error())
		a.page(w, r, http.StatusBadRequest, "sign_in_failed")
		return
	}
	person, err := a.person(ctx, id)
	switch {
	case errors.Is(err, pg.ErrNotFound), errors.Is(err, pg.ErrConflict), errors.Is(err, persondb.ErrDisabled):
		a.log.InfoContext(ctx, "console: nobody to sign in as", "issuer", id.Issuer, "reason", err.Error())
		a.page(w, r, http.StatusForbidden, "not_linked")
		return
	case err != nil:
		a.pages.Fail(w, r, err)
		return
	}
	a.start(w, r, person, s.Next)
}

// person is who an ID token names: by their id at the built-in issuer;
// by the provider's account linked to them elsewhere, or, when allowed,
// by the address the provider vouches for.
func (a *Auth) person(ctx context.Context, id *oidc.IDToken) (persondb.Person, error) {
	st, prov := a.o.Store, a.o.Provider
	var (
		p   persondb.Person
		err error
	)
	if prov.BuiltIn {
		p, err = st.PersonByID(ctx, id.Subject)
	} else {
		p, err = st.PersonByIdentity(ctx, id.Issuer, id.Subject)
		if errors.Is(err, pg.ErrNotFound) && prov.MatchEmail {
			var claims struct {
				Email    string `json:"email"`
				Verified bool   `json:"email_verified"`
			}
			if err := id.Claims(&claims); err != nil || !claims.Verified {
				return p, pg.ErrNotFound
			}
			email, nerr := people.NormalizeEmail(claims.Email)
			if nerr != nil {
				return p, pg.ErrNotFound
			}
			p, err = st.MatchByEmail(ctx, id.Issuer, id.Subject, email)
		}
	}
	if err == nil && !p.Active() {
		err = persondb.ErrDisabled
	}
	return p, err
}

// start starts a fresh session for the person, ending the browser's
// previous one, and sends the browser on.
func (a *Auth) start(w http.ResponseWriter, r *http.Request, p persondb.Person, next string) {
	var replaces []byte
	if c, err := r.Cookie(a.session); err == nil && c.Value != "" {
		replaces = opaque.Hash(c.Value)
	}
	token := opaque.New()
	ses, err := a.o.Store.StartSession(r.Context(), persondb.NewSession{TokenHash: opaque.Hash(token), Replaces: replaces, PersonID: p.ID,
		CSRFToken: opaque.New(), Issuer: a.o.Provider.Issuer, Lifetime: SessionLifetime, Idle: SessionIdle})
	if errors.Is(err, persondb.ErrDisabled) {
		a.page(w, r, http.StatusForbidden, "not_linked")
		return
	}
	if err != nil {
		a.pages.Fail(w, r, err)
		return
	}
	a.log.InfoContext(r.Context(), "console: signed in", "person", p.ID, "session", ses.ID, "issuer", a.o.Provider.Issuer)
	a.setCookie(w, a.session, token, SessionLifetime)
	a.pages.SetHeaders(w.Header())
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// setCookie sets (maxAge > 0) or removes (maxAge < 0) one of the
// console's cookies: HttpOnly, SameSite=Lax (the provider's redirect back
// is a top-level GET that carries it), Secure under https.
func (a *Auth) setCookie(w http.ResponseWriter, name, value string, maxAge time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: a.secure, SameSite: http.SameSiteLaxMode,
		MaxAge: int(maxAge / time.Second)}
	if maxAge < 0 {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// current is the browser's session: ok is false when it has none that
// is alive.
func (a *Auth) current(r *http.Request) (persondb.Session, []byte, bool, error) {
	c, err := r.Cookie(a.session)
	if err != nil || c.Value == "" {
		return persondb.Session{}, nil, false, nil
	}
	h := opaque.Hash(c.Value)
	s, err := a.o.Store.Session(r.Context(), h, SessionIdle)
	if errors.Is(err, pg.ErrNotFound) {
		return s, h, false, nil
	}
	return s, h, err == nil, err
}

// SignedIn is who is signed in with the request. Without a live
// session, a page is sent to sign in and back; a form gets a page that
// says the session has ended.
func (a *Auth) SignedIn(w http.ResponseWriter, r *http.Request) (console.Person, bool) {
	s, _, ok, err := a.current(r)
	if err != nil {
		a.pages.Fail(w, r, err)
		return console.Person{}, false
	}
	if ok {
		return console.Person{ID: s.Person.ID, AccountID: s.Person.AccountID, Email: s.Person.Email, Role: string(s.Person.Role),
			Language: s.Person.Language, CSRFToken: s.CSRFToken}, true
	}
	if _, err := r.Cookie(a.session); err == nil {
		a.setCookie(w, a.session, "", -1)
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		a.pages.SetHeaders(w.Header())
		http.Redirect(w, r, Path+"?"+url.Values{"next": {r.URL.RequestURI()}}.Encode(), http.StatusSeeOther)
		return console.Person{}, false
	}
	a.page(w, r, http.StatusForbidden, "session_ended")
	return console.Person{}, false
}

// signOut is POST /console/sign-out, from the console's own page with
// the session's CSRF token.
func (a *Auth) signOut(w http.ResponseWriter, r *http.Request) {
	s, h, ok, err := a.current(r)
	switch {
	case err != nil:
		a.pages.Fail(w, r, err)
		return
	case !ok:
		a.setCookie(w, a.session, "", -1)
		a.page(w, r, http.StatusOK, "signed_out")
		return
	case r.Header.Get("Origin") != a.origin || !console.ValidCSRF(r, s.CSRFToken):
		a.pages.Forbidden(w, r)
		return
	}
	if err := a.o.Store.EndSession(r.Context(), h); err != nil {
		a.pages.Fail(w, r, err)
		return
	}
	a.setCookie(w, a.session, "", -1)
	a.page(w, r, http.StatusOK, "signed_out")
}
