package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/touchpoint/touchpoint/store"
)

const webhooksUsage = `usage:
  touchpoint webhooks replay --endpoint whk-… [--since 72h|2026-11-20T00:00:00Z] [--until …] [--dry-run]
      (failed deliveries made in the period are sent again, with their webhook-id, by a running touchpoint worker)`

// runWebhooks is `touchpoint webhooks`: ops' replay of failed deliveries,
// the same as POST /webhooks/{id}/replay.
func (env *environment) runWebhooks(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "replay" {
		return errors.New(webhooksUsage)
	}
	fs := flag.NewFlagSet("webhooks replay", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	endpoint := fs.String("endpoint", "", "the endpoint (whk-…)")
	since := fs.String("since", "72h", "deliveries made at or after this time, or within this long")
	until := fs.String("until", "", "deliveries made before this time, or longer ago than this")
	dryRun := fs.Bool("dry-run", false, "count what would be replayed, change nothing")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("webhooks replay: unexpected %q\n%s", fs.Arg(0), webhooksUsage)
	}
	if !store.ValidID("whk", *endpoint) {
		return fmt.Errorf("webhooks replay: --endpoint takes whk-…, not %q", *endpoint)
	}
	var f store.ReplayFilter
	var err error
	now := time.Now()
	if f.Since, err = pointInTime(now, *since); err != nil {
		return fmt.Errorf("webhooks replay: --since: %w", err)
	}
	if *until != "" {
		if f.Until, err = pointInTime(now, *until); err != nil {
			return fmt.Errorf("webhooks replay: --until: %w", err)
		}
		if !f.Until.After(f.Since) {
			return errors.New("webhooks replay: --until must be later than --since")
		}
	}
	_, st, err := adminStore(ctx, env, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	acc, err := st.WebhookEndpointAccount(ctx, *endpoint)
	if err != nil {
		return fmt.Errorf("webhook endpoint %s: %w", *endpoint, err)
	}
	n, err := st.ReplayWebhookDeliveries(ctx, acc, *endpoint, f, *dryRun)
	if err != nil {
		return err
	}
	if *dryRun {
		fmt.Fprintf(env.stdout, "%d failed deliveries would be replayed (dry run: nothing changed)\n", n)
		return nil
	}
	fmt.Fprintf(env.stdout, "%d failed deliveries replayed; a running worker sends them shortly\n", n)
	return nil
}
