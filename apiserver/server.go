// Package apiserver is Touchpoint's HTTP API: the routes of routes.go,
// their handlers (those of the templates, the webhooks, the suppression
// list, the reviews and the funnel in packages of their own, which
// routes.go mounts), the middleware every request passes (request id,
// log, panic recovery and body limits, whose mechanics are
// internal/httpmw's; authentication and access groups), the reading of
// JSON bodies (decoded by internal/jsonstrict) and of query strings
// (internal/apiquery), and RFC 9457 problem answers chosen in one place
// (fail), for the packages it mounts too.
package apiserver

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"
	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/account/accountapi"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/contact/suppressionapi"
	"github.com/touchpoint/touchpoint/health"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/giveway"
	"github.com/touchpoint/touchpoint/internal/httpmw"
	"github.com/touchpoint/touchpoint/internal/ratelimit"
	"github.com/touchpoint/touchpoint/mailevents"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/pages"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/publication/publicapi"
	"github.com/touchpoint/touchpoint/review/reviewapi"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/stats/statsapi"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/templates/templateapi"
	"github.com/touchpoint/touchpoint/webhook"
	"github.com/touchpoint/touchpoint/webhook/webhookapi"
)

// DefaultMaxBodyBytes is the body limit when Options leaves it 0.
const DefaultMaxBodyBytes = 64 << 10

// Options are the API's dependencies.
type Options struct {
	// The repositories, each through the interface of what the API uses
	// of it; all required.
	Events        EventStore
	TemplateStore TemplateStore // the shop's templates, which Templates renders
	Suppressions  SuppressionStore
	Reports       ReportStore
	Erasure       Eraser
	// DB is the primary's pool: the readiness check and the audit trail.
	DB       *sqlx.DB           // required
	Accounts AccountStore       // required
	Stats    StatsStore         // required
	Webhooks WebhookStore       // required
	Reviews  ReviewStore        // required
	Invites  InviteStore        // required
	Auth     auth.Authenticator // required
	// Logger gets one line per request; nil discards.
	Logger *slog.Logger
	// MaxBodyBytes limits request bodies (413 above); 0 means 64 KiB.
	MaxBodyBytes int64
	// BatchInflightBytes caps the request bytes of POST /events/batch
	// held at once by this process, and by one account at a quarter of
	// it (503 with Retry-After above); 0 means DefaultBatchInflightBytes.
	// Keep a quarter of it at least the largest batch (8 MiB, as config
	// demands): a batch larger than an account's share is always refused.
	BatchInflightBytes int64
	// BatchReadTimeout is how long the body of a POST /events/batch may
	// take to arrive whole (408 after); 0 means DefaultBatchReadTimeout.
	BatchReadTimeout time.Duration
	// Readiness reports dependencies besides PostgreSQL for /readyz
	// ("temporal", "issuer", "replica" → nil when ok). Their failures
	// show as degraded but never make /readyz answer 503; an error with a
	// ReadinessState method names its state ("lagging"), others are
	// "down". Optional.
	Readiness func(ctx context.Context) map[string]error
	// Reads sends the reads of the requests that only read — the public
	// reads, and a client's GETs — to a streaming replica where it may,
	// and is told of each client's writes. Optional: without it every
	// read goes to the primary.
	Reads ReadRouter
	// Workflows delivers the cancel signal to an event's workflow (a
	// Temporal client). Optional: without it a cancelled invite is still
	// never sent, its workflow just learns of it at send time.
	Workflows Signaler
	// Notify is called after an accepted event commits, to wake the
	// outbox starters at once. Optional: they also sweep periodically.
	Notify func()
	// AcceptLoad is told of every POST /events and POST /events/batch
	// while it is being worked on (a batch weighs by its size), so that
	// the starters of this process give way to accepts. Optional.
	AcceptLoad *giveway.Gate
	// Metrics records requests, accepted events and token checks. Optional.
	Metrics *metrics.Set
	// RatePerSecond and RateBurst shape each client's token bucket; 0
	// means the defaults (100/s, burst 200).
	RatePerSecond float64
	RateBurst     int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client address that the public pages are limited by
	// (TOUCHPOINT_TRUSTED_PROXIES, read as the issuer reads it). Empty:
	// the peer's address.
	TrustedProxies []netip.Prefix
	// FeedbackLinks and UnsubscribeLinks verify the signed links of the
	// public pages: the feedback page is served at
	// the path of FeedbackLinks' base URL, the unsubscribe page at
	// pages.UnsubscribePath. Required.
	FeedbackLinks, UnsubscribeLinks *signedlink.Links
	// HSTS makes the customer pages and the public reviews send
	// Strict-Transport-Security: the base URL is https.
	HSTS bool
	// FeedbackLinkTTL is how long after its invite was sent a feedback
	// link works (then the page answers 410); 0: forever. Unsubscribe
	// links never expire.
	FeedbackLinkTTL time.Duration
	// Now is the clock of rate limits and of the readiness cache; default
	// time.Now (tests inject one).
	Now func() time.Time
	// SMS is the SMS provider's side of the API: its
	// callbacks are verified with it, and only with it may an invite
	// setting choose medium sms. nil: no provider is configured.
	SMS *sms.CallbackKeys
	// WebhookSecrets seals the signing secrets of webhook endpoints for
	// storage (the worker opens them to sign). Required.
	WebhookSecrets *webhook.SecretBox
	// WebhookAllowPrivate admits endpoint URLs on http and on private,
	// loopback and link-local addresses (TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE:
	// development and tests only).
	WebhookAllowPrivate bool
	// Templates renders the previews of templates; nil: the built-in
	// ones, loaded by New.
	Templates *templates.Library
	// PublicationKeys sign the proofs of public reviews and publish the
	// accounts' keys. Required.
	PublicationKeys *publication.Keys
	// PublicBaseURL is the API's public address (TOUCHPOINT_BASE_URL),
	// from which the public endpoints make absolute links (the feed's
	// review URLs, the widget's links). Empty: the origin of the
	// feedback links.
	PublicBaseURL string
	// MailEvents verify the mail providers' reports (POST
	// /mail-events/{provider}), one verifier per provider; the route of a
	// provider without one answers 404.
	MailEvents []mailevents.Verifier
	// Audit is the trail of who did what (GET /audit); nil: the trail
	// kept in Store's database.
	Audit AuditTrail
	// Console serves the console's pages below ConsolePrefix, each with
	// its own sign-in check; nil: no console.
	Console http.Handler
	// ReportRatePerSecond and ReportRateBurst shape the token bucket of
	// each client address on the mail providers' routes; 0 means the
	// defaults (DefaultReportRatePerSecond, DefaultReportRateBurst).
	ReportRatePerSecond float64
	ReportRateBurst     int
}

// ReadRouter is the part of the read replica (a *pg.Replica) the API
// uses: it marks a request whose reads the replica may serve, for the
// client that made it ("" for anyone), and notes a client's writes, after
// which its reads keep to the primary for a while.
type ReadRouter interface {
	Reads(ctx context.Context, client string) context.Context
	Wrote(client string)
}

// ConsolePrefix is where the console is served: its pages are HTML for
// the shop's people, signed in with a session rather than a token, and
// are listed in the console's own route table.
const ConsolePrefix = "/console/"

// Signaler is the part of the Temporal client the API uses.
type Signaler interface {
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
}

type server struct {
	events    EventStore
	reports   ReportStore
	erasure   Eraser
	db        *sqlx.DB
	invites   InviteStore
	auth      auth.Authenticator
	log       *slog.Logger
	maxBody   int64
	reads     ReadRouter // nil: no replica
	workflows Signaler
	notify    func()
	load      *giveway.Gate
	metrics   *metrics.Set
	limits    *ratelimit.Limiter[string] // per API client
	signals   chan signal                // for Run to deliver

	// The public pages, mounted from package pages.
	pages                           *pages.Handler
	feedbackLinks, unsubscribeLinks *signedlink.Links
	feedbackPath                    string
	publicLimits                    *ratelimit.ByAddress
	now                             func() time.Time
	ready                           *health.Dependencies
	draining                        atomic.Bool // see Server.Drain

	sms          *sms.CallbackKeys // nil: no SMS provider
	smsCallbacks *sms.Callbacks    // mounted from package sms

	// The routes of the account and its setup, the webhooks, the
	// templates, the suppression list, the reviews and the funnel, mounted
	// from packages accountapi, webhookapi, templateapi, suppressionapi,
	// reviewapi and statsapi.
	account      *accountapi.Handler
	webhooks     *webhookapi.Handler
	templates    *templateapi.Handler
	suppressions *suppressionapi.Handler
	reviews      *reviewapi.Handler
	stats        *statsapi.Handler

	// batchBytes caps the bytes of batches in flight; a batch's body
	// must arrive within batchReadTimeout.
	batchBytes       *httpmw.ByteBudget
	batchReadTimeout time.Duration

	// The public endpoints of reviews, mounted from package publicapi.
	publicReviews    *publicapi.Handler
	publicReadLimits *ratelimit.ByAddress
	hsts             bool // see Options.HSTS

	mailEventVerifiers map[string]mailevents.Verifier // by provider
	reportLimits       *ratelimit.ByAddress           // of the providers' routes

	audit AuditTrail
}

// Server is the API: its HTTP handler, and Run, which delivers in the
// background what requests decided without waiting on Temporal.
type Server struct {
	http.Handler
	s *server
}

// Drain makes GET /readyz answer 503 "draining" from now on, whatever the
// dependencies: the process is stopping, and goes on serving only while
// load balancers let go of it. Every other route is served as before.
func (a *Server) Drain() { a.s.draining.Store(true) }

// New builds the API. It panics without a Store, an Authenticator or the
// link makers, which is a wiring mistake.
func New(opts Options) *Server {
	if opts.Events == nil || opts.TemplateStore == nil || opts.Suppressions == nil || opts.Reports == nil || opts.Erasure == nil || opts.DB == nil || opts.Accounts == nil || opts.Stats == nil || opts.Webhooks == nil || opts.Reviews == nil || opts.Invites == nil || opts.Auth == nil || opts.FeedbackLinks == nil || opts.UnsubscribeLinks == nil || opts.WebhookSecrets == nil ||
		opts.PublicationKeys == nil {
		panic("apiserver.New: Store, Accounts, Stats, Webhooks, Reviews, Invites, Auth, FeedbackLinks, UnsubscribeLinks, WebhookSecrets and PublicationKeys are required")
	}
	if opts.Templates == nil {
		var err error
		if opts.Templates, err = templates.Load(); err != nil {
			panic("apiserver.New: the embedded templates do not parse: " + err.Error())
		}
	}
	s := &server{events: opts.Events, reports: opts.Reports, erasure: opts.Erasure, db: opts.DB, invites: opts.Invites, auth: opts.Auth, log: opts.Logger, maxBody: opts.MaxBodyBytes, reads: opts.Reads,
		workflows: opts.Workflows, notify: opts.Notify, load: opts.AcceptLoad, metrics: opts.Metrics,
		limits: newClientLimits(opts.RatePerSecond, opts.RateBurst), signals: make(chan signal, signalQueue),
		feedbackLinks: opts.FeedbackLinks, unsubscribeLinks: opts.UnsubscribeLinks,
		feedbackPath: opts.FeedbackLinks.Path(), publicLimits: ratelimit.NewByAddress(opts.TrustedProxies, publicRatePerSecond, publicRateBurst), sms: opts.SMS,
		publicReadLimits: ratelimit.NewByAddress(opts.TrustedProxies, publicReadRatePerSecond, publicReadBurst),
		hsts:             opts.HSTS}
	if s.notify == nil {
		s.notify = func() {}
	}
	s.audit = opts.Audit
	if s.audit == nil {
		s.audit = persondb.New(pg.NewDB(opts.DB))
	}
	s.now = opts.Now
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	s.ready = &health.Dependencies{Ping: opts.DB.PingContext, Others: opts.Readiness,
		Down: func(ctx context.Context, name, state string, err error) {
			s.log.WarnContext(ctx, "dependency down", "dependency", name, "state", state, "error", err.Error(),
				"request_id", infoFrom(ctx).id)
		}}
	var err error
	s.pages, err = pages.NewHandler(pages.HandlerOptions{Store: pageStore{opts.Accounts, opts.Reviews, opts.Invites, opts.Suppressions, opts.TemplateStore},
		FeedbackLinks: opts.FeedbackLinks, UnsubscribeLinks: opts.UnsubscribeLinks, FeedbackLinkTTL: opts.FeedbackLinkTTL,
		Now: s.now, Metrics: s.metrics, Reviewed: s.signalReview, HSTS: opts.HSTS,
		Report: func(r *http.Request, err error) { infoFrom(r.Context()).err = err }})
	if err != nil {
		panic("apiserver.New: the embedded pages do not parse: " + err.Error())
	}
	s.publicReviews, err = publicapi.New(publicapi.Options{Reviews: opts.Reviews, Accounts: opts.Accounts,
		Keys: opts.PublicationKeys, BaseURL: opts.PublicBaseURL, FeedbackLinks: opts.FeedbackLinks, Fail: s.fail,
		Report: func(r *http.Request, err error) { infoFrom(r.Context()).err = err }})
	if err != nil {
		panic("apiserver.New: the embedded pages do not parse: " + err.Error())
	}
	s.webhooks = webhookapi.New(webhookapi.Options{API: mountedAPI{s}, Store: opts.Webhooks, Secrets: opts.WebhookSecrets,
		AllowPrivate: opts.WebhookAllowPrivate, Now: s.now})
	s.account = accountapi.New(accountapi.Options{API: mountedAPI{s}, Store: opts.Accounts, SMS: opts.SMS != nil, Now: s.now})
	s.suppressions = suppressionapi.New(mountedAPI{s}, opts.Suppressions)
	s.reviews = reviewapi.New(mountedAPI{s}, opts.Reviews)
	s.stats = statsapi.New(mountedAPI{s}, opts.Stats)
	s.templates = templateapi.New(templateapi.Options{API: mountedAPI{s}, Templates: opts.TemplateStore, Invites: opts.Invites,
		Accounts: opts.Accounts, Library: opts.Templates, FeedbackLinks: opts.FeedbackLinks,
		UnsubscribeLinks: opts.UnsubscribeLinks, SMS: opts.SMS != nil})
	s.smsCallbacks = sms.NewCallbacks(sms.CallbackOptions{Keys: opts.SMS, Store: opts.Reports, Logger: s.log, Fail: s.fail})
	if opts.BatchInflightBytes <= 0 {
		opts.BatchInflightBytes = DefaultBatchInflightBytes
	}
	s.batchBytes = httpmw.NewByteBudget(opts.BatchInflightBytes)
	if s.batchReadTimeout = opts.BatchReadTimeout; s.batchReadTimeout <= 0 {
		s.batchReadTimeout = DefaultBatchReadTimeout
	}
	s.reportLimits = newReportLimits(opts.TrustedProxies, opts.ReportRatePerSecond, opts.ReportRateBurst)
	s.mailEventVerifiers = map[string]mailevents.Verifier{}
	for _, v := range opts.MailEvents {
		s.mailEventVerifiers[v.Provider()] = v
	}
	for _, p := range mailevents.Names() {
		if s.mailEventVerifiers[p] == nil {
			s.log.Info("mail provider reports off: "+p+" is not configured", "route", "POST /mail-events/"+p)
		} else {
			s.log.Info("mail provider reports on", "provider", p, "route", "POST /mail-events/"+p)
		}
	}

	r := mux.NewRouter()
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, newError(http.StatusNotFound, "no such endpoint: %s", r.URL.Path))
	})
	routes := s.routes()
	methods := map[string][]string{} // path → methods, for 405 answers
	last := map[string]int{}         // path → index of its last route
	for i, rt := range routes {
		methods[rt.path] = append(methods[rt.path], rt.method)
		last[rt.path] = i
	}
	for i, rt := range routes {
		r.Handle(rt.path, s.guard(rt)).Methods(rt.method)
		// Right after a path's last route, any other method on it: a
		// later route whose pattern also matches the path
		// (/templates/{kind}/{locale} for /templates/test-sends/{id})
		// must not answer it.
		if last[rt.path] == i {
			r.Handle(rt.path, s.methodNotAllowed(rt.path, rt.access, methods[rt.path]))
		}
	}
	if opts.Console != nil {
		console := opts.Console
		r.PathPrefix(ConsolePrefix).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			infoFrom(r.Context()).route = ConsolePrefix
			console.ServeHTTP(w, r)
		}))
		r.Handle(strings.TrimSuffix(ConsolePrefix, "/"), http.RedirectHandler(ConsolePrefix, http.StatusMovedPermanently))
	}
	return &Server{Handler: requestID(s.logRequests(s.recoverPanics(r))), s: s}
}

// methodNotAllowed answers a method that no route of path answers: 405
// with Allow. A customer's page answers it as an HTML page in the
// reader's language, chosen as the page chooses it; the rest of the API
// as a problem.
func (s *server) methodNotAllowed(path string, acc access, methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		infoFrom(r.Context()).route = path
		if acc&publicRead == publicRead {
			w.Header().Set("Access-Control-Allow-Origin", "*")
		}
		switch acc {
		case page:
			s.pages.MethodNotAllowed(w, r, methods)
			return
		case publicPage:
			s.publicReviews.MethodNotAllowed(w, r, methods)
			return
		}
		e := newError(http.StatusMethodNotAllowed, "%s is not allowed on %s; allowed: %s", r.Method, path, allow)
		e.header = map[string]string{"Allow": allow}
		s.fail(w, r, e)
	})
}

// guard runs a route's handler after authentication and the access-group
// check its access demands.
func (s *server) guard(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		info.route = rt.path
		switch rt.access {
		case public:
			rt.handle(w, r)
			return
		case page:
			s.guardPage(w, r, rt.handle)
			return
		case publicRead, publicPage:
			s.guardPublic(w, s.readsOf(r, ""), rt.access == publicPage, rt.handle)
			return
		case providerReport:
			if ok, wait := s.reportLimits.Allow(r, s.now()); !ok {
				s.fail(w, r, tooManyRequests(wait))
				return
			}
			rt.handle(w, r)
			return
		}
		p, err := s.authenticate(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		info.principal = p
		r = r.WithContext(people.WithActor(r.Context(), people.ClientActor(p.ClientID)))
		if ok, wait := s.limits.Allow(p.ClientID, s.now()); !ok {
			s.fail(w, r, tooManyRequests(wait))
			return
		}
		if !rt.access.allows(p.AccessGroup) {
			s.fail(w, r, newError(http.StatusForbidden, "the access group %q of this client does not allow %s %s", p.AccessGroup, rt.method, rt.path))
			return
		}
		if rt.method == http.MethodGet {
			r = s.readsOf(r, p.ClientID)
		} else if s.reads != nil {
			// Once its write is done, the client's reads keep to the
			// primary for a while: it reads what it wrote.
			defer s.reads.Wrote(p.ClientID)
		}
		rt.handle(w, r)
	})
}

// readsOf marks a request that only reads, so that the reads of it which
// may be a little behind (public reads, stats, lists) may go to the
// replica, unless client wrote a moment ago.
func (s *server) readsOf(r *http.Request, client string) *http.Request {
	if s.reads == nil {
		return r
	}
	return r.WithContext(s.reads.Reads(r.Context(), client))
}

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	apiwire.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers the readiness of the API's dependencies
// (health.Dependencies), and 503 "draining" once the process is stopping
// (Drain), so the load balancer lets go of it.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	code, body := s.ready.Answer(r.Context(), s.now())
	if s.draining.Load() {
		code, body = http.StatusServiceUnavailable, map[string]any{"status": "draining", "dependencies": body["dependencies"]}
	}
	if code != http.StatusOK {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	apiwire.WriteJSON(w, code, body)
}
