package authserver

// People sign in to the console here with the authorization code flow:
// the console sends the browser to GET /oauth/authorize, the person gives
// their address, the issuer mails a one-time link, the link's page asks
// for a click (a mail scanner that fetches links never clicks), and the
// click sends the browser back to the console with a code, which the
// console trades at /oauth/token, with the PKCE verifier, for an ID token.
//
// What protects it:
//   - The page answers the same whatever the address: known, unknown or
//     disabled. The look-up and the mail happen after the answer, in the
//     background, so not even its timing tells.
//   - Requests are limited per client address and per address asked for,
//     before anything is looked up; mails per person per hour, in
//     PostgreSQL, whatever the replica.
//   - The link works once, for 15 minutes, and only in the browser that
//     asked for it: that browser holds a random cookie whose hash the link
//     is stored with. A link read by someone else is of no use to them.
//   - Its page changes nothing when fetched; the sign-in is a POST from
//     the page itself (its Origin is checked), so a prefetching scanner
//     cannot spend it.
//   - Forms post to the issuer's own origin only, checked by Origin: no
//     other site makes a browser ask for links or sign in.

import (
	"context"
	"crypto/sha256"
	"embed"
	"errors"
	"html/template"
	"io"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/touchpoint/touchpoint/internal/clientip"
	"github.com/touchpoint/touchpoint/internal/htmlpage"
	"github.com/touchpoint/touchpoint/internal/opaque"
	"github.com/touchpoint/touchpoint/internal/ratelimit"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Paths of people's sign-in.
const (
	// AuthorizePath is the authorization endpoint: the page that asks for
	// a person's address.
	AuthorizePath = "/oauth/authorize"
	// SignInPath is the one-time link's page, and its confirmation.
	SignInPath = "/oauth/sign-in"
)

// Lifetimes and limits of people's sign-ins.
const (
	// LinkLifetime is how long a sign-in link works.
	LinkLifetime = 15 * time.Minute
	// MailsPerHour is how many sign-in mails one person gets in an hour
	// at most; asking again after that sends nothing.
	MailsPerHour = 5
	// IDTokenLifetime is how long an ID token may be presented; the
	// console trades it for a session at once.
	IDTokenLifetime = 5 * time.Minute
	// codeLifetime is how long an authorization code may be traded.
	codeLifetime = time.Minute
	// browserCookieAge keeps the browser's cookie for a working day: any
	// link asked for in it meanwhile works there.
	browserCookieAge = 12 * time.Hour
	// maxPeopleBody bounds the body of a sign-in form.
	maxPeopleBody = 8 << 10
	// maxParam bounds state, nonce and the other free parameters.
	maxParam = 512
)

// PeopleStore is what the issuer reads and writes to sign people in.
type PeopleStore interface {
	PersonByEmail(ctx context.Context, email string) (persondb.Person, error)
	CreateSignInLink(ctx context.Context, l persondb.SignInLink, ttl time.Duration, maxPerHour int) (persondb.SignInLink, error)
	SignInLinkByToken(ctx context.Context, tokenHash []byte) (persondb.SignInLink, persondb.Person, error)
	UseSignInLink(ctx context.Context, tokenHash, browserHash, codeHash []byte, ttl time.Duration) (persondb.SignInLink, persondb.AuthCode, error)
	UseAuthCode(ctx context.Context, codeHash []byte) (persondb.AuthCode, persondb.Person, error)
}

// RelyingParty is an application people sign in to: a public client,
// which proves at the token endpoint that it asked for the code (PKCE,
// S256) instead of holding a secret.
type RelyingParty struct {
	ClientID string
	// RedirectURIs are the only addresses codes are sent to, compared
	// exactly.
	RedirectURIs []string
	// Home is where a person starts over when a link no longer works.
	Home string
}

//go:embed html/*.html locales/*.json
var peopleFiles embed.FS

// signIn is the people's side of the issuer.
type signIn struct {
	store    PeopleStore
	mail     mail.Sender
	parties  map[string]RelyingParty
	site     *htmlpage.Site
	mailHTML *template.Template
	origin   string // the issuer's own, which forms must come from
	cookie   string // the name of the browser's cookie
	secure   bool
	byAddr   *ratelimit.Limiter[netip.Addr]
	byEmail  *ratelimit.Limiter[[32]byte]
	queue    chan signInMail
	pending  atomic.Int64 // mails asked for and not yet dealt with
}

// Limits of asking for links, before anything is looked up: per client
// address (IPv6 by its /64) 20, then one every 30 s; per address asked
// for 5, then one every 2 minutes.
const (
	askAddrBurst   = 20
	askAddrRefill  = 30 * time.Second
	askEmailBurst  = 5
	askEmailRefill = 2 * time.Minute
	// mailQueue is how many mails may wait; beyond it a request's mail is
	// dropped (and logged): the person asks again.
	mailQueue = 256
)

func newSignIn(o Options) (*signIn, error) {
	texts, err := htmlpage.LoadTexts(peopleFiles, "locales/*.json")
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(o.Issuer)
	if err != nil {
		return nil, err
	}
	si := &signIn{store: o.People, mail: o.Mail, parties: map[string]RelyingParty{}, origin: u.Scheme + "://" + u.Host,
		secure: u.Scheme == "https", cookie: "tp-sign-in",
		byAddr:  ratelimit.New[netip.Addr](1/askAddrRefill.Seconds(), askAddrBurst, maxLimitEntries),
		byEmail: ratelimit.New[[32]byte](1/askEmailRefill.Seconds(), askEmailBurst, maxLimitEntries),
		queue:   make(chan signInMail, mailQueue)}
	if si.secure {
		// Host-only, Secure, Path=/: no subdomain can set or overwrite it.
		si.cookie = "__Host-tp-sign-in"
	}
	var formAction []string
	for _, rp := range o.RelyingParties {
		si.parties[rp.ClientID] = rp
		for _, ru := range rp.RedirectURIs {
			if ou, err := url.Parse(ru); err == nil && !slices.Contains(formAction, ou.Scheme+"://"+ou.Host) {
				formAction = append(formAction, ou.Scheme+"://"+ou.Host)
			}
		}
	}
	// The confirmation's post redirects to a relying party: a browser
	// holds the redirect to the form-action of the page that posted.
	si.site, err = htmlpage.New(htmlpage.Options{Pages: peopleFiles, Names: []string{"html/signin", "html/sent", "html/confirm",
		"html/message"}, Texts: texts, FormAction: formAction, HSTS: si.secure})
	if err != nil {
		return nil, err
	}
	si.mailHTML, err = template.ParseFS(peopleFiles, "html/mail.html")
	return si, err
}

// authzRequest is an authorization request, checked.
type authzRequest struct {
	ClientID, RedirectURI, State, Nonce, CodeChallenge string
	Locale                                             string // from ui_locales, "" when none is ours
	values                                             url.Values
}

// authzParams are the parameters the page's form carries along.
var authzParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge",
	"code_challenge_method", "ui_locales"}

// authzError is a refused authorization request: sent back to the
// relying party when its redirect URI is known, else shown.
type authzError struct {
	code, description string
}

// parseAuthz checks an authorization request. rp is nil when the client
// or its redirect URI is unknown: then nothing may be sent back to it.
func (si *signIn) parseAuthz(v url.Values) (authzRequest, *RelyingParty, *authzError) {
	req := authzRequest{ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"), State: v.Get("state"),
		Nonce: v.Get("nonce"), CodeChallenge: v.Get("code_challenge"), values: url.Values{}}
	rp, ok := si.parties[req.ClientID]
	if !ok || len(v["client_id"]) != 1 || len(v["redirect_uri"]) != 1 || !slices.Contains(rp.RedirectURIs, req.RedirectURI) {
		return req, nil, &authzError{"invalid_request", "unknown client or redirect_uri"}
	}
	for _, name := range authzParams {
		switch vs := v[name]; {
		case len(vs) > 1:
			return req, &rp, &authzError{"invalid_request", name + " is repeated"}
		case len(vs) == 1 && len(vs[0]) > maxParam:
			return req, &rp, &authzError{"invalid_request", name + " is too long"}
		case len(vs) == 1:
			req.values.Set(name, vs[0])
		}
	}
	switch {
	case v.Get("response_type") != "code":
		return req, &rp, &authzError{"unsupported_response_type", "only response_type=code is supported"}
	case !slices.Contains(strings.Fields(v.Get("scope")), "openid"):
		return req, &rp, &authzError{"invalid_scope", "scope must include openid"}
	case v.Get("code_challenge_method") != "S256" || !opaque.WellFormed(req.CodeChallenge):
		return req, &rp, &authzError{"invalid_request", "PKCE is required: code_challenge with code_challenge_method=S256"}
	case req.State == "":
		return req, &rp, &authzError{"invalid_request", "state is required"}
	case req.Nonce == "":
		return req, &rp, &authzError{"invalid_request", "nonce is required"}
	}
	for _, l := range strings.Fields(v.Get("ui_locales")) {
		if p := si.site.Texts().Pick(l); p != "en" || strings.HasPrefix(strings.ToLower(l), "en") {
			req.Locale = p
			break
		}
	}
	return req, &rp, nil
}

// refuse sends a refused request back to the relying party (RFC 6749
// §4.1.2.1, with the issuer per RFC 9207).
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, req authzRequest, e *authzError) {
	q := url.Values{"error": {e.code}, "error_description": {e.description}, "iss": {s.opts.Issuer}}
	if req.State != "" {
		q.Set("state", req.State)
	}
	s.people.site.SetHeaders(w.Header())
	http.Redirect(w, r, req.RedirectURI+"?"+q.Encode(), http.StatusSeeOther)
}

// locale is the language of a page: the request's ui_locales, else the
// browser's.
func (si *signIn) locale(r *http.Request, req authzRequest) string {
	if req.Locale != "" {
		return req.Locale
	}
	return si.site.Texts().FromAcceptLanguage(r.Header.Get("Accept-Language"))
}

// message is the view of a page that only tells something.
type message struct {
	Title, Body, Link, LinkText, Minutes string
}

func (s *Server) page(w http.ResponseWriter, r *http.Request, status int, name, locale string, view any) {
	if err := s.people.site.Render(w, status, name, locale, view); err != nil {
		s.log.Error("render sign-in page", "page", name, "error", err)
	}
}

func (s *Server) messagePage(w http.ResponseWriter, r *http.Request, status int, locale string, m message) {
	s.page(w, r, status, "html/message", locale, m)
}

// signInView is the address form.
type signInView struct {
	Action string
	Hidden []hiddenField
	Email  string
	Error  string // the text key of the address's error
}

type hiddenField struct{ Name, Value string }

func (req authzRequest) hidden() []hiddenField {
	var out []hiddenField
	for _, name := range authzParams {
		if req.values.Has(name) {
			out = append(out, hiddenField{name, req.values.Get(name)})
		}
	}
	return out
}

// authorize is GET and POST /oauth/authorize.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	si := s.people
	lang := si.site.Texts().FromAcceptLanguage(r.Header.Get("Accept-Language"))
	var v url.Values
	switch r.Method {
	case http.MethodGet:
		v = r.URL.Query()
	case http.MethodPost:
		if !si.sameOrigin(r) {
			s.messagePage(w, r, http.StatusForbidden, lang, message{Title: "forbidden_title", Body: "forbidden_body"})
			return
		}
		var ok bool
		if v, ok = readForm(w, r); !ok {
			s.messagePage(w, r, http.StatusBadRequest, lang, message{Title: "bad_request_title", Body: "bad_request_body"})
			return
		}
	default:
		w.Header().Set("Allow", "GET, POST")
		s.messagePage(w, r, http.StatusMethodNotAllowed, lang, message{Title: "not_allowed_title", Body: "not_allowed_body"})
		return
	}
	req, rp, aerr := si.parseAuthz(v)
	switch {
	case rp == nil:
		s.messagePage(w, r, http.StatusBadRequest, lang, message{Title: "bad_request_title", Body: "bad_request_body"})
		return
	case aerr != nil:
		s.refuse(w, r, req, aerr)
		return
	}
	lang = si.locale(r, req)
	view := signInView{Action: AuthorizePath, Hidden: req.hidden()}
	if r.Method == http.MethodGet {
		if hint, err := people.NormalizeEmail(v.Get("login_hint")); err == nil {
			view.Email = hint
		}
		s.page(w, r, http.StatusOK, "html/signin", lang, view)
		return
	}
	view.Email = strings.TrimSpace(v.Get("email"))
	email, err := people.NormalizeEmail(view.Email)
	if err != nil {
		view.Error = "error_email"
		s.page(w, r, http.StatusBadRequest, "html/signin", lang, view)
		return
	}
	if wait := si.ask(s.clients.Addr(r), email, s.opts.Now()); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		s.messagePage(w, r, http.StatusTooManyRequests, lang, message{Title: "too_many_title", Body: "too_many_body",
			Minutes: strconv.Itoa(int(math.Ceil(wait.Minutes())))})
		return
	}
	browser := si.browser(w, r)
	si.pending.Add(1)
	select {
	case si.queue <- signInMail{email: email, locale: lang, browserHash: opaque.Hash(browser), req: req}:
	default:
		si.pending.Add(-1)
		s.log.Warn("sign-in mail dropped: the queue is full", "to", mail.MaskEmail(email))
	}
	again := AuthorizePath + "?" + req.values.Encode()
	s.page(w, r, http.StatusOK, "html/sent", lang, struct{ Email, Again string }{email, again})
}

// ask takes a token from the client address's and the asked address's
// buckets; it returns how long to wait when either is empty.
func (si *signIn) ask(addr netip.Addr, email string, now time.Time) time.Duration {
	okAddr, waitAddr := si.byAddr.Allow(clientip.Group(addr), now)
	if !okAddr {
		return waitAddr
	}
	okEmail, waitEmail := si.byEmail.Allow(sha256.Sum256([]byte(email)), now)
	if !okEmail {
		return waitEmail
	}
	return 0
}

// browser returns the browser's sign-in cookie, set anew unless it
// carries a well-formed one: links asked for earlier in it keep working.
func (si *signIn) browser(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(si.cookie); err == nil && opaque.WellFormed(c.Value) {
		return c.Value
	}
	v := opaque.New()
	http.SetCookie(w, &http.Cookie{Name: si.cookie, Value: v, Path: "/", MaxAge: int(browserCookieAge / time.Second),
		HttpOnly: true, Secure: si.secure, SameSite: http.SameSiteLaxMode})
	return v
}

// browserHash is the hash of the request's sign-in cookie; nil without.
func (si *signIn) browserHash(r *http.Request) []byte {
	if c, err := r.Cookie(si.cookie); err == nil && opaque.WellFormed(c.Value) {
		return opaque.Hash(c.Value)
	}
	return nil
}

// sameOrigin reports whether a form post came from the issuer's own
// pages: browsers name the page's origin in every POST.
func (si *signIn) sameOrigin(r *http.Request) bool {
	return r.Header.Get("Origin") == si.origin
}

// readForm reads a url-encoded form body of at most maxPeopleBody bytes.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPeopleBody))
	if err != nil {
		return nil, false
	}
	v, err := url.ParseQuery(string(body))
	return v, err == nil
}

// linkPage is GET and POST /oauth/sign-in: the link's page, which asks
// for a click, and the click.
func (s *Server) linkPage(w http.ResponseWriter, r *http.Request) {
	si := s.people
	lang := si.site.Texts().FromAcceptLanguage(r.Header.Get("Accept-Language"))
	var token string
	switch r.Method {
	case http.MethodGet:
		token = r.URL.Query().Get("token")
	case http.MethodPost:
		v, ok := readForm(w, r)
		if !si.sameOrigin(r) || !ok {
			s.messagePage(w, r, http.StatusForbidden, lang, message{Title: "forbidden_title", Body: "forbidden_body"})
			return
		}
		token = v.Get("token")
	default:
		w.Header().Set("Allow", "GET, POST")
		s.messagePage(w, r, http.StatusMethodNotAllowed, lang, message{Title: "not_allowed_title", Body: "not_allowed_body"})
		return
	}
	if !opaque.WellFormed(token) {
		s.deadLink(w, r, http.StatusNotFound, lang, "")
		return
	}
	browser := si.browserHash(r)
	if r.Method == http.MethodGet {
		l, p, err := si.store.SignInLinkByToken(r.Context(), opaque.Hash(token))
		if err == nil && !p.Active() {
			err = persondb.ErrDisabled
		}
		if err == nil {
			err = l.Check(s.opts.Now(), browser)
		}
		if err != nil {
			s.linkRefused(w, r, lang, l, err)
			return
		}
		s.page(w, r, http.StatusOK, "html/confirm", lang, struct{ Email, Token, Action string }{p.Email, token, SignInPath})
		return
	}
	code := opaque.New()
	l, _, err := si.store.UseSignInLink(r.Context(), opaque.Hash(token), browser, opaque.Hash(code), codeLifetime)
	if err != nil {
		s.linkRefused(w, r, lang, l, err)
		return
	}
	q := url.Values{"code": {code}, "state": {l.State}, "iss": {s.opts.Issuer}}
	si.site.SetHeaders(w.Header())
	http.Redirect(w, r, l.RedirectURI+"?"+q.Encode(), http.StatusSeeOther)
}

// linkRefused answers a link that does not sign in.
func (s *Server) linkRefused(w http.ResponseWriter, r *http.Request, lang string, l persondb.SignInLink, err error) {
	switch {
	case errors.Is(err, persondb.ErrOtherBrowser):
		s.messagePage(w, r, http.StatusForbidden, lang, message{Title: "other_title", Body: "other_body",
			Link: s.people.parties[l.ClientID].Home, LinkText: "again_link"})
	case errors.Is(err, persondb.ErrLinkUsed), errors.Is(err, persondb.ErrLinkExpired), errors.Is(err, persondb.ErrDisabled):
		s.deadLink(w, r, http.StatusGone, lang, l.ClientID)
	case errors.Is(err, pg.ErrNotFound):
		s.deadLink(w, r, http.StatusNotFound, lang, l.ClientID)
	default:
		s.log.Error("sign-in link", "error", err)
		s.messagePage(w, r, http.StatusServiceUnavailable, lang, message{Title: "unavailable_title", Body: "unavailable_body"})
	}
}

func (s *Server) deadLink(w http.ResponseWriter, r *http.Request, status int, lang, clientID string) {
	m := message{Title: "dead_title", Body: "dead_body", LinkText: "again_link"}
	if rp, ok := s.people.parties[clientID]; ok {
		m.Link = rp.Home
	} else if len(s.people.parties) == 1 {
		for _, rp := range s.people.parties {
			m.Link = rp.Home
		}
	}
	s.messagePage(w, r, status, lang, m)
}
