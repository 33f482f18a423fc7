package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"time"

	"github.com/touchpoint/touchpoint/bench/capacity"
	"github.com/touchpoint/touchpoint/workflows"
)

// Actions are the Temporal Actions (the unit Temporal Cloud bills) of the
// run's invites, from the `action` metric of the Temporal server that
// `touchpoint dev` embeds: the count over the burst and until every
// invite's workflow closed, less the count before.
type Actions struct {
	PerInvite float64 `json:"per_invite"`
	Total     int64   `json:"total"`
	// ByType is the count by the metric's action_type:
	// grpc_StartWorkflowExecution, command_StartTimer,
	// command_BatchMarkers (one per workflow task with local activities,
	// side effects or versions), …
	ByType map[string]int64 `json:"by_type"`
}

// actions reads the `action` metric of dev's embedded Temporal server from
// dev's /metrics: the Actions so far in its namespace, by action type.
func (d *devChild) actions(ctx context.Context) (map[string]int64, error) {
	body, err := d.fromMetricsAddr(ctx, "/metrics")
	if err != nil {
		return nil, fmt.Errorf("read dev's metrics: %w", err)
	}
	defer body.Close()
	return capacity.ParseActions(body, d.target.Temporal.Namespace())
}

// fromMetricsAddr GETs path from dev's metrics address: its /metrics, and
// its profiles when it serves them. An answer other than 200 is an error.
func (d *devChild) fromMetricsAddr(ctx context.Context, path string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+d.vars["TOUCHPOINT_METRICS_ADDR"]+path, nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		res.Body.Close()
		return nil, fmt.Errorf("%s: %s", res.Status, msg)
	}
	return res.Body, nil
}

// settledActions reads the metric until it holds still for a second, at
// most ten: the warm-up's runs end a little after their invites are sent,
// and their last workflow tasks are not the burst's.
func (d *devChild) settledActions(ctx context.Context) (map[string]int64, error) {
	prev, err := d.actions(ctx)
	for i := 0; i < 10 && err == nil; i++ {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
		var cur map[string]int64
		if cur, err = d.actions(ctx); err == nil && maps.Equal(cur, prev) {
			return cur, nil
		}
		prev = cur
	}
	return prev, err
}

// measureActions waits until the workflows of events have closed (an
// invite is sent before its run ends: the run still records it and plans
// the reminder), reads the metric again and puts the difference to before
// on res, per invite sent.
func measureActions(ctx context.Context, o Options, dev *devChild, events []benchEvent, before map[string]int64, res *Result) error {
	tc, err := o.Target.dialTemporal(ctx, o.Stderr)
	if err != nil {
		return err
	}
	defer tc.Close()
	for _, e := range events {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := tc.GetWorkflow(wctx, workflows.WorkflowID(e.ID), "").Get(wctx, nil)
		cancel()
		if err != nil && wctx.Err() != nil {
			return fmt.Errorf("invite workflow %s still open: %w", e.ID, err)
		}
	}
	after, err := dev.actions(ctx)
	if err != nil {
		return err
	}
	a := &Actions{ByType: map[string]int64{}}
	for typ, n := range after {
		if d := n - before[typ]; d != 0 {
			a.ByType[typ] = d
			a.Total += d
		}
	}
	if res.InvitesSent > 0 {
		a.PerInvite = round(float64(a.Total)/float64(res.InvitesSent), 2)
	}
	res.Actions = a
	return nil
}
