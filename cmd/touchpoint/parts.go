package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	netmail "net/mail"
	"net/url"
	"runtime"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"golang.org/x/sync/errgroup"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/console"
	"github.com/touchpoint/touchpoint/console/signin"
	"github.com/touchpoint/touchpoint/health"
	"github.com/touchpoint/touchpoint/internal/giveway"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/mailevents"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/pages"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/starter"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/temporalclient"
	"github.com/touchpoint/touchpoint/webhook"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

// A part is one long-running piece of a process (the API, the issuer, the
// worker); `touchpoint dev` runs all of them in one errgroup.
type part func(ctx context.Context) error

// runParts runs parts until ctx ends or one fails, which stops the rest.
func runParts(ctx context.Context, parts ...part) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, p := range parts {
		g.Go(func() error { return p(ctx) })
	}
	return g.Wait()
}

// temporalConfig is the Temporal client's configuration: Temporal's own
// (TEMPORAL_*, a temporal.toml profile) from the values cfg read, or the
// plain-text client of the embedded server of `touchpoint dev`.
func temporalConfig(cfg config.Config) (temporalclient.Config, error) {
	if cfg.TemporalEmbedded {
		return temporalclient.Plain(cfg.TemporalAddress, cfg.TemporalNamespace), nil
	}
	return temporalclient.Load(cfg.Settings.Get)
}

// dialTemporal returns a client of temporalConfig (logged here with its
// secrets masked) that connects on first use, so a process starts (and
// the API accepts events) while Temporal is still down; a TLS mistake is
// explained in the terms of the TEMPORAL_* variables when a call fails.
// The SDK's metrics go to m.
func dialTemporal(cfg config.Config, logger *slog.Logger, m *metrics.Set) (client.Client, error) {
	temporal, err := temporalConfig(cfg)
	if err != nil {
		return nil, err
	}
	opts, err := temporal.ClientOptions()
	if err != nil {
		return nil, err
	}
	logger.Info("temporal client", "temporal", temporal)
	handler, _ := m.TemporalHandler() // reports until the process ends
	opts.Logger = sdklog.NewStructuredLogger(logger.With("component", "temporal-sdk"))
	opts.MetricsHandler = handler
	return temporalclient.NewLazy(opts)
}

// authPart builds the built-in issuer listening on ln. People sign in to
// the console through it with links it mails over TOUCHPOINT_SMTP_URL, or
// into mailDir (`touchpoint dev`) without one; with neither, only API
// clients get tokens.
func authPart(ctx context.Context, cfg config.Config, st *store.Store, logger *slog.Logger, ln net.Listener, m *metrics.Set,
	mailDir string) (part, error) {
	logger = logger.With("component", "auth")
	opts := issuerOptions(cfg, st.Auth, logger)
	if cfg.SMTPURL != "" || mailDir != "" {
		mailer, err := mail.New(cfg.SMTPURL, cfg.MailFrom, mailDir, logger, nil) // sign-in links: no provider reports them
		if err != nil {
			return nil, fmt.Errorf("mail: %w", err)
		}
		opts.People, opts.Mail = storeset.People(st), mailer
		opts.RelyingParties = []authserver.RelyingParty{consoleParty(cfg)}
	} else {
		logger.Warn("TOUCHPOINT_SMTP_URL is not set: nobody can sign in to the console through the built-in issuer, " +
			"which mails their sign-in links")
	}
	srv, err := authserver.New(ctx, opts)
	if err != nil {
		return nil, err
	}
	h := m.Instrument("auth", []string{authserver.TokenPath, authserver.DiscoveryPath, authserver.JWKSPath, authserver.HealthPath,
		authserver.AuthorizePath, authserver.SignInPath}, srv)
	return func(ctx context.Context) error {
		serve := func(ctx context.Context) error {
			return serveHTTP(ctx, logger, "auth", ln, h, drain{period: cfg.ShutdownDrain})
		}
		return runServing(ctx, serve, srv.Run)
	}, nil
}

// consoleParty is the console as a client of the built-in issuer: a
// public client whose only redirect URI is the console's callback on the
// API's base URL. Both processes derive it from the same configuration,
// so nothing needs registering.
func consoleParty(cfg config.Config) authserver.RelyingParty {
	return authserver.RelyingParty{ClientID: signin.ClientID, RedirectURIs: []string{cfg.BaseURL + signin.CallbackPath},
		Home: cfg.BaseURL + console.HomePath}
}

// metricsPart serves m at /metrics on cfg.MetricsAddr, with Go's profiles
// when cfg.Pprof; without an address it does nothing.
func metricsPart(cfg config.Config, logger *slog.Logger, m *metrics.Set) (part, error) {
	if cfg.MetricsAddr == "" {
		return func(ctx context.Context) error { <-ctx.Done(); return nil }, nil
	}
	ln, err := listen("metrics", cfg.MetricsAddr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+metrics.Path, m.Handler())
	if cfg.Pprof {
		serveProfiles(mux)
	}
	return func(ctx context.Context) error { return serveHTTP(ctx, logger, "metrics", ln, mux, drain{}) }, nil
}

// Sampling of the block and mutex profiles: on average one event per
// 100 µs of blocking, and one contended lock in 100. Both cost little
// enough to leave on while a process profiles.
const (
	blockProfileRate     = 100_000 // ns
	mutexProfileFraction = 100
)

// serveProfiles adds Go's runtime profiles (net/http/pprof) to mux under
// /debug/pprof/, and turns on the sampling the block and mutex profiles
// need. `go tool pprof http://ADDR/debug/pprof/profile?seconds=10` takes
// ten seconds of CPU.
func serveProfiles(mux *http.ServeMux) {
	runtime.SetBlockProfileRate(blockProfileRate)
	runtime.SetMutexProfileFraction(mutexProfileFraction)
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}

// apiPart builds the API listening on ln with its token verifier, the
// outbox starter and the NOTIFY sender. tokensReady is nil once the API
// can verify tokens (every issuer discovered; until then it answers 503).
func apiPart(cfg config.Config, st *store.Store, tc client.Client, logger *slog.Logger, ln net.Listener, m *metrics.Set) (run part, tokensReady func() error, err error) {
	logger = logger.With("component", "api")
	verifier, err := auth.New(verifierOptions(cfg, st.Auth, logger))
	if err != nil {
		return nil, nil, err
	}
	fb, unsub, err := pageLinks(cfg)
	if err != nil {
		return nil, nil, err
	}
	secrets, err := webhookSecrets(cfg)
	if err != nil {
		return nil, nil, err
	}
	pubKeys, err := publication.NewKeys(st.Reviews, secretkey.Derive(cfg.SecretKey, secretkey.PublicationKey), nil)
	if err != nil {
		return nil, nil, err
	}
	mailEvents, err := mailevents.Verifiers(cfg.Settings.Get)
	if err != nil {
		return nil, nil, err
	}
	replica, err := readReplica(cfg, st, logger, m)
	if err != nil {
		return nil, nil, err
	}
	notifier := starter.NewNotifier(st.Events, logger)
	// The starter gives way to this process's accepts: the client of an
	// accept waits now, the invites of its events are due later.
	gate := giveway.New(giveway.Config{}, time.Now)
	start := &starter.Starter{Outbox: st.Events, Temporal: tc, Logger: logger.With("component", "starter"), DatabaseURL: cfg.DatabaseURL, Metrics: m,
		Gate: gate}
	m.WatchOutbox(st.Events.OutboxBacklog)
	// The API's housekeeping makes the monthly partitions ahead.
	m.WatchPartitions(st.Partitions.MonthsAhead)
	// An account's complaint rate, for TouchpointComplaintRate: the API
	// takes the complaints.
	m.WatchMailLastDay(mailLastDay(st.Reports))
	readiness := func(ctx context.Context) map[string]error {
		_, terr := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
		deps := map[string]error{"temporal": terr, "issuer": verifier.Ready()}
		if replica != nil {
			deps["replica"] = replica.Ready() // "lagging" or "down": reads go to the primary
		}
		return deps
	}
	var reads apiserver.ReadRouter
	if replica != nil {
		reads = replica
	}
	// The console tells workflows of its cancels through the API's
	// signal delivery, which exists once the API is built.
	var api *apiserver.Server
	consoleUI, err := consoleHandler(cfg, st, logger, consoleParts{fb: fb, unsub: unsub, secrets: secrets,
		cancelled: func(id string) { api.SignalCancel(id) }, retried: notifier.Poke, reads: reads})
	if err != nil {
		return nil, nil, err
	}
	handler := apiserver.New(apiserver.Options{
		Events:           st.Events,
		TemplateStore:    st.Templates,
		Suppressions:     st.Suppressions,
		Reports:          st.Reports,
		Erasure:          st,
		DB:               st.DB(),
		Accounts:         st.Accounts,
		Stats:            st.Stats,
		Webhooks:         st.Webhooks,
		Reviews:          st.Reviews,
		Invites:          st.Invites,
		Console:          consoleUI,
		Auth:             verifier,
		Logger:           logger,
		MaxBodyBytes:     cfg.MaxBodyBytes,
		Workflows:        tc,
		Notify:           notifier.Poke,
		AcceptLoad:       gate,
		Metrics:          m,
		FeedbackLinks:    fb,
		FeedbackLinkTTL:  cfg.FeedbackLinkTTL,
		UnsubscribeLinks: unsub,
		SMS:              smsCallbacks(cfg),
		// The mail providers' reports of delivery, bounces and complaints.
		MailEvents: mailEvents,
		// Webhook secrets are made by the API and sealed for the worker.
		WebhookSecrets:      secrets,
		WebhookAllowPrivate: cfg.WebhookAllowPrivate,
		// Per replica; bench raises them for its run.
		RatePerSecond: cfg.RatePerSecond,
		RateBurst:     cfg.RateBurst,
		// Per replica too: the batch bytes one process holds at once.
		BatchInflightBytes: cfg.BatchInflightBytes,
		// The public pages read the client address as the issuer does,
		// and keep browsers on https when they are served there.
		TrustedProxies: cfg.TrustedProxies,
		HSTS:           strings.HasPrefix(cfg.BaseURL, "https://"),
		// The proofs of public reviews, and their absolute links.
		PublicationKeys: pubKeys,
		PublicBaseURL:   cfg.BaseURL,
		Readiness:       readiness,
		// Public reads, stats and lists from the read replica, where one
		// is configured.
		Reads: reads,
	})
	api = handler
	// On SIGTERM the API drains (readiness fails, requests are still
	// served), then finishes the requests in flight; only then do the
	// parts that carry on what requests began stop: the starter (which
	// hands back any batch it holds), the notifier, signal delivery, and
	// the read replica's probe.
	serve := func(ctx context.Context) error {
		return serveHTTP(ctx, logger, "api", ln, handler, drain{period: cfg.ShutdownDrain, draining: handler.Drain})
	}
	behind := []part{verifier.Run, notifier.Run, start.Run, handler.Run,
		func(ctx context.Context) error { return st.RunHousekeeping(ctx, cfg.EventRetention, logger) },
		func(ctx context.Context) error { return st.Stats.RunFunnelFolder(ctx, logger) }}
	if replica != nil {
		behind = append(behind, func(ctx context.Context) error {
			defer replica.Close()
			return replica.Run(ctx)
		})
	}
	return func(ctx context.Context) error { return runServing(ctx, serve, behind...) }, verifier.Ready, nil
}

// readReplica opens the streaming replica of DATABASE_READ_URL, lets the
// store's reads that may be a little behind use it, and exports its state
// to m; nil without one. It does not connect: a replica that is down
// leaves every read on the primary until it answers.
func readReplica(cfg config.Config, st *store.Store, logger *slog.Logger, m *metrics.Set) (*pg.Replica, error) {
	if cfg.DatabaseReadURL == "" {
		return nil, nil
	}
	r, err := pg.OpenReplica(cfg.DatabaseReadURL, st.DB(), cfg.DBMaxConns,
		pg.ReplicaOptions{OnRead: m.ReplicaRead, Logger: logger.With("component", "read-replica")})
	if err != nil {
		return nil, err
	}
	st.UseReplica(r)
	m.WatchReplica(func() (time.Duration, bool, bool) {
		s := r.Status()
		return s.Lag, s.State != pg.StateDown, s.State == pg.StateOK
	})
	return r, nil
}

// runAuthCommand is `touchpoint auth`.
func (env *environment) runAuthCommand(ctx context.Context, args []string) error {
	cfg, st, err := startProcess(ctx, env, "auth", args)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	ln, err := listen("auth", cfg.AuthAddr)
	if err != nil {
		return err
	}
	m := metrics.New()
	p, err := authPart(ctx, cfg, st, env.logger, ln, m, "")
	if err != nil {
		ln.Close()
		return err
	}
	return withMetrics(ctx, cfg, env, m, p)
}

// withMetrics runs a command's part together with its /metrics server.
func withMetrics(ctx context.Context, cfg config.Config, env *environment, m *metrics.Set, p part) error {
	mp, err := metricsPart(cfg, env.logger, m)
	if err != nil {
		return err
	}
	return runParts(ctx, p, mp)
}

// runAPICommand is `touchpoint api`.
func (env *environment) runAPICommand(ctx context.Context, args []string) error {
	cfg, st, err := startProcess(ctx, env, "api", args)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	m := metrics.New()
	st.Accounts.OnQuotaExceeded = m.QuotaExceeded
	tc, err := dialTemporal(cfg, env.logger, m)
	if err != nil {
		return err
	}
	defer tc.Close()
	ln, err := listen("api", cfg.APIAddr)
	if err != nil {
		return err
	}
	p, _, err := apiPart(cfg, st, tc, env.logger, ln, m)
	if err != nil {
		ln.Close()
		return err
	}
	return withMetrics(ctx, cfg, env, m, p)
}

// startProcess is the common start of a server command: flags (none yet),
// validated configuration (TOUCHPOINT_SECRET_KEY from the environment)
// logged with secrets masked, and the store.
func startProcess(ctx context.Context, env *environment, name string, args []string) (config.Config, *store.Store, error) {
	if len(args) > 0 {
		return config.Config{}, nil, fmt.Errorf("%s takes no arguments; it is configured by the environment (see docs/operations.md)", name)
	}
	cfg, err := serverConfig(env)
	if err != nil {
		return cfg, nil, err
	}
	env.logger.Info("starting", "process", name, "version", buildVersion(), "config", cfg)
	if name != "auth" && !strings.HasPrefix(cfg.BaseURL, "https://") {
		// Invites carry {base_url}/unsubscribe as their one-click
		// unsubscribe URL, which RFC 8058 wants on https.
		env.logger.Warn("TOUCHPOINT_BASE_URL is not https: mailbox providers ignore a one-click unsubscribe (RFC 8058) that is not https",
			"base_url", cfg.BaseURL)
	}
	if name == "worker" && !mailFromIsYours(cfg.MailFrom) {
		env.logger.Warn("TOUCHPOINT_MAIL_FROM is not an address of your own domain: receiving mail servers refuse invites from "+
			cfg.MailFrom+"; set it, e.g. TOUCHPOINT_MAIL_FROM=\"Acme Reviews <reviews@acme.example>\"", "mail_from", cfg.MailFrom)
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return cfg, nil, err
	}
	return cfg, st, nil
}

// mailFromIsYours reports whether the sender address is on a domain that
// can be someone's: not the default's touchpoint.localhost, nor any
// other .localhost or dotless name, which no receiving server accepts.
func mailFromIsYours(from string) bool {
	addr, err := netmail.ParseAddress(from)
	if err != nil {
		return false
	}
	_, domain, _ := strings.Cut(addr.Address, "@")
	domain = strings.ToLower(strings.TrimSuffix(domain, "."))
	return strings.Contains(domain, ".") && domain != "localhost" && !strings.HasSuffix(domain, ".localhost")
}

// workerPart builds the invite worker and the starter of template test
// sends. Without an SMTP URL invites are
// written as .eml files into mailDir (`touchpoint dev`); it returns where
// mail goes, for the dev banner.
func workerPart(cfg config.Config, st *store.Store, tc client.Client, logger *slog.Logger, mailDir string) (part, string, error) {
	return pollingWorkerPart(cfg, st, tc, logger, mailDir, new(worker.Polling))
}

// pollingWorkerPart is workerPart keeping polling up to date.
func pollingWorkerPart(cfg config.Config, st *store.Store, tc client.Client, logger *slog.Logger, mailDir string,
	polling *worker.Polling) (part, string, error) {
	logger = logger.With("component", "worker")
	// Every message names itself to each mail provider as its reports
	// read it back.
	mailer, err := mail.New(cfg.SMTPURL, cfg.MailFrom, mailDir, logger, mailevents.Tags())
	if err != nil {
		return nil, "", fmt.Errorf("mail: %w", err)
	}
	mailbox := mailDir + " (*.eml)"
	if cfg.SMTPURL != "" {
		mailbox = "SMTP " + redactedURL(cfg.SMTPURL)
	}
	tmpl, err := templates.New()
	if err != nil {
		return nil, "", err
	}
	fb, unsub, err := pageLinks(cfg)
	if err != nil {
		return nil, "", err
	}
	acts := &activities.Activities{Invites: st.Invites, TemplateStore: st.Templates, Suppressions: st.Suppressions, Accounts: st.Accounts, Mailer: mailer, Templates: tmpl, Feedback: fb, Unsubscribe: unsub, Logger: logger}
	if acts.SMS, acts.SMSTemplates, err = smsSender(cfg); err != nil {
		return nil, "", err
	}
	w := worker.New(tc, acts, worker.Options{Stuck: st.Invites, Outbox: st.Events, Polling: polling, BuildID: workerBuild(cfg), Workflow: workflows.Options{
		SendTimeout:         cfg.SendTimeout,
		SendInitialInterval: cfg.SendRetryInitial,
		SendMaxInterval:     cfg.SendRetryMax,
		SendGiveUpAfter:     cfg.SendGiveUpAfter,
	}, ReconcileGrace: cfg.ReconcileGrace})
	// Test sends of templates go out through this worker: its starter
	// turns the API's rows into their workflows.
	tests := &starter.TestSendStarter{Store: st.Templates, Temporal: tc, Logger: logger.With("component", "test-send-starter")}
	return func(ctx context.Context) error {
		return runParts(ctx, tests.Run, func(ctx context.Context) error {
			return polling.Run(ctx, tc, w, logger.With("task_queue", workflows.TaskQueue))
		})
	}, mailbox, nil
}

// webhookPart builds the webhook worker (its own task queue, so invites
// never wait behind webhook retries) and the starter that turns delivery
// rows into its workflows, and exports the delivery backlog to m. It runs
// wherever the invite worker runs.
func webhookPart(cfg config.Config, st *store.Store, tc client.Client, logger *slog.Logger, m *metrics.Set) (part, error) {
	secrets, err := webhookSecrets(cfg)
	if err != nil {
		return nil, err
	}
	logger = logger.With("component", "webhooks", "task_queue", workflows.WebhookTaskQueue)
	if cfg.WebhookAllowPrivate {
		logger.Warn("TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE=true: webhooks may reach private and loopback addresses; never in production")
	}
	acts := &activities.Webhooks{Store: st.Webhooks, Secrets: secrets, Metrics: m, Logger: logger,
		Client: webhook.NewClient(webhook.Options{AllowPrivate: cfg.WebhookAllowPrivate})}
	w := worker.NewWebhooks(tc, acts, worker.WebhookOptions{BuildID: workerBuild(cfg)})
	start := &starter.WebhookStarter{Store: st.Webhooks, Temporal: tc, Logger: logger.With("component", "webhook-starter")}
	m.WatchWebhooks(st.Webhooks.WebhookBacklog)
	return func(ctx context.Context) error {
		return runParts(ctx, start.Run, func(ctx context.Context) error { return worker.Run(ctx, tc, w, logger) })
	}, nil
}

// webhookSecrets seals and opens webhook endpoint secrets with a key of
// their own purpose.
func webhookSecrets(cfg config.Config) (*webhook.SecretBox, error) {
	return webhook.NewSecretBox(secretkey.Derive(cfg.SecretKey, secretkey.WebhookSecret))
}

// workerHealthPart serves the worker's /healthz, /readyz and /metrics at
// TOUCHPOINT_WORKER_ADDR. /readyz is 503 unless PostgreSQL answers, Temporal
// answers and the worker polls its task queue. Left at its default address,
// which another worker on the same host may hold, the server is given up
// with a warning rather than stopping the worker.
func workerHealthPart(cfg config.Config, st *store.Store, tc client.Client, polling *worker.Polling, logger *slog.Logger, m *metrics.Set) (part, error) {
	logger = logger.With("component", "worker-health")
	addr := cfg.WorkerAddr
	if addr == "" {
		addr = config.DefaultWorkerAddr
	}
	ln, err := listen("worker health", addr)
	if err != nil && cfg.WorkerAddr == "" {
		logger.Warn("no /healthz, /readyz or /metrics for this worker: its default address is taken; set TOUCHPOINT_WORKER_ADDR",
			"addr", addr, "error", err.Error())
		return func(ctx context.Context) error { <-ctx.Done(); return nil }, nil
	}
	if err != nil {
		return nil, err
	}
	probes := health.Handler(map[string]health.Check{
		"postgresql": func(ctx context.Context) error { return st.DB().PingContext(ctx) },
		"temporal": func(ctx context.Context) error {
			_, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		},
		"poller": func(context.Context) error {
			if !polling.Running() {
				return errors.New("the worker is not polling its task queue")
			}
			return nil
		},
	}, logger)
	mux := http.NewServeMux()
	mux.Handle("GET "+health.LivePath, probes)
	mux.Handle("GET "+health.ReadyPath, probes)
	mux.Handle("GET "+metrics.Path, m.Handler())
	if cfg.Pprof {
		serveProfiles(mux)
	}
	h := m.Instrument("worker", []string{health.LivePath, health.ReadyPath, metrics.Path}, mux)
	return func(ctx context.Context) error { return serveHTTP(ctx, logger, "worker", ln, h, drain{}) }, nil
}

// workerBuild is the Build ID of a versioned worker (the binary's
// version), or "" for an unversioned one.
func workerBuild(cfg config.Config) string {
	if !cfg.WorkerVersioning {
		return ""
	}
	return buildVersion()
}

// joinDeploymentPart makes a versioned worker's build current when the
// deployment has none yet, and otherwise says whether it is.
func joinDeploymentPart(cfg config.Config, tc client.Client, logger *slog.Logger) part {
	return func(ctx context.Context) error {
		if build := workerBuild(cfg); build != "" {
			worker.JoinDeployment(ctx, tc, build, 2*time.Second, logger.With("component", "worker"))
		}
		return nil
	}
}

// runWorkerCommand is `touchpoint worker`, and `touchpoint worker
// versions`, which shows and sets the worker deployment's current build.
func (env *environment) runWorkerCommand(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "versions" {
		return env.admin().RunWorkerVersions(ctx, args[1:])
	}
	cfg, st, err := startProcess(ctx, env, "worker", args)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	if cfg.SMTPURL == "" {
		return errors.New("TOUCHPOINT_SMTP_URL is required for `touchpoint worker` (only `touchpoint dev` writes .eml files)")
	}
	m := metrics.New()
	st.Accounts.OnQuotaExceeded = m.QuotaExceeded
	tc, err := dialTemporal(cfg, env.logger, m)
	if err != nil {
		return err
	}
	defer tc.Close()
	polling := new(worker.Polling)
	p, _, err := pollingWorkerPart(cfg, st, tc, env.logger, "", polling)
	if err != nil {
		return err
	}
	hooks, err := webhookPart(cfg, st, tc, env.logger, m)
	if err != nil {
		return err
	}
	// Every replica reports the same database-wide gauges; the alert
	// rules aggregate them with max.
	m.WatchOutbox(st.Events.OutboxBacklog)
	m.WatchOverdue(st.Invites.OverdueInvites)
	hp, err := workerHealthPart(cfg, st, tc, polling, env.logger, m)
	if err != nil {
		return err
	}
	// On SIGTERM the workers stop polling and let their running
	// activities finish (up to worker.DefaultStopTimeout), and the
	// starters hand back any batch they hold; /readyz fails at once (the
	// pollers have stopped), while /healthz and /metrics go on until the
	// activities are done, so that no liveness probe kills a worker
	// finishing its sends.
	join := joinDeploymentPart(cfg, tc, env.logger)
	run := func(ctx context.Context) error {
		return runServing(ctx, func(ctx context.Context) error { return runParts(ctx, p, hooks, join) }, hp)
	}
	if cfg.MetricsAddr == "" || cfg.MetricsAddr == cfg.WorkerAddr {
		return run(ctx) // the worker's own server serves /metrics
	}
	return withMetrics(ctx, cfg, env, m, run)
}

func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable)"
	}
	return u.Redacted()
}

// pageLinks makes the signed links of the public pages: the feedback page
// at TOUCHPOINT_FEEDBACK_URL and the one-click unsubscribe at the API's
// /unsubscribe, each signed with a key of its own purpose.
func pageLinks(cfg config.Config) (fb, unsub *signedlink.Links, err error) {
	if fb, err = signedlink.New(cfg.FeedbackURL, secretkey.Derive(cfg.SecretKey, secretkey.FeedbackLink)); err != nil {
		return nil, nil, err
	}
	unsubURL := strings.TrimRight(cfg.BaseURL, "/") + pages.UnsubscribePath
	if unsub, err = signedlink.New(unsubURL, secretkey.Derive(cfg.SecretKey, secretkey.Unsubscribe)); err != nil {
		return nil, nil, err
	}
	return fb, unsub, nil
}
