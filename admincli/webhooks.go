package admincli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

const webhooksUsage = `usage:
  touchpoint webhooks enable --endpoint whk-…
      (a disabled endpoint is sent new changes again; replay what it missed meanwhile)
  touchpoint webhooks replay --endpoint whk-… [--since 72h|2026-11-20T00:00:00Z] [--until …] [--dry-run]
      (failed deliveries made in the period, at most 31 days, are sent again, with their webhook-id,
      by a running touchpoint worker; the endpoint must be enabled)`

// RunWebhooks is `touchpoint webhooks`: ops' enabling of an endpoint and
// replay of failed deliveries, the same as PATCH /webhooks/{id}
// {"enabled": true} and POST /webhooks/{id}/replay.
func (env *Env) RunWebhooks(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(webhooksUsage)
	}
	switch args[0] {
	case "enable":
		return env.enableWebhook(ctx, args[1:])
	case "replay":
		return env.replayWebhook(ctx, args[1:])
	}
	return errors.New(webhooksUsage)
}

// webhookEndpointFlag parses the flags of a `webhooks` subcommand, which
// names one endpoint with --endpoint, and checks the endpoint's id.
func webhookEndpointFlag(env *Env, sub string, args []string, more func(fs *flag.FlagSet)) (string, error) {
	fs := flag.NewFlagSet("webhooks "+sub, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	endpoint := fs.String("endpoint", "", "the endpoint (whk-…)")
	if more != nil {
		more(fs)
	}
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("webhooks %s: unexpected %q\n%s", sub, fs.Arg(0), webhooksUsage)
	}
	if !store.ValidID("whk", *endpoint) {
		return "", fmt.Errorf("webhooks %s: --endpoint takes whk-…, not %q", sub, *endpoint)
	}
	return *endpoint, nil
}

// endpointStore opens the store and finds the account of the webhook
// endpoint; the caller closes the store's pool.
func (env *Env) endpointStore(ctx context.Context, endpoint string) (*store.Store, string, error) {
	_, st, err := env.OpenStore(ctx, false)
	if err != nil {
		return nil, "", err
	}
	acc, err := st.Webhooks.WebhookEndpointAccount(ctx, endpoint)
	if err != nil {
		st.DB().Close()
		return nil, "", fmt.Errorf("webhook endpoint %s: %w", endpoint, err)
	}
	return st, acc, nil
}

// enableWebhook is `webhooks enable`.
func (env *Env) enableWebhook(ctx context.Context, args []string) error {
	endpoint, err := webhookEndpointFlag(env, "enable", args, nil)
	if err != nil {
		return err
	}
	st, acc, err := env.endpointStore(ctx, endpoint)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	enabled := true
	if _, err := st.Webhooks.UpdateWebhookEndpoint(ctx, acc, endpoint, webhookdb.WebhookEndpointUpdate{Enabled: &enabled}); err != nil {
		return fmt.Errorf("webhook endpoint %s: %w", endpoint, err)
	}
	fmt.Fprintf(env.Stdout, "endpoint %s is enabled: new changes are sent to it again; "+
		"what it missed meanwhile goes with touchpoint webhooks replay --endpoint %s\n", endpoint, endpoint)
	return nil
}

// replayWebhook is `webhooks replay`.
func (env *Env) replayWebhook(ctx context.Context, args []string) error {
	var since, until *string
	var dryRun *bool
	endpoint, err := webhookEndpointFlag(env, "replay", args, func(fs *flag.FlagSet) {
		since = fs.String("since", "72h", "deliveries made at or after this time, or within this long")
		until = fs.String("until", "", "deliveries made before this time, or longer ago than this")
		dryRun = fs.Bool("dry-run", false, "count what would be replayed, change nothing")
	})
	if err != nil {
		return err
	}
	var f webhookdb.ReplayFilter
	now := time.Now()
	if f.Since, err = pointInTime(now, *since); err != nil {
		return fmt.Errorf("webhooks replay: --since: %w", err)
	}
	if *until != "" {
		if f.Until, err = pointInTime(now, *until); err != nil {
			return fmt.Errorf("webhooks replay: --until: %w", err)
		}
	}
	if bound, problem := f.Problem(now); bound != "" {
		return fmt.Errorf("webhooks replay: --%s: %s", bound, problem)
	}
	st, acc, err := env.endpointStore(ctx, endpoint)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	n, err := st.Webhooks.ReplayWebhookDeliveries(ctx, acc, endpoint, f, *dryRun)
	if errors.Is(err, webhookdb.ErrEndpointDisabled) {
		return fmt.Errorf("webhooks replay: %w: touchpoint webhooks enable --endpoint %s", err, endpoint)
	}
	if err != nil {
		return err
	}
	if *dryRun {
		fmt.Fprintf(env.Stdout, "%d failed deliveries would be replayed (dry run: nothing changed)\n", n)
		return nil
	}
	fmt.Fprintf(env.Stdout, "%d failed deliveries replayed; a running worker sends them shortly\n", n)
	return nil
}
