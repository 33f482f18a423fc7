package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/reconciler"
	"github.com/touchpoint/touchpoint/workflows"
)

// ensureReconciler creates or updates the reconciler's Temporal Schedule
// (`touchpoint migrate`, `touchpoint dev`), retrying while Temporal is
// still starting, for up to wait. report gets one line of what it did
// when it created or changed the schedule.
func ensureReconciler(ctx context.Context, tc client.Client, cfg config.Config, wait time.Duration, report func(string)) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		res, err := reconciler.EnsureSchedule(ctx, tc, cfg.ReconcileInterval)
		if err == nil {
			if res == reconciler.UpToDate {
				return nil
			}
			report(fmt.Sprintf("reconciler schedule %s %s (every %s)", workflows.ReconcileScheduleID, res, cfg.ReconcileInterval))
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporal at %s: %w", cfg.TemporalAddress, err)
		case <-time.After(2 * time.Second):
		}
	}
}
