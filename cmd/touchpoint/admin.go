package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/admincli"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/sections"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/authdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// serverConfig reads and validates the environment of api, auth and
// worker. TOUCHPOINT_SECRET_KEY must come from the environment: a server
// never falls back to a key file in the data dir, which would run it on a
// key `touchpoint dev` (or anyone able to write there) left on disk.
func serverConfig(env *environment) (config.Config, error) {
	cfg, err := config.Load(env.getenv)
	if err == nil {
		err = validate(cfg, true)
	}
	if err != nil {
		return cfg, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

// loadConfig reads and validates the environment of the admin CLI. The
// secret key comes from TOUCHPOINT_SECRET_KEY, or from the key `touchpoint
// dev` keeps in its data dir, so the admin CLI works against a dev setup
// too.
func loadConfig(env *environment) (config.Config, error) {
	cfg, err := config.Load(env.getenv)
	if err != nil {
		return cfg, fmt.Errorf("configuration: %w", err)
	}
	if cfg.SecretKey == "" {
		if key, err := os.ReadFile(devSecretKeyPath(cfg)); err == nil {
			cfg.SecretKey = strings.TrimSpace(string(key))
		}
	}
	if err := validate(cfg, true); err != nil {
		return cfg, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

// validate checks every value of cfg: config's own, and each section's
// as the package that owns it reads it (the Temporal client's, the SMS
// provider's, the mail providers'). requireSecret is false only for `dev`.
func validate(cfg config.Config, requireSecret bool) error {
	return errors.Join(cfg.Validate(requireSecret), sections.Check(cfg.Settings))
}

func devSecretKeyPath(cfg config.Config) string { return filepath.Join(cfg.DataDir, "secret.key") }

// openStore connects to PostgreSQL with the configured defaults (invite
// delay, account quotas); the caller closes the returned pool.
func openStore(ctx context.Context, cfg config.Config) (*store.Store, error) {
	db, err := store.OpenPool(ctx, cfg.DatabaseURL, cfg.DBMaxConns)
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, fmt.Errorf("%w\n%s", err, createDatabaseHint(cfg.DatabaseURL))
	}
	if err != nil {
		return nil, err
	}
	st := storeset.New(db, cfg.DefaultInviteDelay)
	st.Accounts.Quotas = accountdb.Quotas{DailySends: cfg.DailySendQuota, RecipientDailyCap: cfg.RecipientDailyCap,
		Channels: cfg.ChannelQuota, EventTypes: cfg.EventTypeQuota, WebhookEndpoints: cfg.WebhookQuota, DailyEvents: cfg.DailyEventQuota}
	return st, nil
}

// createDatabaseHint says how to create the database of DATABASE_URL:
// touchpoint migrate makes the tables, never the database itself.
func createDatabaseHint(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "create the database of DATABASE_URL first, then run touchpoint migrate"
	}
	name := strings.TrimPrefix(u.Path, "/")
	cmd := []string{"createdb"}
	if h := u.Hostname(); h != "" {
		cmd = append(cmd, "--host", h)
	}
	if p := u.Port(); p != "" {
		cmd = append(cmd, "--port", p)
	}
	if u.User != nil && u.User.Username() != "" {
		cmd = append(cmd, "--username", u.User.Username())
	}
	cmd = append(cmd, name)
	return fmt.Sprintf("create it first, as a role that may create databases, then run touchpoint migrate again "+
		"(migrate creates the tables, not the database; only touchpoint dev creates its own):\n  %s\nor in psql: CREATE DATABASE %q;",
		strings.Join(cmd, " "), name)
}

// adminStore loads the configuration (validated, with the secret key,
// when withSecret) and connects to PostgreSQL; the caller closes the pool.
func adminStore(ctx context.Context, env *environment, withSecret bool) (config.Config, *store.Store, error) {
	cfg, err := config.Load(env.getenv)
	if withSecret {
		cfg, err = loadConfig(env)
	}
	if err != nil {
		return cfg, nil, err
	}
	st, err := openStore(ctx, cfg)
	return cfg, st, err
}

// admin is the admin CLI on this process's streams and environment,
// reaching PostgreSQL, Temporal and the built-in issuer as the processes
// do.
func (env *environment) admin() *admincli.Env {
	return admincli.New(admincli.Options{
		Stdout: env.stdout, Stderr: env.stderr, Getenv: env.getenv,
		OpenStore: func(ctx context.Context, withSecret bool) (config.Config, *store.Store, error) {
			return adminStore(ctx, env, withSecret)
		},
		DialTemporal: func(cfg config.Config) (client.Client, error) { return dialTemporal(cfg, env.logger, nil) },
		IssuerOptions: func(cfg config.Config, repo *authdb.Store) authserver.Options {
			return issuerOptions(cfg, repo, env.logger)
		},
		BuildVersion: buildVersion(),
	})
}
