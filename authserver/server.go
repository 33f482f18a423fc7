// Package authserver is Touchpoint's built-in OAuth 2.0 / OIDC issuer
// (`touchpoint auth`): the client-credentials token endpoint, the
// discovery document and the JWKS, with signing keys kept in PostgreSQL.
package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/touchpoint/touchpoint/internal/clientip"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/store/authdb"
)

// Paths served below the issuer URL.
const (
	TokenPath     = "/oauth/token"
	DiscoveryPath = "/.well-known/openid-configuration"
	JWKSPath      = "/.well-known/jwks.json"
	// HealthPath answers 200 while the process runs: its liveness and
	// readiness probe.
	HealthPath = "/healthz"
)

// Scope is the scope of every token, as the documented API shows it.
const Scope = "profile email"

// Store is what the issuer reads and writes: its clients, and its signing
// keys.
type Store interface {
	ClientByID(ctx context.Context, clientID string) (authdb.Client, error)
	SigningKeys(ctx context.Context) ([]authdb.SigningKey, error)
	EditSigningKeys(ctx context.Context, decide func(existing []authdb.SigningKey) ([]authdb.SigningKey, error)) (bool, error)
}

// Options configure a Server. Store, Issuer, Audience and SecretKey are
// required; zero durations take the defaults noted.
type Options struct {
	Store     Store
	Issuer    string // the public auth URL: iss of every token
	Audience  string // the API's base URL: the only audience served
	SecretKey string // TOUCHPOINT_SECRET_KEY

	TokenLifetime  time.Duration // absolute lifetime (exp − iat); 1h
	IdleTimeout    time.Duration // sliding lifetime, reported as expires_in; 300s
	KeyRotation    time.Duration // age at which a new signing key is made; 30 days
	ReloadInterval time.Duration // how often Run re-reads keys and checks rotation; 30s
	MaxBodyBytes   int64         // token request body limit; 8 KiB
	// JWKSRefresh is how often verifiers refetch the JWKS at most
	// (TOUCHPOINT_JWKS_REFRESH); 5m. A new key is published for this long
	// plus ReloadInterval plus the JWKS's max-age before it signs.
	JWKSRefresh time.Duration
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client address that failed attempts are limited by.
	TrustedProxies []netip.Prefix

	// People signs people in to the relying parties (the console) with
	// links sent by Mail. Without it the issuer offers client credentials
	// only.
	People         PeopleStore
	Mail           mail.Sender
	RelyingParties []RelyingParty

	Logger *slog.Logger     // default slog.Default()
	Now    func() time.Time // default time.Now; tests inject a clock
}

// Server is the issuer: an http.Handler plus a Run loop that keeps its
// signing keys in step with the database.
type Server struct {
	opts      Options
	clientKey []byte // keys the client-secret hash
	dummyHash []byte // compared against for unknown clients, to spend the same time
	keys      *keys
	failures  *failureLimits
	clients   clientip.Resolver // finds the address failed attempts count against
	mux       *http.ServeMux
	log       *slog.Logger
	people    *signIn // nil: nobody signs in here
}

// New checks the options, makes sure a current signing key exists
// (creating one under an advisory lock if needed) and loads the keys.
func New(ctx context.Context, opts Options) (*Server, error) {
	switch {
	case opts.Store == nil:
		return nil, errors.New("authserver: no store")
	case opts.Issuer == "" || opts.Audience == "":
		return nil, errors.New("authserver: issuer and audience are required")
	case opts.SecretKey == "":
		return nil, errors.New("authserver: no secret key")
	}
	opts.Issuer = strings.TrimRight(opts.Issuer, "/")
	opts.Audience = strings.TrimRight(opts.Audience, "/")
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opts.TokenLifetime, time.Hour)
	def(&opts.IdleTimeout, 300*time.Second)
	def(&opts.KeyRotation, 30*24*time.Hour)
	def(&opts.ReloadInterval, 30*time.Second)
	def(&opts.JWKSRefresh, 5*time.Minute)
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 8 << 10
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	box, err := secretkey.NewBox(secretkey.Derive(opts.SecretKey, secretkey.SigningKeySeal))
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:      opts,
		clientKey: secretkey.Derive(opts.SecretKey, secretkey.ClientSecret),
		keys: &keys{store: opts.Store, box: box,
			now: opts.Now, rotation: opts.KeyRotation,
			lead: opts.JWKSRefresh + opts.ReloadInterval + jwksMaxAge,
			// Another replica may sign with a superseded key until its
			// next reload; allow two reloads and a minute of clock skew.
			retain: opts.TokenLifetime + 2*opts.ReloadInterval + time.Minute},
		failures: newFailureLimits(maxLimitEntries),
		clients:  clientip.New(opts.TrustedProxies),
		mux:      http.NewServeMux(),
		log:      opts.Logger,
	}
	s.dummyHash = HashClientSecret(s.clientKey, "no such client")
	if _, err := s.keys.ensure(ctx, false); err != nil {
		return nil, err
	}
	if err := s.keys.load(ctx); err != nil {
		return nil, fmt.Errorf("load signing keys: %w", err)
	}
	s.mux.HandleFunc(TokenPath, s.token)
	if opts.People != nil {
		if opts.Mail == nil || len(opts.RelyingParties) == 0 {
			return nil, errors.New("authserver: people sign in by mail to a relying party: Mail and RelyingParties are required")
		}
		if s.people, err = newSignIn(opts); err != nil {
			return nil, fmt.Errorf("authserver: sign-in pages: %w", err)
		}
		s.mux.HandleFunc(AuthorizePath, s.authorize)
		s.mux.HandleFunc(SignInPath, s.linkPage)
	}
	s.mux.HandleFunc("GET "+DiscoveryPath, s.discovery)
	s.mux.HandleFunc("GET "+JWKSPath, s.jwks)
	s.mux.HandleFunc("GET "+HealthPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Run rotates and reloads the signing keys every ReloadInterval until ctx
// ends, so replicas converge on the newest key. Database errors are
// logged and retried at the next tick: the cached keys keep working.
func (s *Server) Run(ctx context.Context) error {
	if s.people != nil {
		for range mailWorkers {
			go s.sendMails(ctx)
		}
	}
	t := time.NewTicker(s.opts.ReloadInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := s.keys.ensure(ctx, false); err != nil && ctx.Err() == nil {
			s.log.Warn("signing key rotation check failed", "error", err)
		}
		if err := s.keys.load(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("reload signing keys failed", "error", err)
		}
	}
}

// Rotate creates a new signing key now (`touchpoint keys rotate`; the
// age-based rotation of Run needs no call). It is published at once and
// signs from its ActiveFrom, one JWKS refresh (plus a reload and the
// JWKS's max-age) later; tokens signed with older keys stay verifiable
// while they can be valid.
func (s *Server) Rotate(ctx context.Context) (KeyInfo, error) {
	kid, err := s.keys.ensure(ctx, true)
	if err != nil {
		return KeyInfo{}, err
	}
	info, err := s.keys.loadInfo(ctx)
	if err != nil {
		return KeyInfo{}, err
	}
	for _, ki := range info {
		if ki.KID == kid {
			return ki, nil
		}
	}
	return KeyInfo{}, fmt.Errorf("rotated key %s not found after reload", kid)
}

// Retire withdraws a signing key (`touchpoint keys retire KID`), as after
// its compromise: it is no longer published, so verifiers reject the
// tokens it signed once they refresh the key set, and it never signs
// again. Retiring the key that signs now makes a pending key (or a new
// one) sign at once; replicas that have not reloaded yet may sign with
// the retired key until their next reload (ReloadInterval). An unknown
// kid wraps store.ErrNotFound; retiring twice is harmless.
func (s *Server) Retire(ctx context.Context, kid string) error {
	if err := s.keys.retire(ctx, kid); err != nil {
		return err
	}
	return s.keys.load(ctx)
}

// Keys lists every signing key, newest first, with its state.
func (s *Server) Keys(ctx context.Context) ([]KeyInfo, error) { return s.keys.loadInfo(ctx) }

// CurrentKeyID is the kid new tokens are signed with.
func (s *Server) CurrentKeyID() string {
	if k := s.keys.snapshot().current(s.opts.Now()); k != nil {
		return k.kid
	}
	return ""
}

// discovery serves the OpenID Provider Metadata go-oidc and other OIDC
// libraries read. Clients get tokens with client credentials; people sign
// in to the relying parties with the authorization code flow and PKCE.
func (s *Server) discovery(w http.ResponseWriter, r *http.Request) {
	iss := s.opts.Issuer
	doc := map[string]any{
		"issuer":                                iss,
		"token_endpoint":                        iss + TokenPath,
		"jwks_uri":                              iss + JWKSPath,
		"grant_types_supported":                 []string{"client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_post", "client_secret_basic"},
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{string(Algorithm)},
		"scopes_supported":                      strings.Fields(Scope),
		"claims_supported":                      []string{"iss", "sub", "aud", "azp", "client_id", "iat", "exp", "jti", "scope", "account", "group"},
	}
	if s.people != nil {
		doc["authorization_endpoint"] = iss + AuthorizePath
		doc["grant_types_supported"] = []string{"client_credentials", "authorization_code"}
		doc["token_endpoint_auth_methods_supported"] = []string{"client_secret_post", "client_secret_basic", "none"}
		doc["code_challenge_methods_supported"] = []string{"S256"}
		doc["scopes_supported"] = append([]string{"openid"}, strings.Fields(Scope)...)
		doc["claims_supported"] = append(doc["claims_supported"].([]string), "auth_time", "nonce", "email", "email_verified")
		doc["authorization_response_iss_parameter_supported"] = true
	}
	writeJSON(w, http.StatusOK, "public, max-age=60", doc)
}

// jwksMaxAge is how long verifiers and caches may keep the JWKS.
const jwksMaxAge = time.Minute

// jwks serves the public keys from memory: an unauthenticated request
// never costs a query. Run reloads them every ReloadInterval, and a new
// key is published long before it signs, so no verifier meets a kid the
// JWKS does not list yet.
func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, fmt.Sprintf("public, max-age=%d", int(jwksMaxAge/time.Second)),
		jose.JSONWebKeySet{Keys: s.keys.snapshot().published})
}

func writeJSON(w http.ResponseWriter, status int, cacheControl string, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", cacheControl)
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) // the status is sent; a write error only means the client left
}
