// Package config loads Touchpoint's settings from the environment into one
// typed struct and validates them, so a bad value stops a process at start
// with a message that names the variable. The settings of the Temporal
// client, the SMS provider and the mail providers are their packages':
// config reads their values in the generic form those packages hand it
// (internal/settings; its copy of them is generated from
// internal/sections), and the packages read their typed settings from
// those values.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/internal/settings"
	"github.com/touchpoint/touchpoint/sendtime"
)

// Config is every setting of every touchpoint process. Each subcommand reads
// the parts it needs.
type Config struct {
	DatabaseURL string
	// DatabaseReadURL is a streaming replica of DatabaseURL's server that
	// serves the API's public reads, stats and lists (DATABASE_READ_URL);
	// empty: every read goes to DatabaseURL.
	DatabaseReadURL string

	// TemporalAddress and TemporalNamespace are TEMPORAL_ADDRESS and
	// TEMPORAL_NAMESPACE as set (or their defaults): where the embedded
	// server of `touchpoint dev` listens and the namespace it registers.
	// Other processes dial Temporal as Temporal's own configuration says
	// (package temporalclient, from Settings), so mTLS clusters and
	// Temporal Cloud need no Touchpoint-only settings.
	TemporalAddress   string
	TemporalNamespace string
	// TemporalEmbedded: the Temporal server is the process's own
	// (`touchpoint dev` sets it once its server runs), and its client
	// dials TemporalAddress in plain text, whatever TEMPORAL_* or a
	// temporal.toml profile say of another cluster.
	TemporalEmbedded bool
	// Settings are the values of the variables of the sections that
	// packages hand the configuration: the Temporal client's, the SMS
	// provider's, the mail providers'. Each package reads its own from
	// them; internal/sections checks them.
	Settings settings.Values

	BaseURL string // the API's public address and the token audience
	AuthURL string // the built-in issuer's public address
	// OIDCIssuers are the issuers whose access tokens the API accepts,
	// each exactly as in its tokens' iss claim.
	OIDCIssuers []string
	// OIDCIssuerOptions are the settings given after an issuer's URL in
	// TOUCHPOINT_OIDC_ISSUER, keyed by that URL; see OIDCIssuerOptions.
	OIDCIssuerOptions map[string]OIDCIssuerOptions
	// OIDCDiscoveryURL is where the API fetches the built-in issuer's
	// discovery document and keys when its public address (AuthURL, the
	// tokens' iss) is not reachable from the API, as inside a container
	// network (http://auth:8081). Empty: AuthURL itself.
	OIDCDiscoveryURL string

	APIAddr     string
	AuthAddr    string
	MetricsAddr string
	// WorkerAddr is where `touchpoint worker` serves /healthz, /readyz and
	// /metrics. Empty: DefaultWorkerAddr, which a worker does without (with
	// a warning) when another process on the host has it, so several
	// workers run side by side on one machine without settings.
	WorkerAddr string

	SMTPURL  string
	MailFrom string
	// FeedbackURL is the base of the feedback links in invites and where
	// the API serves the feedback page; default {BaseURL}/feedback.
	FeedbackURL string
	// FeedbackLinkTTL is how long after its invite was sent a feedback
	// link works; after that the page answers 410. 0: forever. Unsubscribe
	// links never expire.
	FeedbackLinkTTL time.Duration
	DataDir         string

	// SecretKey keys the hash of client secrets and the signature of
	// feedback links. Required outside `touchpoint dev`.
	SecretKey string

	// TemporalUIAddr is where `touchpoint dev` serves the Temporal Web UI.
	TemporalUIAddr string
	// TemporalUIURL is the Temporal Web UI's address, to which the
	// console links an invite's workflow ("": no link; `dev` sets its
	// embedded UI's).
	TemporalUIURL string

	// DefaultInviteDelay is the delay of newly created invite settings.
	DefaultInviteDelay string

	// TokenIdleTimeout is the sliding lifetime of an access token (expires_in).
	TokenIdleTimeout time.Duration
	// TokenMaxLifetime is the absolute lifetime of an access token (exp).
	TokenMaxLifetime time.Duration
	// TokenUseFlushInterval is how often token uses are written to
	// PostgreSQL; it bounds the precision of the idle rule across replicas.
	TokenUseFlushInterval time.Duration
	// SigningKeyRotation is the age at which the issuer signs with a new key.
	SigningKeyRotation time.Duration
	// JWKSRefresh is how often the API refetches every issuer's key set
	// (sooner when the issuer's cache headers say so), so a key withdrawn
	// at the issuer stops verifying within it. The built-in issuer also
	// publishes a new key this long (plus its reload interval) before it
	// signs with it, so no verifier meets an unknown kid. At most 5m.
	JWKSRefresh time.Duration

	// TrustedProxies are the reverse proxies whose X-Forwarded-For the
	// token endpoint and the public pages believe when they limit per
	// client address. Empty: the peer address is the client's.
	TrustedProxies []netip.Prefix

	// Quotas of an account, unless `touchpoint accounts set-quota` gave it
	// its own: invites and reminders sent per UTC day (0: no limit),
	// invites and template tests to one address per UTC day across all settings (0: no
	// limit), channels, event types, webhook endpoints, and events
	// accepted per UTC day (0: no limit).
	DailySendQuota    int
	RecipientDailyCap int
	ChannelQuota      int
	EventTypeQuota    int
	WebhookQuota      int
	DailyEventQuota   int

	// SendTimeout bounds one send attempt of the invite worker. An attempt
	// on a worker that died is retried only once it has run this long.
	SendTimeout time.Duration
	// Send retries of the invite worker: transient failures back off from
	// SendRetryInitial to SendRetryMax and give up after SendGiveUpAfter.
	SendRetryInitial time.Duration
	SendRetryMax     time.Duration
	SendGiveUpAfter  time.Duration

	// ShutdownDrain is how long a server process (api, auth) goes on
	// serving after SIGTERM, its readiness failing, before it closes its
	// listener: the time a load balancer takes to stop sending it
	// requests. 0 (the default): it closes at once. The requests in
	// flight then get ShutdownGrace to finish.
	ShutdownDrain time.Duration

	// EventRetention is how long events, with their attempts, provider
	// reports and quarter-hour counts, are kept: housekeeping drops each
	// month once it is over by this long (and no invite in it is still
	// to be sent). 0 keeps them forever. Reviews are kept whatever it is.
	EventRetention time.Duration

	// ReconcileInterval is how often the reconciler's Temporal Schedule
	// runs (set by `touchpoint migrate` and `dev`); ReconcileGrace is how
	// long an invite may be overdue, or pending or sending unchanged,
	// before the worker's reconciler checks its workflow.
	ReconcileInterval time.Duration
	ReconcileGrace    time.Duration

	// RatePerSecond and RateBurst shape each API client's token bucket,
	// per API replica.
	RatePerSecond float64
	RateBurst     int

	MaxBodyBytes int64
	// BatchInflightBytes caps the request bytes of POST /events/batch
	// that one API process holds at once (one account: a quarter).
	BatchInflightBytes int64

	// DBMaxConns is the most PostgreSQL connections the process keeps.
	DBMaxConns int

	// WorkerVersioning makes `touchpoint worker` a versioned worker of
	// Temporal's Worker Deployment "touchpoint", its Build ID the binary's
	// version. Off (the default), workers are unversioned and workflow
	// changes rely on workflow.GetVersion alone: the setting for servers
	// without Worker Deployments and for installations that replace their
	// workers in place.
	WorkerVersioning bool
	// WebhookAllowPrivate lets webhook endpoints use http and reach
	// private, loopback and link-local addresses. For development and
	// tests only (`touchpoint dev` sets it): in production it would let a
	// shop point an endpoint at internal services.
	WebhookAllowPrivate bool
	// Pprof serves Go's runtime profiles at /debug/pprof/ on MetricsAddr
	// and samples blocking and lock contention for them: for finding
	// where a process's time goes, on an address only operators reach.
	Pprof bool
	// Console is how people sign in to the console.
	Console Console
}

// Console says through which OpenID Connect provider people sign in to
// the console. Without an Issuer they sign in through the built-in issuer
// (AuthURL) with a link sent by mail.
type Console struct {
	// Issuer is the external provider (Keycloak, Hydra, Entra, …),
	// exactly as the iss of its ID tokens.
	Issuer string
	// ClientID and ClientSecret are the console's client at that
	// provider; the secret may be empty for a public client.
	ClientID, ClientSecret string
	// MatchEmail lets a person whom `touchpoint users link` did not link
	// sign in by the provider's verified email claim.
	MatchEmail bool
}

// FeedbackPath is where the feedback page is served when
// TOUCHPOINT_FEEDBACK_URL is unset: {base_url}/feedback.
const FeedbackPath = "/feedback"

// OIDCIssuerOptions are the settings an entry of TOUCHPOINT_OIDC_ISSUER
// may carry after its URL, each as |key=value:
//
//	https://kc.example.com/realms/shop|audience=touchpoint-api
//	http://localhost:8180/realms/shop|audience=touchpoint-api|discovery=http://keycloak:8080/realms/shop
//	https://shop.eu.auth0.com/|audience=https://api.example.com|maxLifetime=24h
type OIDCIssuerOptions struct {
	// Audience (audience=) is the aud the issuer's tokens must carry;
	// empty: BaseURL.
	Audience string
	// DiscoveryURL (discovery=) is where the issuer's discovery document
	// and keys are fetched when its URL is not reachable from the API;
	// empty: the URL itself (for the built-in issuer, OIDCDiscoveryURL).
	DiscoveryURL string
	// MaxLifetime (maxLifetime=24h) is the longest exp − iat accepted from
	// the issuer; zero: TokenMaxLifetime. Auth0, for one, issues 24-hour
	// access tokens by default.
	MaxLifetime time.Duration
}

// ShutdownGrace is how long a server process lets the requests in flight
// finish once it has closed its listener.
const ShutdownGrace = 15 * time.Second

// MaxShutdownDrain bounds TOUCHPOINT_SHUTDOWN_DRAIN: a load balancer that
// needs longer to let go of a replica is misconfigured.
const MaxShutdownDrain = 2 * time.Minute

// DefaultWorkerAddr is where `touchpoint worker` serves its health and
// metrics when TOUCHPOINT_WORKER_ADDR is unset.
const DefaultWorkerAddr = "127.0.0.1:8082"

// DefaultEventRetention keeps events for 400 days: a year and a month,
// enough for a year-on-year comparison of the funnel.
const DefaultEventRetention = 400 * 24 * time.Hour

// Defaults are the values used when a variable is unset.
func Defaults() Config {
	return Config{
		DatabaseURL:           "postgres://postgres@127.0.0.1:5432/touchpoint?sslmode=disable",
		TemporalAddress:       "127.0.0.1:7233",
		TemporalNamespace:     "default",
		BaseURL:               "http://127.0.0.1:8080",
		AuthURL:               "http://127.0.0.1:8081",
		MailFrom:              "Touchpoint <invites@touchpoint.localhost>",
		FeedbackLinkTTL:       90 * 24 * time.Hour,
		EventRetention:        DefaultEventRetention,
		DataDir:               ".touchpoint",
		TemporalUIAddr:        "127.0.0.1:8233",
		DefaultInviteDelay:    "P7D",
		TokenIdleTimeout:      300 * time.Second,
		TokenMaxLifetime:      time.Hour,
		TokenUseFlushInterval: 2 * time.Second,
		SigningKeyRotation:    30 * 24 * time.Hour,
		JWKSRefresh:           5 * time.Minute,
		DailySendQuota:        10_000,
		RecipientDailyCap:     3,
		ChannelQuota:          100,
		EventTypeQuota:        500,
		WebhookQuota:          20,
		DailyEventQuota:       200_000,
		SendTimeout:           2 * time.Minute,
		SendRetryInitial:      10 * time.Second,
		SendRetryMax:          time.Hour,
		SendGiveUpAfter:       24 * time.Hour,
		ReconcileInterval:     5 * time.Minute,
		ReconcileGrace:        10 * time.Minute,
		RatePerSecond:         100,
		RateBurst:             200,
		MaxBodyBytes:          64 << 10,
		BatchInflightBytes:    64 << 20,
		DBMaxConns:            32,
	}
}

// Variables names every environment variable Load reads, for documentation
// and for checking deployment files against it: config's own and every
// section's.
var Variables = withSections(func(settings.Var) bool { return true }, []string{
	"DATABASE_URL", "DATABASE_READ_URL",
	"TOUCHPOINT_BASE_URL", "TOUCHPOINT_AUTH_URL", "TOUCHPOINT_OIDC_ISSUER", "TOUCHPOINT_OIDC_DISCOVERY_URL",
	"TOUCHPOINT_API_ADDR", "TOUCHPOINT_AUTH_ADDR", "TOUCHPOINT_METRICS_ADDR", "TOUCHPOINT_WORKER_ADDR",
	"TOUCHPOINT_SMTP_URL", "TOUCHPOINT_MAIL_FROM", "TOUCHPOINT_FEEDBACK_URL", "TOUCHPOINT_FEEDBACK_LINK_TTL",
	"TOUCHPOINT_DATA_DIR", "TOUCHPOINT_SECRET_KEY", "TOUCHPOINT_TEMPORAL_UI_ADDR", "TOUCHPOINT_TEMPORAL_UI_URL",
	"TOUCHPOINT_DEFAULT_INVITE_DELAY", "TOUCHPOINT_TOKEN_MAX_LIFETIME",
	"TOUCHPOINT_TOKEN_USE_FLUSH_INTERVAL", "TOUCHPOINT_SIGNING_KEY_ROTATION",
	"TOUCHPOINT_SEND_TIMEOUT", "TOUCHPOINT_SEND_RETRY_INITIAL", "TOUCHPOINT_SEND_RETRY_MAX",
	"TOUCHPOINT_SEND_GIVE_UP_AFTER", "TOUCHPOINT_RECONCILE_INTERVAL", "TOUCHPOINT_RECONCILE_GRACE",
	"TOUCHPOINT_EVENT_RETENTION", "TOUCHPOINT_SHUTDOWN_DRAIN", "TOUCHPOINT_RATE_LIMIT", "TOUCHPOINT_RATE_BURST", "TOUCHPOINT_MAX_BODY_BYTES", "TOUCHPOINT_BATCH_INFLIGHT_BYTES", "TOUCHPOINT_LOG_LEVEL", "TOUCHPOINT_DB_MAX_CONNS",
	"TOUCHPOINT_JWKS_REFRESH", "TOUCHPOINT_TRUSTED_PROXIES", "TOUCHPOINT_DAILY_SEND_QUOTA",
	"TOUCHPOINT_RECIPIENT_DAILY_CAP", "TOUCHPOINT_CHANNEL_QUOTA", "TOUCHPOINT_EVENT_TYPE_QUOTA",
	"TOUCHPOINT_WEBHOOK_QUOTA", "TOUCHPOINT_DAILY_EVENT_QUOTA",
	"TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE", "TOUCHPOINT_WORKER_VERSIONING", "TOUCHPOINT_PPROF",
	"TOUCHPOINT_CONSOLE_OIDC_ISSUER", "TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID", "TOUCHPOINT_CONSOLE_OIDC_CLIENT_SECRET",
	"TOUCHPOINT_CONSOLE_MATCH_EMAIL", "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE",
})

// SecretVariables are the variables of Variables that hold a credential:
// the logged configuration never shows them (a URL's password is masked),
// and deployment files take them from a secret store, never from the file
// itself (go test ./deploy checks the Kubernetes manifests against it).
var SecretVariables = withSections(func(v settings.Var) bool { return v.Secret }, []string{
	"DATABASE_URL", "DATABASE_READ_URL", "TOUCHPOINT_SECRET_KEY", "TOUCHPOINT_SMTP_URL", "TOUCHPOINT_CONSOLE_OIDC_CLIENT_SECRET",
})

// withSections is own followed by the names of the sections' variables
// that keep holds, each once.
func withSections(keep func(settings.Var) bool, own []string) []string {
	out := slices.Clone(own)
	for _, v := range sectionVars() {
		if keep(v) && !slices.Contains(out, v.Name) {
			out = append(out, v.Name)
		}
	}
	return out
}

// sectionVars are the variables of every section, in order.
func sectionVars() []settings.Var {
	var out []settings.Var
	for _, s := range sections {
		out = append(out, s.Vars...)
	}
	return out
}

// Sections are the sections config reads the values of: their names,
// variables and whether config logs them (their checks are their
// packages', run by internal/sections).
func Sections() []settings.Section {
	out := slices.Clone(sections)
	for i := range out {
		out[i].Vars = slices.Clone(out[i].Vars)
	}
	return out
}

// Load reads the environment through getenv (os.Getenv in production) on
// top of Defaults. It does not validate; call Validate.
func Load(getenv func(string) string) (Config, error) {
	c := Defaults()
	r := &envReader{getenv: getenv}
	r.str("DATABASE_URL", &c.DatabaseURL)
	r.str("DATABASE_READ_URL", &c.DatabaseReadURL)
	r.str("TEMPORAL_ADDRESS", &c.TemporalAddress)
	r.str("TEMPORAL_NAMESPACE", &c.TemporalNamespace)
	r.str("TOUCHPOINT_BASE_URL", &c.BaseURL)
	r.str("TOUCHPOINT_AUTH_URL", &c.AuthURL)
	r.str("TOUCHPOINT_OIDC_DISCOVERY_URL", &c.OIDCDiscoveryURL)
	r.str("TOUCHPOINT_API_ADDR", &c.APIAddr)
	r.str("TOUCHPOINT_AUTH_ADDR", &c.AuthAddr)
	r.str("TOUCHPOINT_METRICS_ADDR", &c.MetricsAddr)
	r.str("TOUCHPOINT_WORKER_ADDR", &c.WorkerAddr)
	r.str("TOUCHPOINT_SMTP_URL", &c.SMTPURL)
	r.str("TOUCHPOINT_MAIL_FROM", &c.MailFrom)
	r.str("TOUCHPOINT_FEEDBACK_URL", &c.FeedbackURL)
	r.str("TOUCHPOINT_DATA_DIR", &c.DataDir)
	r.str("TOUCHPOINT_SECRET_KEY", &c.SecretKey)
	r.str("TOUCHPOINT_TEMPORAL_UI_ADDR", &c.TemporalUIAddr)
	r.str("TOUCHPOINT_TEMPORAL_UI_URL", &c.TemporalUIURL)
	r.str("TOUCHPOINT_DEFAULT_INVITE_DELAY", &c.DefaultInviteDelay)
	r.str("TOUCHPOINT_CONSOLE_OIDC_ISSUER", &c.Console.Issuer)
	r.str("TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID", &c.Console.ClientID)
	r.str("TOUCHPOINT_CONSOLE_OIDC_CLIENT_SECRET", &c.Console.ClientSecret)
	c.Settings = settings.Read(getenv, sectionVars())
	r.dur("TOUCHPOINT_TOKEN_MAX_LIFETIME", &c.TokenMaxLifetime)
	r.dur("TOUCHPOINT_TOKEN_USE_FLUSH_INTERVAL", &c.TokenUseFlushInterval)
	r.dur("TOUCHPOINT_SIGNING_KEY_ROTATION", &c.SigningKeyRotation)
	r.dur("TOUCHPOINT_SEND_TIMEOUT", &c.SendTimeout)
	r.dur("TOUCHPOINT_SEND_RETRY_INITIAL", &c.SendRetryInitial)
	r.dur("TOUCHPOINT_SEND_RETRY_MAX", &c.SendRetryMax)
	r.dur("TOUCHPOINT_SEND_GIVE_UP_AFTER", &c.SendGiveUpAfter)
	r.dur("TOUCHPOINT_JWKS_REFRESH", &c.JWKSRefresh)
	const quota = "a whole number of at least 0"
	whole(r, "TOUCHPOINT_DAILY_SEND_QUOTA", &c.DailySendQuota, 0, math.MaxInt, quota)
	whole(r, "TOUCHPOINT_RECIPIENT_DAILY_CAP", &c.RecipientDailyCap, 0, math.MaxInt, quota)
	whole(r, "TOUCHPOINT_CHANNEL_QUOTA", &c.ChannelQuota, 0, math.MaxInt, quota)
	whole(r, "TOUCHPOINT_EVENT_TYPE_QUOTA", &c.EventTypeQuota, 0, math.MaxInt, quota)
	whole(r, "TOUCHPOINT_WEBHOOK_QUOTA", &c.WebhookQuota, 0, math.MaxInt, quota)
	whole(r, "TOUCHPOINT_DAILY_EVENT_QUOTA", &c.DailyEventQuota, 0, math.MaxInt, quota)
	if v := r.get("TOUCHPOINT_TRUSTED_PROXIES"); v != "" {
		ps, err := ParsePrefixes(v)
		if err != nil {
			r.errs = append(r.errs, fmt.Errorf("TOUCHPOINT_TRUSTED_PROXIES: %w", err))
		}
		c.TrustedProxies = ps
	}
	r.dur("TOUCHPOINT_RECONCILE_INTERVAL", &c.ReconcileInterval)
	r.dur("TOUCHPOINT_RECONCILE_GRACE", &c.ReconcileGrace)
	if v := r.get("TOUCHPOINT_SHUTDOWN_DRAIN"); v != "" && v != "0" {
		r.dur("TOUCHPOINT_SHUTDOWN_DRAIN", &c.ShutdownDrain)
	}
	if r.get("TOUCHPOINT_EVENT_RETENTION") == "0" {
		c.EventRetention = 0
	} else {
		r.dur("TOUCHPOINT_EVENT_RETENTION", &c.EventRetention)
	}
	if r.get("TOUCHPOINT_FEEDBACK_LINK_TTL") == "0" {
		c.FeedbackLinkTTL = 0
	} else {
		r.dur("TOUCHPOINT_FEEDBACK_LINK_TTL", &c.FeedbackLinkTTL)
	}
	if v := r.get("TOUCHPOINT_RATE_LIMIT"); v != "" {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || n <= 0 || math.IsInf(n, 0) {
			r.bad("TOUCHPOINT_RATE_LIMIT", v, "a positive number of requests per second")
		} else {
			c.RatePerSecond = n
		}
	}
	whole(r, "TOUCHPOINT_RATE_BURST", &c.RateBurst, 1, math.MaxInt, "a positive whole number")
	whole(r, "TOUCHPOINT_MAX_BODY_BYTES", &c.MaxBodyBytes, 1024, math.MaxInt64, "a byte count of at least 1024")
	whole(r, "TOUCHPOINT_BATCH_INFLIGHT_BYTES", &c.BatchInflightBytes, 32<<20, math.MaxInt64,
		"a byte count of at least 33554432 (one account may hold a quarter: one batch of the largest size)")
	whole(r, "TOUCHPOINT_DB_MAX_CONNS", &c.DBMaxConns, 2, 1000, "a connection count from 2 to 1000")
	r.boolean("TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE", &c.WebhookAllowPrivate)
	r.boolean("TOUCHPOINT_PPROF", &c.Pprof)
	r.boolean("TOUCHPOINT_WORKER_VERSIONING", &c.WorkerVersioning)
	r.boolean("TOUCHPOINT_CONSOLE_MATCH_EMAIL", &c.Console.MatchEmail)
	errs := r.errs
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	c.AuthURL = strings.TrimRight(c.AuthURL, "/")
	c.OIDCDiscoveryURL = strings.TrimRight(c.OIDCDiscoveryURL, "/")
	// Every URL that reaches a customer or a provider is on the base URL
	// unless its own variable says otherwise (the unsubscribe link always
	// is: {base_url}/unsubscribe; the SMS provider's callbacks are sms's).
	if c.FeedbackURL == "" {
		c.FeedbackURL = c.BaseURL + FeedbackPath
	}
	if v := getenv("TOUCHPOINT_OIDC_ISSUER"); strings.TrimSpace(v) != "" {
		for _, entry := range strings.Split(v, ",") {
			if strings.TrimSpace(entry) == "" {
				continue
			}
			iss, opts, err := parseIssuer(entry)
			if err != nil {
				errs = append(errs, fmt.Errorf("TOUCHPOINT_OIDC_ISSUER: %q: %w", strings.TrimSpace(entry), err))
				continue
			}
			c.OIDCIssuers = append(c.OIDCIssuers, iss)
			if opts != (OIDCIssuerOptions{}) {
				if c.OIDCIssuerOptions == nil {
					c.OIDCIssuerOptions = map[string]OIDCIssuerOptions{}
				}
				c.OIDCIssuerOptions[iss] = opts
			}
		}
	} else {
		c.OIDCIssuers = []string{c.AuthURL}
	}
	if c.APIAddr == "" {
		c.APIAddr = hostPort(c.BaseURL, "8080")
	}
	if c.AuthAddr == "" {
		c.AuthAddr = hostPort(c.AuthURL, "8081")
	}
	return c, errors.Join(errs...)
}

// envReader reads variables of the environment, collecting every bad
// value; an unset or blank variable leaves the default.
type envReader struct {
	getenv func(string) string
	errs   []error
}

func (r *envReader) get(name string) string { return strings.TrimSpace(r.getenv(name)) }

// bad records that name's value v is not what it must be.
func (r *envReader) bad(name, v, mustBe string) {
	r.errs = append(r.errs, fmt.Errorf("%s: %q is not %s", name, v, mustBe))
}

func (r *envReader) str(name string, dst *string) {
	if v := r.get(name); v != "" {
		*dst = v
	}
}

func (r *envReader) dur(name string, dst *time.Duration) {
	if v := r.get(name); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			r.bad(name, v, "a positive duration such as 5s or 720h")
			return
		}
		*dst = d
	}
}

func (r *envReader) boolean(name string, dst *bool) {
	switch v := r.get(name); v {
	case "", "false":
	case "true":
		*dst = true
	default:
		r.errs = append(r.errs, fmt.Errorf("%s: %q must be true or false", name, v))
	}
}

// whole reads a whole number from lo to hi; mustBe says so in words.
func whole[T int | int64](r *envReader, name string, dst *T, lo, hi int64, mustBe string) {
	if v := r.get(name); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo || n > hi {
			r.bad(name, v, mustBe)
			return
		}
		*dst = T(n)
	}
}

// ParsePrefixes reads a comma-separated list of CIDR prefixes; a bare
// address stands for itself alone (/32 or /128).
func ParsePrefixes(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("%q is not an address or a CIDR prefix such as 10.0.0.0/8", f)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a CIDR prefix such as 10.0.0.0/8", f)
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// parseIssuer reads one TOUCHPOINT_OIDC_ISSUER entry:
// URL[|audience=A][|discovery=D][|maxLifetime=L].
func parseIssuer(entry string) (string, OIDCIssuerOptions, error) {
	fields := strings.Split(entry, "|")
	var o OIDCIssuerOptions
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		switch k, v = strings.TrimSpace(k), strings.TrimSpace(v); {
		case k == "audience" && v != "":
			o.Audience = v
		case k == "discovery" && v != "":
			o.DiscoveryURL = strings.TrimRight(v, "/")
		case k == "maxLifetime" && v != "":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return "", o, fmt.Errorf("maxLifetime=%q is not a positive duration such as 24h", v)
			}
			o.MaxLifetime = d
		default:
			return "", o, fmt.Errorf("%q is not audience=…, discovery=… or maxLifetime=…", strings.TrimSpace(f))
		}
	}
	return strings.TrimSpace(fields[0]), o, nil
}

// FromEnv loads the process environment.
func FromEnv() (Config, error) { return Load(os.Getenv) }

// Validate checks every value; requireSecret is false only for `dev`,
// which generates and keeps its own key.
func (c Config) Validate(requireSecret bool) error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}
	if u, err := url.Parse(c.DatabaseURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		bad("DATABASE_URL", "must be a postgres:// URL")
	}
	if c.DatabaseReadURL != "" {
		if u, err := url.Parse(c.DatabaseReadURL); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			bad("DATABASE_READ_URL", "must be a postgres:// URL of a streaming replica of DATABASE_URL's server, or unset")
		}
	}
	for name, v := range map[string]string{
		"TOUCHPOINT_BASE_URL": c.BaseURL, "TOUCHPOINT_AUTH_URL": c.AuthURL, "TOUCHPOINT_FEEDBACK_URL": c.FeedbackURL,
	} {
		if !isHTTPURL(v) {
			bad(name, "%q must be an absolute http(s) URL", v)
		}
	}
	builtIn := false
	for _, iss := range c.OIDCIssuers {
		if !isHTTPURL(iss) {
			bad("TOUCHPOINT_OIDC_ISSUER", "%q must be an absolute http(s) URL", iss)
		}
		opts := c.OIDCIssuerOptions[iss]
		if opts.DiscoveryURL != "" && !isHTTPURL(opts.DiscoveryURL) {
			bad("TOUCHPOINT_OIDC_ISSUER", "discovery URL %q of %s must be an absolute http(s) URL", opts.DiscoveryURL, iss)
		}
		if strings.TrimRight(iss, "/") == c.AuthURL {
			builtIn = true
			if opts.DiscoveryURL != "" && c.OIDCDiscoveryURL != "" && opts.DiscoveryURL != c.OIDCDiscoveryURL {
				bad("TOUCHPOINT_OIDC_ISSUER", "the built-in issuer's discovery= differs from TOUCHPOINT_OIDC_DISCOVERY_URL; set one")
			}
		}
	}
	if c.OIDCDiscoveryURL != "" {
		if !isHTTPURL(c.OIDCDiscoveryURL) {
			bad("TOUCHPOINT_OIDC_DISCOVERY_URL", "%q must be an absolute http(s) URL", c.OIDCDiscoveryURL)
		} else if !builtIn {
			bad("TOUCHPOINT_OIDC_DISCOVERY_URL", "applies to the built-in issuer %s, which TOUCHPOINT_OIDC_ISSUER does not list", c.AuthURL)
		}
	}
	for name, v := range map[string]string{
		"TEMPORAL_ADDRESS": c.TemporalAddress, "TOUCHPOINT_API_ADDR": c.APIAddr, "TOUCHPOINT_AUTH_ADDR": c.AuthAddr,
	} {
		if _, _, err := net.SplitHostPort(v); err != nil {
			bad(name, "%q must be host:port", v)
		}
	}
	for name, v := range map[string]string{"TOUCHPOINT_METRICS_ADDR": c.MetricsAddr, "TOUCHPOINT_WORKER_ADDR": c.WorkerAddr} {
		if _, _, err := net.SplitHostPort(v); v != "" && err != nil {
			bad(name, "%q must be host:port", v)
		}
	}
	if c.SMTPURL != "" {
		if u, err := url.Parse(c.SMTPURL); err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Host == "" {
			bad("TOUCHPOINT_SMTP_URL", "must look like smtp://user:pass@host:587 or smtps://host:465")
		} else if err := checkSMTPQuery(u); err != nil {
			bad("TOUCHPOINT_SMTP_URL", "%v", err)
		}
	}
	if c.JWKSRefresh < time.Second || c.JWKSRefresh > 5*time.Minute {
		bad("TOUCHPOINT_JWKS_REFRESH", "must be from 1s to 5m: a signing key withdrawn at the issuer must stop verifying soon")
	}
	if c.TemporalNamespace == "" {
		bad("TEMPORAL_NAMESPACE", "must not be empty")
	}
	switch {
	case requireSecret && c.SecretKey == "":
		bad("TOUCHPOINT_SECRET_KEY", "is not set; api, auth and worker need it, the same on every process "+
			"(only `touchpoint dev` keeps a generated key in its data dir); make one with `openssl rand -hex 32`")
	case requireSecret && len(c.SecretKey) < 32:
		bad("TOUCHPOINT_SECRET_KEY", "must be set to at least 32 characters (e.g. `openssl rand -hex 32`)")
	}
	if c.TokenUseFlushInterval > 5*time.Second {
		bad("TOUCHPOINT_TOKEN_USE_FLUSH_INTERVAL", "must be at most 5s (the documented precision of the idle rule)")
	}
	if c.ReconcileInterval < time.Second {
		bad("TOUCHPOINT_RECONCILE_INTERVAL", "must be at least 1s")
	}
	if c.ReconcileGrace <= c.SendTimeout {
		// A send in progress is `sending` for up to the send timeout.
		bad("TOUCHPOINT_RECONCILE_GRACE", "must be longer than TOUCHPOINT_SEND_TIMEOUT (%s)", c.SendTimeout)
	}
	if c.ShutdownDrain > MaxShutdownDrain {
		bad("TOUCHPOINT_SHUTDOWN_DRAIN", "must be at most %s", MaxShutdownDrain)
	}
	if c.SendRetryMax < c.SendRetryInitial {
		bad("TOUCHPOINT_SEND_RETRY_MAX", "must be at least TOUCHPOINT_SEND_RETRY_INITIAL")
	}
	if _, err := sendtime.ParseDuration(c.DefaultInviteDelay); err != nil {
		bad("TOUCHPOINT_DEFAULT_INVITE_DELAY", "%v", err)
	}
	if c.TokenMaxLifetime < c.TokenIdleTimeout {
		bad("TOUCHPOINT_TOKEN_MAX_LIFETIME", "must be at least the 300s idle lifetime")
	}
	if c.TemporalUIURL != "" && !isHTTPURL(c.TemporalUIURL) {
		bad("TOUCHPOINT_TEMPORAL_UI_URL", "%q must be an absolute http(s) URL", c.TemporalUIURL)
	}
	errs = append(errs, c.Console.validate(c.AuthURL)...)
	return errors.Join(errs...)
}

// validate checks the console's provider: an absolute URL other than the
// built-in issuer's, with the console's client id there.
func (c Console) validate(authURL string) []error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}
	switch {
	case c.Issuer == "":
		if c.ClientID != "" || c.ClientSecret != "" {
			bad("TOUCHPOINT_CONSOLE_OIDC_ISSUER", "is required with TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID and …_CLIENT_SECRET")
		}
		if c.MatchEmail {
			bad("TOUCHPOINT_CONSOLE_MATCH_EMAIL", "applies to an external provider (TOUCHPOINT_CONSOLE_OIDC_ISSUER); "+
				"the built-in issuer knows people by their address already")
		}
		return errs
	case !isHTTPURL(c.Issuer):
		bad("TOUCHPOINT_CONSOLE_OIDC_ISSUER", "%q must be an absolute http(s) URL", c.Issuer)
	case strings.TrimRight(c.Issuer, "/") == authURL:
		bad("TOUCHPOINT_CONSOLE_OIDC_ISSUER", "is the built-in issuer; leave it unset to sign in through it")
	}
	if c.ClientID == "" {
		bad("TOUCHPOINT_CONSOLE_OIDC_CLIENT_ID", "is required with TOUCHPOINT_CONSOLE_OIDC_ISSUER: the console's client id at the provider")
	}
	return errs
}

// checkSMTPQuery accepts the one query parameter of an SMTP URL:
// starttls=required (refuse to send unless the server upgrades the
// connection) or starttls=opportunistic (the default for smtp://).
func checkSMTPQuery(u *url.URL) error {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return fmt.Errorf("malformed query %q", u.RawQuery)
	}
	for k, v := range q {
		switch {
		case k != "starttls":
			return fmt.Errorf("unknown parameter %q (only starttls=required|opportunistic)", k)
		case len(v) != 1 || (v[0] != "required" && v[0] != "opportunistic"):
			return errors.New("starttls must be required or opportunistic")
		case u.Scheme == "smtps":
			return errors.New("starttls applies to smtp://; smtps:// is encrypted from the start")
		}
	}
	return nil
}

// LogValue lets the config be logged at start with its secrets masked,
// each section's values in a group of its own. The Temporal client's
// settings are logged where the client is made, which may dial another
// server (`touchpoint dev`'s own).
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("database_url", redactURL(c.DatabaseURL)),
		slog.String("database_read_url", redactURL(c.DatabaseReadURL)),
		slog.String("base_url", c.BaseURL),
		slog.String("auth_url", c.AuthURL),
		slog.Any("oidc_issuers", c.OIDCIssuers),
		slog.Any("oidc_issuer_options", c.OIDCIssuerOptions),
		slog.String("oidc_discovery_url", c.OIDCDiscoveryURL),
		slog.String("api_addr", c.APIAddr),
		slog.String("auth_addr", c.AuthAddr),
		slog.String("metrics_addr", c.MetricsAddr),
		slog.String("worker_addr", c.WorkerAddr),
		slog.String("smtp_url", redactURL(c.SMTPURL)),
		slog.String("mail_from", c.MailFrom),
		slog.String("feedback_url", c.FeedbackURL),
		slog.String("feedback_link_ttl", c.FeedbackLinkTTL.String()),
		slog.String("data_dir", c.DataDir),
		slog.String("default_invite_delay", c.DefaultInviteDelay),
		slog.String("send_timeout", c.SendTimeout.String()),
		slog.String("send_retry_initial", c.SendRetryInitial.String()),
		slog.String("send_retry_max", c.SendRetryMax.String()),
		slog.String("send_give_up_after", c.SendGiveUpAfter.String()),
		slog.String("event_retention", c.EventRetention.String()),
		slog.String("shutdown_drain", c.ShutdownDrain.String()),
		slog.String("reconcile_interval", c.ReconcileInterval.String()),
		slog.String("reconcile_grace", c.ReconcileGrace.String()),
		slog.Float64("rate_per_second", c.RatePerSecond),
		slog.Int("rate_burst", c.RateBurst),
		slog.Int64("max_body_bytes", c.MaxBodyBytes),
		slog.Int64("batch_inflight_bytes", c.BatchInflightBytes),
		slog.Int("db_max_conns", c.DBMaxConns),
		slog.String("jwks_refresh", c.JWKSRefresh.String()),
		slog.Any("trusted_proxies", c.TrustedProxies),
		slog.Int("daily_send_quota", c.DailySendQuota),
		slog.Int("recipient_daily_cap", c.RecipientDailyCap),
		slog.Int("channel_quota", c.ChannelQuota),
		slog.Int("event_type_quota", c.EventTypeQuota),
		slog.Int("webhook_quota", c.WebhookQuota),
		slog.Int("daily_event_quota", c.DailyEventQuota),
		slog.Bool("webhook_allow_private", c.WebhookAllowPrivate),
		slog.Bool("pprof", c.Pprof),
		slog.Group("console", slog.String("oidc_issuer", c.Console.Issuer), slog.String("oidc_client_id", c.Console.ClientID),
			slog.Bool("oidc_client_secret_set", c.Console.ClientSecret != ""), slog.Bool("match_email", c.Console.MatchEmail)),
		slog.Bool("worker_versioning", c.WorkerVersioning),
		slog.Bool("secret_key_set", c.SecretKey != ""),
	}
	for _, sec := range sections {
		if sec.Unlogged {
			continue
		}
		var group []any
		for _, v := range sec.Vars {
			value, set := c.Settings[v.Name]
			switch {
			case v.Secret:
				group = append(group, slog.Bool(strings.ToLower(v.Name)+"_set", set))
			case set:
				group = append(group, slog.String(strings.ToLower(v.Name), maskCredentials(value)))
			}
		}
		attrs = append(attrs, slog.Group(sec.Name, group...))
	}
	return slog.GroupValue(attrs...)
}

func isHTTPURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// hostPort derives a listen address from a public URL.
func hostPort(raw, defaultPort string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "127.0.0.1:" + defaultPort
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443"}[u.Scheme]
		if port == "" {
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// maskCredentials hides the password of a value that is a URL with one.
func maskCredentials(v string) string {
	if u, err := url.Parse(v); err == nil && u.User != nil {
		return u.Redacted()
	}
	return v
}

// redactURL hides a password in a URL.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable)"
	}
	return u.Redacted()
}
