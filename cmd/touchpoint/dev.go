//go:build !nodev

// `touchpoint dev` embeds a Temporal server and its Web UI, which take
// minutes to compile; the production build (-tags nodev) leaves this file
// and those packages out.

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/console"
	"github.com/touchpoint/touchpoint/devtemporal"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

// devSummary is what the usage says of `dev`.
const devSummary = "run everything in one process: embedded Temporal + UI, auth, API, worker"

// devDefaults are the settings `dev` uses where the environment is silent.
var devDefaults = map[string]string{
	"TOUCHPOINT_DEFAULT_INVITE_DELAY": "PT10S",
	"TOUCHPOINT_METRICS_ADDR":         "127.0.0.1:9464",
	// Webhooks to receivers on this machine (http://127.0.0.1:…).
	"TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE": "true",
}

func (env *environment) runDev(ctx context.Context, args []string) error {
	fs := env.flags("dev")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := devConfig(env.getenv)
	if err != nil {
		return err
	}
	log := env.logger
	log.Info("starting", "process", "dev", "config", cfg)

	// Bind every port first, so a busy one stops us before anything starts.
	apiLn, err := listen("api", cfg.APIAddr)
	if err != nil {
		return err
	}
	defer apiLn.Close()
	authLn, err := listen("auth", cfg.AuthAddr)
	if err != nil {
		return err
	}
	defer authLn.Close()

	st, err := devStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	temporal, err := devtemporal.Start(ctx, devtemporal.Config{
		DBFile:           filepath.Join(cfg.DataDir, "temporal.db"),
		FrontendAddr:     cfg.TemporalAddress,
		UIAddr:           cfg.TemporalUIAddr,
		Namespace:        cfg.TemporalNamespace,
		Logger:           log.With("component", "temporal-server"),
		SearchAttributes: workflows.SearchAttributes(),
	})
	if err != nil {
		return fmt.Errorf("embedded temporal: %w", err)
	}
	defer func() {
		if err := temporal.Stop(); err != nil {
			log.Warn("embedded temporal stop", "error", err)
		}
	}()
	// The client dials the server just started, in plain text, whatever
	// TEMPORAL_* or a temporal.toml profile say of another cluster.
	cfg.TemporalAddress, cfg.TemporalEmbedded = temporal.FrontendAddress(), true
	if cfg.TemporalUIURL == "" { // the console links workflows to the embedded UI
		cfg.TemporalUIURL = temporal.UIURL()
	}
	if err := devReconciler(ctx, env, cfg); err != nil {
		return err
	}

	creds, err := seedDev(ctx, st, newSecretFunc(cfg))
	if err != nil {
		return err
	}
	m := metrics.New() // one set for every part of the process
	// What Temporal Cloud would bill for this stack's work, on /metrics.
	m.Register(temporal.ActionsCollector())
	err = env.runDevParts(ctx, cfg, st, m, apiLn, authLn, func(mailbox string) {
		printDevBanner(env, cfg, temporal.UIURL(), mailbox, creds)
	})
	log.Info("stopped", "process", "dev")
	return err
}

// devConfig is the configuration of `dev`: the environment over
// devDefaults, with the secret key kept in the data dir when none is set.
func devConfig(getenv func(string) string) (config.Config, error) {
	cfg, err := config.Load(func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return devDefaults[k]
	})
	if err != nil {
		return cfg, fmt.Errorf("configuration: %w", err)
	}
	// One process, one build: its worker is unversioned.
	cfg.WorkerVersioning = false
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return cfg, fmt.Errorf("data dir: %w", err)
	}
	if cfg.SecretKey == "" {
		if cfg.SecretKey, err = devSecretKey(devSecretKeyPath(cfg)); err != nil {
			return cfg, fmt.Errorf("dev secret key: %w", err)
		}
	}
	if err := validate(cfg, true); err != nil {
		return cfg, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

// devStore creates the database when it is missing, connects and applies
// the schema.
func devStore(ctx context.Context, cfg config.Config) (*store.Store, error) {
	if err := store.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if _, err := schema.Migrate(ctx, st.DB()); err != nil {
		st.DB().Close()
		return nil, err
	}
	return st, nil
}

// runDevParts runs the issuer, the API, the worker with its health and
// metrics server (at TOUCHPOINT_WORKER_ADDR, as `touchpoint worker`) and
// the metrics server (of m)
// against the embedded Temporal at cfg.TemporalAddress until ctx ends.
// banner is called, with where mail goes, once the API accepts tokens:
// it invites the reader to call the API at once.
func (env *environment) runDevParts(ctx context.Context, cfg config.Config, st *store.Store, m *metrics.Set, apiLn, authLn net.Listener, banner func(mailbox string)) error {
	log := env.logger
	st.Accounts.OnQuotaExceeded = m.QuotaExceeded
	tc, err := dialTemporal(cfg, log, m)
	if err != nil {
		return err
	}
	defer tc.Close()
	authRun, err := authPart(ctx, cfg, st, log, authLn, m, filepath.Join(cfg.DataDir, "outbox"))
	if err != nil {
		return err
	}
	apiRun, tokensReady, err := apiPart(cfg, st, tc, log, apiLn, m)
	if err != nil {
		return err
	}
	polling := new(worker.Polling)
	workerRun, mailbox, err := pollingWorkerPart(cfg, st, tc, log, filepath.Join(cfg.DataDir, "outbox"), polling)
	if err != nil {
		return err
	}
	// What `touchpoint worker` serves at TOUCHPOINT_WORKER_ADDR, the worker
	// of dev serves too: /healthz, /readyz, and /metrics with the gauge
	// of overdue invites.
	m.WatchOverdue(st.Invites.OverdueInvites)
	workerHealthRun, err := workerHealthPart(cfg, st, tc, polling, log, m)
	if err != nil {
		return err
	}
	webhookRun, err := webhookPart(cfg, st, tc, log, m)
	if err != nil {
		return err
	}
	metricsRun, err := metricsPart(cfg, log, m)
	if err != nil {
		return err
	}
	announce := func(ctx context.Context) error {
		if awaitNil(ctx, tokensReady) == nil {
			banner(mailbox)
		}
		return nil
	}
	err = runParts(ctx, authRun, apiRun, workerRun, webhookRun, metricsRun, workerHealthRun, announce)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// awaitNil polls check until it returns nil or ctx ends.
func awaitNil(ctx context.Context, check func() error) error {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for check() != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

func printDevBanner(env *environment, cfg config.Config, uiURL, mailbox string, c devCredentials) {
	fmt.Fprintf(env.stdout, `
Touchpoint dev is running. Ctrl-C stops it; a restart keeps the data.

  API          %s
  Console      %s%s (sign in as %s: the link lands in the Mail outbox below)
  Issuer       %s
  Temporal UI  %s
  Temporal     %s (namespace %s)
  Mail         %s
  Metrics      http://%s/metrics

Dev account %s, default channel %s, full-access client (secret rotated at every start):

  export CLIENT_ID=%s CLIENT_SECRET=%s CHANNEL_ID=%s

Get a token:

  curl -s %s/oauth/token -d client_id=$CLIENT_ID -d client_secret=$CLIENT_SECRET -d grant_type=client_credentials -d audience=%s

`, cfg.BaseURL, cfg.BaseURL, console.HomePath, devOwner, cfg.AuthURL, uiURL, cfg.TemporalAddress, cfg.TemporalNamespace, mailbox, cfg.MetricsAddr,
		c.AccountID, c.ChannelID, c.ClientID, c.ClientSecret, c.ChannelID, cfg.AuthURL, cfg.BaseURL)
}

// devReconciler puts the reconciler's schedule on the embedded Temporal.
func devReconciler(ctx context.Context, env *environment, cfg config.Config) error {
	tc, err := dialTemporal(cfg, env.logger, nil)
	if err != nil {
		return err
	}
	defer tc.Close()
	return ensureReconciler(ctx, tc, cfg, time.Minute, func(line string) { env.logger.Info(line) })
}
