package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/workflows"
)

// A retry orders a new run of the event's workflow, which sends now (no
// delay, no send window) after checking the setting and the throttle
// again; the outbox starter of a running `touchpoint api` starts it.
const invitesUsage = `usage:
  touchpoint invites show evt-… [--json]
  touchpoint invites retry evt-…    (a new run that sends now; started by a running touchpoint api)
  touchpoint invites retry --failed --since 24h [--account acc-…] [--event-type ety-…] [--dry-run]`

func (env *environment) runInvites(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(invitesUsage)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("invites "+sub, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	asJSON := fs.Bool("json", false, "print JSON (show)")
	failed := fs.Bool("failed", false, "retry every failed invite matching the filters")
	since := fs.Duration("since", 24*time.Hour, "with --failed: invites that failed within this long")
	account := fs.String("account", "", "with --failed: only this account (acc-…)")
	eventType := fs.String("event-type", "", "with --failed: only this event type (ety-…)")
	dryRun := fs.Bool("dry-run", false, "with --failed: list what would be retried, change nothing")
	// Flags may follow the event id: parse what comes after it too.
	var id string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		id, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if id == "" && fs.NArg() > 0 {
		id = fs.Arg(0)
	}
	cfg, st, err := adminStore(ctx, env, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()

	switch {
	case sub == "show" && id != "":
		return showInvite(ctx, env, cfg, st, id, *asJSON)
	case sub == "retry" && *failed && id == "":
		if *account != "" && !store.ValidID("acc", *account) || *eventType != "" && !store.ValidID("ety", *eventType) {
			return errors.New("invites retry: --account takes acc-… and --event-type ety-…")
		}
		return retryFailed(ctx, env.stdout, st, store.FailedFilter{
			Since: time.Now().Add(-*since), AccountID: *account, EventTypeID: *eventType, Limit: 100}, *dryRun)
	case sub == "retry" && !*failed && id != "":
		acc, err := eventAccount(ctx, st, id)
		if err != nil {
			return err
		}
		if _, err := st.RetryInvite(ctx, acc, id); err != nil {
			if errors.Is(err, store.ErrInviteState) {
				return fmt.Errorf("invite of %s has not failed; only failed invites are retried", id)
			}
			return fmt.Errorf("retry %s: %w", id, err)
		}
		st.Notify(ctx) // wakes the starters at once; they also sweep
		fmt.Fprintf(env.stdout, "retry of %s ordered; the invite is sent again shortly\n", id)
		return nil
	}
	return errors.New(invitesUsage)
}

func eventAccount(ctx context.Context, st *store.Store, id string) (string, error) {
	if !store.ValidID("evt", id) {
		return "", fmt.Errorf("%q is not an event id (evt-…)", id)
	}
	acc, err := st.EventAccount(ctx, id)
	if err != nil {
		return "", fmt.Errorf("event %s: %w", id, err)
	}
	return acc, nil
}

// retryFailed retries failed invites page by page. Each retry commits on
// its own, so an interrupted run can simply be run again: what was retried
// is no longer failed.
func retryFailed(ctx context.Context, out io.Writer, st *store.Store, f store.FailedFilter, dryRun bool) error {
	retried, skipped := 0, 0
	for {
		page, err := st.FailedInvites(ctx, f)
		if err != nil {
			return err
		}
		for _, inv := range page {
			if dryRun {
				fmt.Fprintf(out, "%s\t%s\tfailed %s (%s)\n", inv.EventID, inv.AccountID, inv.FailedAt.UTC().Format(time.RFC3339), inv.Reason)
				retried++
				continue
			}
			switch _, err := st.RetryInvite(ctx, inv.AccountID, inv.EventID); {
			case errors.Is(err, store.ErrInviteState):
				skipped++ // retried meanwhile by someone else
			case err != nil:
				return fmt.Errorf("retry %s (after %d retried): %w", inv.EventID, retried, err)
			default:
				retried++
			}
		}
		if !dryRun && len(page) > 0 {
			st.Notify(ctx)
			fmt.Fprintf(out, "retried %d so far\n", retried)
		}
		if len(page) < f.Limit {
			break
		}
		f.AfterID = page[len(page)-1].EventID
	}
	switch {
	case dryRun:
		fmt.Fprintf(out, "%d failed invites would be retried (dry run: nothing changed)\n", retried)
	default:
		fmt.Fprintf(out, "done: %d retried, %d no longer failed\n", retried, skipped)
	}
	return nil
}

// showInvite prints the event, its invite state and, when Temporal can be
// reached, its workflow's status and `status` query.
func showInvite(ctx context.Context, env *environment, cfg config.Config, st *store.Store, id string, asJSON bool) error {
	acc, err := eventAccount(ctx, st, id)
	if err != nil {
		return err
	}
	e, err := st.Event(ctx, acc, id)
	if err != nil {
		return fmt.Errorf("event %s: %w", id, err)
	}
	wf := describeWorkflow(ctx, cfg, env, id)
	if asJSON {
		return json.NewEncoder(env.stdout).Encode(map[string]any{
			"event":    json.RawMessage(e.Payload),
			"id":       e.ID,
			"account":  e.AccountID,
			"invite":   inviteFields(e),
			"workflow": wf,
		})
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "event\t%s\naccount\t%s\ntype\t%s (%s)\nreceived\t%s\n", e.ID, e.AccountID, e.Type, e.EventTypeID, e.ReceivedAt.UTC().Format(time.RFC3339Nano))
	for _, kv := range inviteFields(e) {
		fmt.Fprintf(tw, "invite.%s\t%v\n", kv.key, kv.value)
	}
	fmt.Fprintf(tw, "workflow\t%s\n", wf.summary())
	tw.Flush()
	fmt.Fprintf(env.stdout, "payload\t%s\n", e.Payload)
	return nil
}

type field struct {
	key   string
	value any
}

func (f field) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]any{f.key: f.value}) }

func inviteFields(e store.Event) []field {
	opt := func(ok bool, v any) any {
		if !ok {
			return nil
		}
		return v
	}
	return []field{
		{"status", e.InviteStatus},
		{"reason", opt(e.InviteReason.Valid, e.InviteReason.String)},
		{"medium", opt(e.InviteMedium.Valid, e.InviteMedium.String)},
		{"scheduledFor", opt(e.ScheduledFor.Valid, e.ScheduledFor.Time)},
		{"sentAt", opt(e.SentAt.Valid, e.SentAt.Time)},
		{"attempts", e.Attempts},
		{"lastError", opt(e.LastError.Valid, e.LastError.String)},
	}
}

// workflowInfo is what Temporal says of an event's workflow.
type workflowInfo struct {
	Status string                  `json:"status,omitempty"`
	RunID  string                  `json:"runId,omitempty"`
	Query  *workflows.InviteResult `json:"query,omitempty"`
	Error  string                  `json:"error,omitempty"`
}

func (w workflowInfo) summary() string {
	if w.Status == "" {
		return "unknown: " + w.Error
	}
	s := w.Status + " (run " + w.RunID + ")"
	if w.Query != nil {
		s += "; status query: " + string(w.Query.Status)
		if w.Query.Reason != "" {
			s += " (" + string(w.Query.Reason) + ")"
		}
	}
	if w.Error != "" {
		s += "; " + w.Error
	}
	return s
}

// describeWorkflow asks Temporal for the event's workflow; an unreachable
// Temporal is reported, not fatal: the database state is shown anyway.
func describeWorkflow(ctx context.Context, cfg config.Config, env *environment, eventID string) workflowInfo {
	tc, err := dialTemporal(cfg, env.logger, nil)
	if err != nil {
		return workflowInfo{Error: err.Error()}
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := tc.DescribeWorkflowExecution(ctx, workflows.WorkflowID(eventID), "")
	if err != nil {
		return workflowInfo{Error: err.Error()}
	}
	info := workflowInfo{Status: d.WorkflowExecutionInfo.Status.String(), RunID: d.WorkflowExecutionInfo.Execution.RunId}
	v, err := tc.QueryWorkflow(ctx, workflows.WorkflowID(eventID), "", workflows.StatusQuery)
	if err != nil {
		info.Error = "status query: " + err.Error()
		return info
	}
	var res workflows.InviteResult
	if err := v.Get(&res); err == nil {
		info.Query = &res
	}
	return info
}
