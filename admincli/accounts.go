package admincli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/touchpoint/touchpoint/account/accountapi"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/text"
)

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

// RunAccounts is `touchpoint accounts`.
func (env *Env) RunAccounts(ctx context.Context, args []string) error {
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
func (env *Env) rotatePublicationKey(ctx context.Context, args []string) error {
	fs := env.flags("accounts rotate-publication-key")
	account := fs.String("account", "", "account id (acc-…)")
	asJSON := fs.Bool("json", false, "print the new key's kid as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !store.ValidID("acc", *account) {
		return errors.New("accounts rotate-publication-key: --account must be an account id (acc-…)")
	}
	cfg, st, err := env.OpenStore(ctx, true)
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
		return jsonOut(env.Stdout).Encode(map[string]string{"accountId": *account, "kid": kid})
	}
	fmt.Fprintf(env.Stdout, "account %s: publication key %s signs from now on; the older keys stay published\n", *account, kid)
	return nil
}

func (env *Env) createAccount(ctx context.Context, args []string) error {
	fs := env.flags("accounts create")
	name := fs.String("name", "", "account name (required)")
	asJSON := fs.Bool("json", false, `print {"accountId","channelId"}`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkName(*name, true); err != nil {
		return fmt.Errorf("accounts create: --name %w", err)
	}
	_, st, err := env.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	acc, ch, err := st.Accounts.CreateAccount(ctx, strings.TrimSpace(*name))
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	if *asJSON {
		return jsonOut(env.Stdout).Encode(map[string]string{"accountId": acc.ID, "channelId": ch.ID})
	}
	fmt.Fprintf(env.Stdout, "account %s created; its default channel is %s\n", acc.ID, ch.ID)
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
func (env *Env) setQuota(ctx context.Context, args []string) error {
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
	_, st, err := env.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	q, err := st.Accounts.SetAccountQuotas(ctx, *account, quotas())
	if err != nil {
		return fmt.Errorf("accounts set-quota: account %s: %w", *account, err)
	}
	if *asJSON {
		return jsonOut(env.Stdout).Encode(q)
	}
	printQuotas(env.Stdout, *account, q)
	return nil
}

// updateAccount is `accounts update`: the shop's branding, checked as
// PATCH /account checks it, and the account's own quotas.
func (env *Env) updateAccount(ctx context.Context, args []string) error {
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
	u, err := accountapi.BrandingUpdate(fields["display-name"], fields["logo-url"], fields["brand-color"], fields["reply-to"])
	if err != nil {
		return fmt.Errorf("accounts update: %w", err)
	}
	_, st, err := env.OpenStore(ctx, false)
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
		return jsonOut(env.Stdout).Encode(map[string]any{"id": acc.ID, "name": acc.Name, "displayName": b.DisplayName,
			"logoUrl": b.LogoURL, "brandColor": b.Color, "replyTo": b.ReplyTo, "quotas": q})
	}
	fmt.Fprintf(env.Stdout, "account %s: display name %q, logo %q, colour %q, reply-to %q\n", acc.ID, b.DisplayName, b.LogoURL, b.Color, b.ReplyTo)
	printQuotas(env.Stdout, acc.ID, q)
	return nil
}
