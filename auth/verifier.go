package auth

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/authdb"
	"github.com/touchpoint/touchpoint/text"
)

// Issuer is one OIDC provider whose access tokens the API accepts.
type Issuer struct {
	// URL is the issuer exactly as in its tokens' iss claim.
	URL string
	// DiscoveryURL is where its discovery document is fetched when that
	// differs from URL (the issuer's public address is not reachable from
	// inside a container network). The document must still name URL as
	// its issuer; a jwks_uri under URL is rewritten onto DiscoveryURL.
	DiscoveryURL string
	// JWKSURL overrides the jwks_uri of the discovery document.
	JWKSURL string
	// Audience is the aud its tokens must carry; default Options.Audience.
	Audience string
	// MaxLifetime is the longest exp − iat accepted from it; default
	// Options.MaxTokenLifetime.
	MaxLifetime time.Duration
}

// Store is what a Verifier reads and writes: the API clients tokens map
// to, and the last use of each token.
type Store interface {
	ClientByIssuer(ctx context.Context, issuer, clientID string) (authdb.Client, error)
	TokenLastUse(ctx context.Context, jti string) (last time.Time, ok bool, err error)
	RecordTokenUses(ctx context.Context, uses []authdb.TokenUse) error
}

// Options configure a Verifier. Store, Issuers and Audience are required.
type Options struct {
	Store   Store
	Issuers []Issuer
	// BuiltInIssuer is the built-in issuer's URL (cfg.AuthURL): its tokens
	// map to built-in clients by azp; other issuers' tokens map to the
	// clients linked for (iss, azp or client_id).
	BuiltInIssuer string
	Audience      string // the API's base URL

	IdleTimeout        time.Duration // sliding lifetime; 300s
	FlushInterval      time.Duration // token-use write interval and idle tolerance; 2s, at most 5s
	ClientCacheTTL     time.Duration // how long client rows are cached; FlushInterval
	KeyRefetchInterval time.Duration // least time between JWKS refetches (unknown kids, cache headers); 10s
	// KeyRefresh is how often every issuer's JWKS is refetched, sooner
	// when its cache headers say so: a key withdrawn at the issuer stops
	// verifying within it. 5m; at most 5m.
	KeyRefresh time.Duration
	// MaxTokenLifetime is the longest exp − iat accepted (Issuer.MaxLifetime
	// overrides it per issuer); 1h.
	MaxTokenLifetime time.Duration
	DiscoveryRetry   time.Duration // first discovery retry delay, doubling to a minute; 1s
	HTTPClient       *http.Client  // for discovery and JWKS; default: 10s timeout

	Logger *slog.Logger     // default slog.Default()
	Now    func() time.Time // default time.Now; tests inject a clock
}

// Verifier is the API's Authenticator: it verifies access tokens with
// go-oidc against the configured issuers, maps them to API clients and
// enforces revocation and the sliding idle lifetime. Run must be running
// for discovery and for writing token uses.
//
// Client rows are cached for ClientCacheTTL (default the flush interval,
// 2s): a revocation, deletion or group change takes effect on every
// replica within that time.
type Verifier struct {
	opts     Options
	issuers  map[string]*issuer
	clients  clientCache
	verified verifiedCache
	uses     *useTracker
	log      *slog.Logger
}

var _ Authenticator = (*Verifier)(nil)

// issuer is the discovery state of one Issuer.
type issuer struct {
	cfg     Issuer
	builtIn bool

	mu       sync.RWMutex
	verifier *oidc.IDTokenVerifier // nil until discovery succeeded
	keys     *keySet               // set with verifier
	err      error                 // last discovery error
}

// New checks the options; it does no I/O (discovery happens in Run).
func New(opts Options) (*Verifier, error) {
	if opts.Store == nil || opts.Audience == "" || len(opts.Issuers) == 0 {
		return nil, errors.New("auth: store, audience and at least one issuer are required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&opts.IdleTimeout, 300*time.Second)
	def(&opts.FlushInterval, 2*time.Second)
	def(&opts.ClientCacheTTL, opts.FlushInterval)
	def(&opts.KeyRefetchInterval, 10*time.Second)
	def(&opts.DiscoveryRetry, time.Second)
	def(&opts.KeyRefresh, 5*time.Minute)
	def(&opts.MaxTokenLifetime, time.Hour)
	if opts.FlushInterval > 5*time.Second {
		return nil, errors.New("auth: the flush interval must be at most 5s")
	}
	if opts.KeyRefresh > 5*time.Minute {
		return nil, errors.New("auth: the key refresh must be at most 5m")
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.BuiltInIssuer = strings.TrimRight(opts.BuiltInIssuer, "/")
	v := &Verifier{opts: opts, issuers: map[string]*issuer{}, log: opts.Logger,
		clients: clientCache{store: opts.Store, ttl: opts.ClientCacheTTL, now: opts.Now, m: map[clientKey]cachedClient{}},
		uses: &useTracker{store: opts.Store, idle: opts.IdleTimeout, flush: opts.FlushInterval, now: opts.Now,
			log: opts.Logger, uses: map[string]*tokenUse{}},
	}
	for _, is := range opts.Issuers {
		if is.URL == "" {
			return nil, errors.New("auth: an issuer has no URL")
		}
		if is.Audience == "" {
			is.Audience = opts.Audience
		}
		if is.MaxLifetime <= 0 {
			is.MaxLifetime = opts.MaxTokenLifetime
		}
		v.issuers[is.URL] = &issuer{cfg: is, builtIn: is.URL == opts.BuiltInIssuer,
			err: errors.New("discovery not done yet")}
	}
	return v, nil
}

// Run discovers every issuer (retrying with back-off until it succeeds)
// and flushes token uses until ctx ends; it then writes the last uses
// and returns nil.
func (v *Verifier) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, is := range v.issuers {
		wg.Go(func() { v.discoverLoop(ctx, is) })
	}
	v.uses.run(ctx)
	wg.Wait()
	return nil
}

// Flush writes the token uses not yet in the database at once (Run does
// it every FlushInterval and when it stops).
func (v *Verifier) Flush(ctx context.Context) error { return v.uses.flushOnce(ctx) }

// Ready reports whether every issuer has been discovered; the error
// wraps ErrUnavailable and names the ones that have not.
func (v *Verifier) Ready() error {
	var errs []error
	for _, is := range v.issuers {
		if _, err := is.ready(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// discoverLoop discovers the issuer, then keeps its key set fresh until
// ctx ends.
func (v *Verifier) discoverLoop(ctx context.Context, is *issuer) {
	delay := v.opts.DiscoveryRetry
	for {
		err := v.discover(ctx, is)
		if err == nil {
			v.log.Info("OIDC issuer discovered", "issuer", is.cfg.URL)
			is.mu.RLock()
			ks := is.keys
			is.mu.RUnlock()
			ks.run(ctx, func(err error) {
				v.log.Warn("refresh of the issuer's keys failed; keeping the keys it had", "issuer", is.cfg.URL, "error", err)
			})
			return
		}
		if ctx.Err() != nil {
			return
		}
		is.mu.Lock()
		is.err = err
		is.mu.Unlock()
		v.log.Warn("OIDC discovery failed; retrying", "issuer", is.cfg.URL, "retry_in", delay, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Minute)
	}
}

// discover fetches the discovery document with go-oidc and the JWKS.
func (v *Verifier) discover(ctx context.Context, is *issuer) error {
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, v.opts.HTTPClient), 30*time.Second)
	defer cancel()
	at := is.cfg.URL
	if is.cfg.DiscoveryURL != "" {
		// go-oidc then skips its issuer check; we make it below.
		at = strings.TrimRight(is.cfg.DiscoveryURL, "/")
		ctx = oidc.InsecureIssuerURLContext(ctx, is.cfg.URL)
	}
	p, err := oidc.NewProvider(ctx, at)
	if err != nil {
		return err
	}
	var meta struct {
		Issuer  string `json:"issuer"`
		JWKSURL string `json:"jwks_uri"`
	}
	if err := p.Claims(&meta); err != nil {
		return err
	}
	if meta.Issuer != is.cfg.URL {
		return fmt.Errorf("discovery document at %s names issuer %q, want %q", at, meta.Issuer, is.cfg.URL)
	}
	jwks := is.cfg.JWKSURL
	if jwks == "" {
		jwks = meta.JWKSURL
		if rest, ok := strings.CutPrefix(jwks, strings.TrimRight(is.cfg.URL, "/")); ok && at != is.cfg.URL {
			jwks = at + rest
		}
	}
	if jwks == "" {
		return errors.New("discovery document has no jwks_uri")
	}
	ks := &keySet{url: jwks, client: v.opts.HTTPClient, now: v.opts.Now, minGap: v.opts.KeyRefetchInterval,
		refresh: v.opts.KeyRefresh}
	if err := ks.update(ctx, true); err != nil {
		return err
	}
	verifier := oidc.NewVerifier(is.cfg.URL, ks, &oidc.Config{
		ClientID:             is.cfg.Audience,
		SupportedSigningAlgs: allowedAlgNames(),
		Now:                  v.opts.Now,
	})
	is.mu.Lock()
	is.verifier, is.keys, is.err = verifier, ks, nil
	is.mu.Unlock()
	return nil
}

func (is *issuer) ready() (*oidc.IDTokenVerifier, error) {
	is.mu.RLock()
	defer is.mu.RUnlock()
	if is.verifier == nil {
		return nil, fmt.Errorf("%w: issuer %s: %v", ErrUnavailable, is.cfg.URL, is.err)
	}
	return is.verifier, nil
}

// claims are the parts of an access token the API reads. Scopes (scope,
// scp) are not among them: a client's access group is stored with it.
type claims struct {
	Issuer   string   `json:"iss"`
	Audience audience `json:"aud"`
	AZP      string   `json:"azp"`
	ClientID string   `json:"client_id"`
	JTI      string   `json:"jti"`
	Typ      string   `json:"typ"`
	// Claims of ID tokens (OpenID Connect Core 1.0 §2, §3.3.2.11).
	Nonce    json.RawMessage `json:"nonce"`
	AtHash   json.RawMessage `json:"at_hash"`
	CHash    json.RawMessage `json:"c_hash"`
	AuthTime json.RawMessage `json:"auth_time"`
}

type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*a = audience{s}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(a))
}

// maxTokenBytes bounds what is parsed at all.
const maxTokenBytes = 16 << 10

// Authenticate verifies a bearer token and returns its Principal. Errors
// wrap ErrInvalidToken with a reason safe to show to the client, or
// ErrUnavailable. The token itself is never logged or returned.
func (v *Verifier) Authenticate(ctx context.Context, raw string) (Principal, error) {
	if raw == "" || len(raw) > maxTokenBytes {
		return Principal{}, invalid("malformed token")
	}
	tok, err := v.verified.get(raw, v.opts.Now())
	if err == nil && !tok.keys.has(tok.kid) {
		err = errNotCached // its key was withdrawn since: verify again, and fail
	}
	if err == errNotCached {
		tok, err = v.verify(ctx, raw)
		if err == nil {
			v.verified.put(raw, tok, v.opts.Now())
		}
	}
	if err != nil {
		return Principal{}, err
	}
	return v.admit(ctx, raw, tok)
}

// verifiedToken is what verify learnt from a token.
type verifiedToken struct {
	is       *issuer
	keys     *keySet // the issuer's keys, which held kid when it was verified
	kid      string
	c        claims
	iat, exp time.Time
}

// verify checks a token's form, signature and claims: everything about
// it that does not change while it is valid.
func (v *Verifier) verify(ctx context.Context, raw string) (verifiedToken, error) {
	// Only the compact form, and only allowed algorithms (no HS*, no none).
	jws, err := jose.ParseSignedCompact(raw, allowedAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return verifiedToken{}, invalid("malformed token or disallowed algorithm")
	}
	var c claims
	if err := json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &c); err != nil {
		return verifiedToken{}, invalid("malformed claims")
	}
	// The unverified iss only picks the verifier, which checks it again.
	is := v.issuers[c.Issuer]
	if is == nil {
		return verifiedToken{}, invalid("unknown issuer")
	}
	verifier, err := is.ready()
	if err != nil {
		return verifiedToken{}, err
	}
	var sigErr error
	tok, err := verifier.Verify(context.WithValue(ctx, sigErrKey{}, &sigErr), raw)
	switch {
	case sigErr != nil:
		return verifiedToken{}, sigErr
	case errors.As(err, new(*oidc.TokenExpiredError)):
		return verifiedToken{}, invalid("token expired")
	case err != nil && !slices.Contains(c.Audience, is.cfg.Audience):
		return verifiedToken{}, invalid("wrong audience")
	case err != nil:
		return verifiedToken{}, invalid("token not valid yet or malformed")
	}
	if err := tok.Claims(&c); err != nil { // now from the verified payload
		return verifiedToken{}, invalid("malformed claims")
	}
	typ, _ := jws.Signatures[0].Header.ExtraHeaders[jose.HeaderType].(string)
	if !isAccessToken(typ, c) {
		return verifiedToken{}, invalid("not an access token")
	}
	if tok.IssuedAt.IsZero() {
		return verifiedToken{}, invalid("token has no iat")
	}
	// go-oidc checks exp (and nbf) but not iat: a token minted for the
	// future, or for longer than allowed, is a forgery or a misconfigured
	// issuer either way.
	if tok.IssuedAt.After(v.opts.Now().Add(maxClockSkew)) {
		return verifiedToken{}, invalid("token issued in the future")
	}
	if tok.Expiry.Sub(tok.IssuedAt) > is.cfg.MaxLifetime {
		return verifiedToken{}, invalid("token lifetime exceeds the maximum")
	}
	is.mu.RLock()
	ks := is.keys
	is.mu.RUnlock()
	return verifiedToken{is: is, keys: ks, kid: jws.Signatures[0].Header.KeyID, c: c, iat: tok.IssuedAt, exp: tok.Expiry}, nil
}

// maxClockSkew is how far in the future a token's iat may lie.
const maxClockSkew = 60 * time.Second

// admit maps a verified token to its client and applies what can change
// while it is valid: the client's existence, revocation and the idle rule.
//
// The client is client_id (RFC 9068, Ory Hydra) or, without one, azp
// (OpenID Connect's authorized party, as Keycloak and Auth0 send it);
// sub is never used (Auth0 writes "<id>@clients" there, Entra an object
// id). A token whose azp and client_id both appear and differ is refused:
// which of the two the issuer meant cannot be known. An external client
// is found by (iss, that id) among the clients linked with `touchpoint
// clients link`, so an external issuer can never speak for a built-in
// client or another issuer's.
func (v *Verifier) admit(ctx context.Context, raw string, tok verifiedToken) (Principal, error) {
	is, c := tok.is, tok.c
	clientID, issuerKey := cmp.Or(c.ClientID, c.AZP), is.cfg.URL
	if c.AZP != "" && c.AZP != clientID {
		return Principal{}, invalid("azp and client_id name different clients")
	}
	if is.builtIn {
		issuerKey = "" // built-in clients are stored with issuer ''
	}
	switch {
	case clientID == "":
		return Principal{}, invalid("token names no client")
	case is.builtIn && !store.ValidID("cli", clientID), !is.builtIn && !validExternalID(clientID):
		// Checked before it becomes a cache key or a log field.
		return Principal{}, invalid("malformed client id")
	}
	cl, err := v.clients.get(ctx, issuerKey, clientID)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, invalid("unknown client")
	}
	if err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if tok.iat.Before(cl.NotBefore) {
		return Principal{}, invalid("token revoked")
	}

	// Token ids are only unique per issuer; a token without one is
	// tracked by its hash.
	useKey := c.JTI
	if useKey == "" {
		sum := sha256.Sum256([]byte(raw))
		useKey = "sha256:" + hex.EncodeToString(sum[:])
	}
	if !is.builtIn {
		useKey = is.cfg.URL + "#" + useKey
	}
	if err := v.uses.use(ctx, useKey, tok.iat, tok.exp); err != nil {
		return Principal{}, err
	}
	return Principal{AccountID: cl.AccountID, ClientID: cl.ID, AccessGroup: cl.AccessGroup, TokenID: c.JTI}, nil
}

// isAccessToken tells an access token from an ID token or any other JWT
// an issuer signs (refresh, logout). The first rule that applies decides:
//
//  1. A typ claim other than "Bearer" (Keycloak's "ID", "Refresh",
//     "Logout", …), or a nonce, at_hash or c_hash claim (which bind an ID
//     token to its authentication request): not an access token.
//  2. JOSE header typ at+jwt or application/at+jwt (RFC 9068): an access
//     token. A header typ other than that, JWT or none: not one.
//  3. The claim typ "Bearer" (Keycloak): an access token.
//  4. A client_id claim and no auth_time (Ory Hydra's JWT access tokens,
//     typ JWT): an access token. ID tokens name their client in aud and
//     azp, never in client_id, and carry auth_time when asked for it.
//  5. Anything else, such as a plain JWT naming its client only in azp,
//     is taken for an ID token: not one. (Auth0 and others issue RFC 9068
//     tokens when so configured.)
func isAccessToken(headerTyp string, c claims) bool {
	if (c.Typ != "" && !strings.EqualFold(c.Typ, "Bearer")) || has(c.Nonce) || has(c.AtHash) || has(c.CHash) {
		return false
	}
	switch strings.TrimPrefix(strings.ToLower(headerTyp), "application/") {
	case "at+jwt":
		return true
	case "", "jwt":
		return c.Typ != "" || (c.ClientID != "" && !has(c.AuthTime))
	}
	return false
}

// has reports whether a claim is present (and not null).
func has(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

func invalid(reason string) error { return fmt.Errorf("%w: %s", ErrInvalidToken, reason) }

// validExternalID accepts what an external issuer may use as a client id:
// 1 to 255 bytes that text.Identifier accepts.
func validExternalID(id string) bool {
	return id != "" && len(id) <= 255 && text.Check(text.Identifier, id) == nil
}

// clientCache keeps client rows (and their absence) for a short time so
// the hot path is not one query per request.
type clientCache struct {
	store Store
	ttl   time.Duration
	now   func() time.Time
	mu    sync.Mutex
	m     map[clientKey]cachedClient
}

type clientKey struct{ issuer, clientID string }

type cachedClient struct {
	client authdb.Client
	err    error // nil or store.ErrNotFound
	at     time.Time
}

func (cc *clientCache) get(ctx context.Context, issuer, clientID string) (authdb.Client, error) {
	k := clientKey{issuer, clientID}
	now := cc.now()
	cc.mu.Lock()
	e, ok := cc.m[k]
	cc.mu.Unlock()
	if ok && now.Sub(e.at) < cc.ttl && !now.Before(e.at) {
		return e.client, e.err
	}
	c, err := cc.store.ClientByIssuer(ctx, issuer, clientID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return c, err // not cached: the database is the problem
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if len(cc.m) > 10_000 {
		for k, e := range cc.m {
			if now.Sub(e.at) >= cc.ttl {
				delete(cc.m, k)
			}
		}
	}
	cc.m[k] = cachedClient{client: c, err: err, at: now}
	return c, err
}
