package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/searchattr"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/internal/sections"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/authdb"
	"github.com/touchpoint/touchpoint/store/partitiondb"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/temporalclient"
	"github.com/touchpoint/touchpoint/text"
	"github.com/touchpoint/touchpoint/workflows"
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

func (env *environment) runMigrate(ctx context.Context, args []string) error {
	fs := env.flags("migrate")
	schemaOnly := fs.Bool("schema-only", false, "apply the PostgreSQL schema only; skip the Temporal search attributes and the reconciler's schedule")
	partition := fs.Bool("partition", false, "move the rows of an installation made before the monthly partitions onto them, in batches, "+
		"while the service runs (run it once every process runs this release; stop it any time and run it again to go on)")
	wait := fs.Duration("temporal-wait", 2*time.Minute, "how long to wait for Temporal to answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, st, err := adminStore(ctx, env, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	applied, err := schema.Migrate(ctx, st.DB())
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(env.stdout, "schema is up to date")
	}
	for _, name := range applied {
		fmt.Fprintln(env.stdout, "applied", name)
	}
	if err := movePartitions(ctx, env, st, *partition); err != nil {
		return err
	}
	if *schemaOnly {
		return nil
	}
	if err := registerSearchAttributes(ctx, env, cfg, *wait); err != nil {
		return err
	}
	tc, err := dialTemporal(cfg, env.logger, nil)
	if err != nil {
		return err
	}
	defer tc.Close()
	return ensureReconciler(ctx, tc, cfg, *wait, func(line string) { fmt.Fprintln(env.stdout, line) })
}

// movePartitions moves the tables that wait for their monthly partitions
// (with move), reporting progress at most every few seconds, or says that
// they wait.
func movePartitions(ctx context.Context, env *environment, st *store.Store, move bool) error {
	waiting, err := st.Partitions.Waiting(ctx)
	if err != nil || len(waiting) == 0 {
		return err
	}
	if !move {
		fmt.Fprintf(env.stdout, "%d tables wait to be moved onto monthly partitions (%s): once every process runs this release, "+
			"run touchpoint migrate --partition (it moves them in batches while the service runs)\n", len(waiting), strings.Join(waiting, ", "))
		return nil
	}
	var last time.Time
	err = st.Partitions.Move(ctx, partitiondb.MoveOptions{Progress: func(p partitiondb.Progress) {
		switch {
		case p.Swapped:
			fmt.Fprintf(env.stdout, "%s: moved onto monthly partitions\n", p.Table)
		case p.Waiting:
			if time.Since(last) >= 5*time.Second {
				fmt.Fprintf(env.stdout, "%s: waiting for a lock (held by a long transaction?); trying again\n", p.Table)
				last = time.Now()
			}
		case time.Since(last) >= 5*time.Second || p.Pages == p.Total:
			fmt.Fprintf(env.stdout, "%s: %d%% (%d rows copied)\n", p.Table, 100*p.Pages/max(p.Total, 1), p.Rows)
			last = time.Now()
		}
	}})
	if errors.Is(err, context.Canceled) {
		return errors.New("stopped; run touchpoint migrate --partition again to go on where it stopped")
	}
	return err
}

// registerSearchAttributes adds the invite workflow's search attributes
// to the namespace, retrying while Temporal is still starting.
func registerSearchAttributes(ctx context.Context, env *environment, cfg config.Config, wait time.Duration) error {
	temporal, err := temporalConfig(cfg)
	if err != nil {
		return err
	}
	tc, err := dialTemporal(cfg, env.logger, nil)
	if err != nil {
		return err
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var missingSince time.Time // when Temporal first said the namespace does not exist
	for {
		added, err := searchattr.Register(ctx, tc, temporal.Namespace(), workflows.SearchAttributes())
		if err == nil {
			if len(added) == 0 {
				fmt.Fprintln(env.stdout, "temporal search attributes are up to date")
			}
			for _, name := range added {
				fmt.Fprintln(env.stdout, "registered search attribute", name)
			}
			return nil
		}
		if !namespaceMissing(err) {
			missingSince = time.Time{}
		} else if missingSince.IsZero() {
			missingSince = time.Now()
		}
		// A namespace just created reaches every frontend within seconds;
		// one missing for longer is missing.
		if !missingSince.IsZero() && time.Since(missingSince) >= namespaceGrace {
			return createNamespaceError(temporal, err)
		}
		select {
		case <-ctx.Done():
			if namespaceMissing(err) {
				return createNamespaceError(temporal, err)
			}
			return fmt.Errorf("temporal at %s: %w", temporal.Address(), err)
		case <-time.After(2 * time.Second):
		}
	}
}

// namespaceGrace is how long migrate waits for a namespace Temporal says
// does not exist.
const namespaceGrace = 30 * time.Second

// namespaceMissing reports whether Temporal answered that the namespace
// does not exist.
func namespaceMissing(err error) bool {
	var nsErr *serviceerror.NamespaceNotFound
	var notFound *serviceerror.NotFound
	return errors.As(err, &nsErr) || errors.As(err, &notFound) && strings.Contains(notFound.Error(), "amespace")
}

// createNamespaceError says how to create the namespace migrate needs.
func createNamespaceError(temporal temporalclient.Config, err error) error {
	ns := temporal.Namespace()
	return fmt.Errorf("temporal at %s: namespace %q does not exist (%w); create it, then run touchpoint migrate again:\n"+
		"  temporal operator namespace create --namespace %s --retention 30d --address %s\n"+
		"(with the TLS or API key settings you give touchpoint; on Temporal Cloud, create it in the Cloud UI). "+
		"docs/operations.md, \"Running Temporal yourself\", has every step",
		temporal.Address(), ns, err, ns, temporal.Address())
}

const accountsUsage = `usage:
  touchpoint accounts create --name N [--json]
  touchpoint accounts update --account acc-… [--display-name N] [--logo-url https://…] [--brand-color #RRGGBB] [--reply-to shop@example.com]
                             [QUOTAS] [--json]    (an empty value clears a field)
  touchpoint accounts set-quota --account acc-… [QUOTAS] [--json]    (without any, it shows the quotas)
      QUOTAS: [--daily-sends N] [--recipient-daily-cap N] [--channels N] [--event-types N]
              [--webhook-endpoints N] [--daily-events N]
      N is a count (0: no limit) or "default" (the TOUCHPOINT_… default)
  touchpoint accounts rotate-publication-key --account acc-… [--json]
      a new key signs the proofs of the account's public reviews; the older keys stay published`

func (env *environment) runAccounts(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(accountsUsage)
	}
	switch args[0] {
	case "create":
		return env.createAccount(ctx, args[1:])
	case "update":
		return env.updateAccount(ctx, args[1:])
	case "set-quota":
		return env.setQuota(ctx, args[1:])
	case "rotate-publication-key":
		return env.rotatePublicationKey(ctx, args[1:])
	}
	return errors.New(accountsUsage)
}

// rotatePublicationKey is `accounts rotate-publication-key`: a new
// publication key signs the account's proofs from now on (the API's
// replicas follow within half a minute); every older key stays in the
// account's JWKS, so the proofs it signed still verify.
func (env *environment) rotatePublicationKey(ctx context.Context, args []string) error {
	fs := env.flags("accounts rotate-publication-key")
	account := fs.String("account", "", "account id (acc-…)")
	asJSON := fs.Bool("json", false, "print the new key's kid as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !store.ValidID("acc", *account) {
		return errors.New("accounts rotate-publication-key: --account must be an account id (acc-…)")
	}
	cfg, st, err := adminStore(ctx, env, true)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	keys, err := publication.NewKeys(st.Reviews, secretkey.Derive(cfg.SecretKey, secretkey.PublicationKey), nil)
	if err != nil {
		return err
	}
	kid, err := keys.Rotate(ctx, *account)
	if err != nil {
		return fmt.Errorf("accounts rotate-publication-key: account %s: %w", *account, err)
	}
	if *asJSON {
		return jsonOut(env.stdout).Encode(map[string]string{"accountId": *account, "kid": kid})
	}
	fmt.Fprintf(env.stdout, "account %s: publication key %s signs from now on; the older keys stay published\n", *account, kid)
	return nil
}

func (env *environment) createAccount(ctx context.Context, args []string) error {
	fs := env.flags("accounts create")
	name := fs.String("name", "", "account name (required)")
	asJSON := fs.Bool("json", false, `print {"accountId","channelId"}`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkName(*name, true); err != nil {
		return fmt.Errorf("accounts create: --name %w", err)
	}
	_, st, err := adminStore(ctx, env, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	acc, ch, err := st.Accounts.CreateAccount(ctx, strings.TrimSpace(*name))
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	if *asJSON {
		return jsonOut(env.stdout).Encode(map[string]string{"accountId": acc.ID, "channelId": ch.ID})
	}
	fmt.Fprintf(env.stdout, "account %s created; its default channel is %s\n", acc.ID, ch.ID)
	return nil
}

// checkName refuses a name that text.Name refuses, or an empty one when
// it is required: names end up in lists, logs and — an account's — the
// From header of invites.
func checkName(name string, required bool) error {
	if required && strings.TrimSpace(name) == "" {
		return errors.New("is required")
	}
	return text.Check(text.Name, name)
}

// quotaFlag is a quota given on the command line: a count of at least 0,
// or "default" (-1: back to the configured default). Unset flags stay nil.
type quotaFlag struct{ v *int }

func (q *quotaFlag) String() string {
	if q == nil || q.v == nil {
		return ""
	}
	return strconv.Itoa(*q.v)
}

func (q *quotaFlag) Set(s string) error {
	n := -1
	if s != "default" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 0 {
			return errors.New(`must be a whole number of at least 0, or "default"`)
		}
	}
	q.v = &n
	return nil
}

// quotaFlags adds a flag per quota to fs; the update they make has the
// flags given.
func quotaFlags(fs *flag.FlagSet) func() accountdb.QuotaUpdate {
	var daily, recipient, channels, eventTypes, webhooks, events quotaFlag
	fs.Var(&daily, "daily-sends", "invites and reminders per UTC day (0: no limit; default: TOUCHPOINT_DAILY_SEND_QUOTA)")
	fs.Var(&recipient, "recipient-daily-cap", "invites and template tests to one address per UTC day (0: no limit; default: TOUCHPOINT_RECIPIENT_DAILY_CAP)")
	fs.Var(&channels, "channels", "channels (0: no limit; default: TOUCHPOINT_CHANNEL_QUOTA)")
	fs.Var(&eventTypes, "event-types", "event types (0: no limit; default: TOUCHPOINT_EVENT_TYPE_QUOTA)")
	fs.Var(&webhooks, "webhook-endpoints", "webhook endpoints (0: no limit; default: TOUCHPOINT_WEBHOOK_QUOTA)")
	fs.Var(&events, "daily-events", "events accepted per UTC day (0: no limit; default: TOUCHPOINT_DAILY_EVENT_QUOTA)")
	return func() accountdb.QuotaUpdate {
		return accountdb.QuotaUpdate{DailySends: daily.v, RecipientDailyCap: recipient.v, Channels: channels.v, EventTypes: eventTypes.v,
			WebhookEndpoints: webhooks.v, DailyEvents: events.v}
	}
}

// printQuotas prints the quotas in force of an account.
func printQuotas(w io.Writer, account string, q accountdb.Quotas) {
	limit := func(n int) string {
		if n == 0 {
			return "no limit"
		}
		return strconv.Itoa(n)
	}
	fmt.Fprintf(w, "quotas of account %s:\n  sends per day:              %s\n  invites per address a day: %s\n  channels:                  %s\n  event types:               %s\n  webhook endpoints:         %s\n  events accepted per day:   %s\n",
		account, limit(q.DailySends), limit(q.RecipientDailyCap), limit(q.Channels), limit(q.EventTypes),
		limit(q.WebhookEndpoints), limit(q.DailyEvents))
}

// setQuota is `accounts set-quota`: it changes the account's own quotas
// and prints those in force.
func (env *environment) setQuota(ctx context.Context, args []string) error {
	fs := env.flags("accounts set-quota")
	account := fs.String("account", "", "account id (acc-…)")
	quotas := quotaFlags(fs)
	asJSON := fs.Bool("json", false, "print the quotas in force as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !store.ValidID("acc", *account) {
		return errors.New("accounts set-quota: --account must be an account id (acc-…)")
	}
	_, st, err := adminStore(ctx, env, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	q, err := st.Accounts.SetAccountQuotas(ctx, *account, quotas())
	if err != nil {
		return fmt.Errorf("accounts set-quota: account %s: %w", *account, err)
	}
	if *asJSON {
		return jsonOut(env.stdout).Encode(q)
	}
	printQuotas(env.stdout, *account, q)
	return nil
}

// updateAccount is `accounts update`: the shop's branding, checked as
// PATCH /account checks it, and the account's own quotas.
func (env *environment) updateAccount(ctx context.Context, args []string) error {
	fs := env.flags("accounts update")
	account := fs.String("account", "", "account id (acc-…, required)")
	asJSON := fs.Bool("json", false, "print the account as JSON")
	fields := map[string]*string{}
	for _, name := range []string{"display-name", "logo-url", "brand-color", "reply-to"} {
		fs.Func(name, "set "+strings.ReplaceAll(name, "-", " ")+" (\"\" clears it)", func(v string) error {
			fields[name] = &v
			return nil
		})
	}
	quotas := quotaFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !store.ValidID("acc", *account) {
		return errors.New("accounts update: --account must be an account id (acc-…)")
	}
	if len(fields) == 0 && !quotas().Any() {
		return errors.New("accounts update: nothing to change; give --display-name, --logo-url, --brand-color, --reply-to or a quota such as --daily-events")
	}
	u, err := apiserver.BrandingUpdate(fields["display-name"], fields["logo-url"], fields["brand-color"], fields["reply-to"])
	if err != nil {
		return fmt.Errorf("accounts update: %w", err)
	}
	_, st, err := adminStore(ctx, env, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	acc, err := st.Accounts.UpdateBranding(ctx, *account, u)
	if err != nil {
		return fmt.Errorf("accounts update: account %s: %w", *account, err)
	}
	q, err := st.Accounts.SetAccountQuotas(ctx, *account, quotas())
	if err != nil {
		return fmt.Errorf("accounts update: account %s: %w", *account, err)
	}
	b := acc.Brand()
	if *asJSON {
		return jsonOut(env.stdout).Encode(map[string]any{"id": acc.ID, "name": acc.Name, "displayName": b.DisplayName,
			"logoUrl": b.LogoURL, "brandColor": b.Color, "replyTo": b.ReplyTo, "quotas": q})
	}
	fmt.Fprintf(env.stdout, "account %s: display name %q, logo %q, colour %q, reply-to %q\n", acc.ID, b.DisplayName, b.LogoURL, b.Color, b.ReplyTo)
	printQuotas(env.stdout, acc.ID, q)
	return nil
}

const clientsUsage = `usage:
  touchpoint clients create --account acc-… [--group full|events|readonly] [--name N] [--json]
  touchpoint clients link --account acc-… --issuer URL --client-id ID [--group full|events|readonly] [--name N] [--json]
  touchpoint clients list --account acc-… [--json]
  touchpoint clients delete cli-…
  touchpoint clients revoke-tokens cli-…`

// clientsFlags are the flags of every `clients` subcommand.
type clientsFlags struct {
	fs                   *flag.FlagSet
	account, group, name string
	asJSON               bool
	issuer, extID        string // link only
}

func (env *environment) runClients(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(clientsUsage)
	}
	sub, args := args[0], args[1:]
	f := clientsFlags{fs: env.flags("clients " + sub)}
	f.fs.StringVar(&f.account, "account", "", "account id (acc-…)")
	f.fs.StringVar(&f.group, "group", auth.GroupFull, "access group: full, events or readonly")
	f.fs.StringVar(&f.name, "name", "", "a name to recognise the client by")
	f.fs.BoolVar(&f.asJSON, "json", false, "print JSON")
	if sub == "link" {
		f.fs.StringVar(&f.issuer, "issuer", "", "the external issuer, exactly as the iss of its tokens")
		f.fs.StringVar(&f.extID, "client-id", "", "the client's id at that issuer (azp or client_id of its tokens)")
	}
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	cfg, st, err := adminStore(ctx, env, true)
	if err != nil {
		return err
	}
	defer st.DB().Close()

	switch sub {
	case "create":
		return env.createClient(ctx, cfg, st, f)
	case "link":
		return linkClient(ctx, env, cfg, st, f.account, strings.TrimSpace(f.issuer), strings.TrimSpace(f.extID), f.name, f.group, f.asJSON)
	case "list":
		return env.listClients(ctx, st, f)
	case "delete", "revoke-tokens":
		if f.fs.NArg() != 1 {
			return fmt.Errorf("usage: touchpoint clients %s cli-…", sub)
		}
		c, err := clientByAnyID(ctx, st, f.fs.Arg(0))
		if err != nil {
			return err
		}
		if sub == "delete" {
			if err := st.Auth.DeleteClient(ctx, c.ID); err != nil {
				return fmt.Errorf("delete client: %w", err)
			}
			fmt.Fprintf(env.stdout, "client %s deleted\n", f.fs.Arg(0))
			return nil
		}
		nb, err := st.Auth.RevokeTokens(ctx, c.ID)
		if err != nil {
			return fmt.Errorf("revoke tokens: %w", err)
		}
		fmt.Fprintf(env.stdout, "tokens of client %s issued before %s are revoked (not-before-policy %d)\n", f.fs.Arg(0), nb.Format(time.RFC3339), nb.Unix())
		return nil
	default:
		return errors.New(clientsUsage)
	}
}

// createClient is `clients create`: a built-in client with a new secret,
// printed once.
func (env *environment) createClient(ctx context.Context, cfg config.Config, st *store.Store, f clientsFlags) error {
	if !store.ValidID("acc", f.account) {
		return errors.New("clients create: --account must be an account id (acc-…)")
	}
	if !auth.ValidGroup(f.group) {
		return fmt.Errorf("clients create: unknown group %q (full, events or readonly)", f.group)
	}
	if err := checkName(f.name, false); err != nil {
		return fmt.Errorf("clients create: --name %w", err)
	}
	if _, err := st.Accounts.Account(ctx, f.account); err != nil {
		return fmt.Errorf("clients create: account %s: %w", f.account, err)
	}
	secret, hash := authserver.NewClientSecret(secretkey.Derive(cfg.SecretKey, secretkey.ClientSecret))
	c, err := st.Auth.CreateClient(ctx, f.account, f.name, f.group, hash)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	if f.asJSON {
		return jsonOut(env.stdout).Encode(map[string]string{"accountId": c.AccountID, "clientId": c.ClientID, "clientSecret": secret})
	}
	fmt.Fprintf(env.stdout, "client id:     %s\nclient secret: %s\naccess group:  %s\nThe secret is shown only now; store it safely.\n", c.ClientID, secret, c.AccessGroup)
	return nil
}

// listClients is `clients list`.
func (env *environment) listClients(ctx context.Context, st *store.Store, f clientsFlags) error {
	if !store.ValidID("acc", f.account) {
		return errors.New("clients list: --account must be an account id (acc-…)")
	}
	cs, err := st.Auth.ListClients(ctx, f.account)
	if err != nil {
		return fmt.Errorf("list clients: %w", err)
	}
	if f.asJSON {
		type row struct {
			ID          string    `json:"id"`
			ClientID    string    `json:"clientId"`
			Name        string    `json:"name"`
			AccessGroup string    `json:"accessGroup"`
			Issuer      string    `json:"issuer,omitempty"`
			NotBefore   time.Time `json:"notBefore"`
			CreatedAt   time.Time `json:"createdAt"`
		}
		rows := make([]row, 0, len(cs))
		for _, c := range cs {
			rows = append(rows, row{c.ID, c.ClientID, c.Name, c.AccessGroup, c.Issuer, c.NotBefore, c.CreatedAt})
		}
		return jsonOut(env.stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCLIENT ID\tNAME\tGROUP\tISSUER\tCREATED")
	for _, c := range cs {
		issuer := c.Issuer
		if issuer == "" {
			issuer = "(built-in)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%q\t%s\t%s\t%s\n", c.ID, c.ClientID, c.Name, c.AccessGroup, issuer, c.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

// linkClient admits an external issuer's client to an account: its tokens
// are accepted when the API lists the issuer in TOUCHPOINT_OIDC_ISSUER.
func linkClient(ctx context.Context, env *environment, cfg config.Config, st *store.Store, account, issuer, extID, name, group string, asJSON bool) error {
	if !store.ValidID("acc", account) {
		return errors.New("clients link: --account must be an account id (acc-…)")
	}
	if u, err := url.Parse(issuer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("clients link: --issuer must be an absolute http(s) URL, exactly the iss of the issuer's tokens")
	}
	if strings.TrimRight(issuer, "/") == cfg.AuthURL {
		return fmt.Errorf("clients link: %s is the built-in issuer; use clients create", issuer)
	}
	if extID == "" {
		return errors.New("clients link: --client-id is required")
	}
	if !auth.ValidGroup(group) {
		return fmt.Errorf("clients link: unknown group %q (full, events or readonly)", group)
	}
	if err := checkName(name, false); err != nil {
		return fmt.Errorf("clients link: --name %w", err)
	}
	if err := text.Check(text.Identifier, extID); err != nil {
		return fmt.Errorf("clients link: --client-id %w", err)
	}
	if len(extID) > 255 {
		return errors.New("clients link: --client-id must be at most 255 bytes")
	}
	if _, err := st.Accounts.Account(ctx, account); err != nil {
		return fmt.Errorf("clients link: account %s: %w", account, err)
	}
	// The API's configuration may differ from this shell's: warn only.
	if !slices.Contains(cfg.OIDCIssuers, issuer) {
		fmt.Fprintf(env.stderr, "warning: %s is not in TOUCHPOINT_OIDC_ISSUER here (%s); the API accepts its tokens only if it is in the API's, spelt exactly alike\n",
			issuer, strings.Join(cfg.OIDCIssuers, ", "))
	}
	c, err := st.Auth.LinkClient(ctx, account, issuer, extID, name, group)
	if errors.Is(err, store.ErrConflict) {
		if prev, perr := st.Auth.ClientByIssuer(ctx, issuer, extID); perr == nil {
			return fmt.Errorf("clients link: client %q of %s is already linked, as %s to account %s: %w", extID, issuer, prev.ID, prev.AccountID, store.ErrConflict)
		}
	}
	if err != nil {
		return fmt.Errorf("clients link: %w", err)
	}
	if asJSON {
		return jsonOut(env.stdout).Encode(map[string]string{"accountId": c.AccountID, "clientId": c.ClientID, "issuer": c.Issuer, "id": c.ID})
	}
	fmt.Fprintf(env.stdout, "client %q of %s linked to account %s as %s (access group %s)\n", c.ClientID, c.Issuer, c.AccountID, c.ID, c.AccessGroup)
	return nil
}

// clientByAnyID finds a client by its cli-… id (built-in and linked alike).
func clientByAnyID(ctx context.Context, st *store.Store, id string) (authdb.Client, error) {
	if !store.ValidID("cli", id) {
		return authdb.Client{}, fmt.Errorf("%q is not a client id (cli-…)", id)
	}
	c, err := st.Auth.Client(ctx, id)
	if err != nil {
		return c, fmt.Errorf("client %s: %w", id, err)
	}
	return c, nil
}
