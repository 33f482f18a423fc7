package admincli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/workflows"
)

// A retry orders a new run of the event's workflow, which sends now (no
// delay, no send window) after checking the setting and the throttle
// again; the outbox starter of a running `touchpoint api` starts it.
const invitesUsage = `usage:
  touchpoint invites show evt-… [--json]
  touchpoint invites retry evt-… [--include-uncertain]   (a new run that sends now; started by a running touchpoint api)
  touchpoint invites retry --failed [--since 24h|2026-11-20T00:00:00Z] [--until …] [--account acc-…]
      [--event-type ety-…] [--channel chl-…] [--reason rejected,retries_exhausted,…] [--include-uncertain] [--dry-run]`

// RunInvites is `touchpoint invites`: ops' look at an invite and retries.
func (env *Env) RunInvites(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(invitesUsage)
	}
	sub, args := args[0], args[1:]
	fs := env.flags("invites " + sub)
	asJSON := fs.Bool("json", false, "print JSON (show)")
	failed := fs.Bool("failed", false, "retry every failed invite matching the filters")
	since := fs.String("since", "24h", "with --failed: invites that failed at or after this time, or within this long (24h)")
	until := fs.String("until", "", "with --failed: invites that failed before this time, or longer ago than this (1h)")
	account := fs.String("account", "", "with --failed: only this account (acc-…)")
	eventType := fs.String("event-type", "", "with --failed: only this event type (ety-…)")
	channel := fs.String("channel", "", "with --failed: only this channel (chl-…)")
	reasons := fs.String("reason", "", "with --failed: only these reasons, comma-separated (rejected, retries_exhausted, no_provider, …)")
	includeUncertain := fs.Bool("include-uncertain", false, "also retry invites failed as delivery_uncertain: they may have been delivered")
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
	var filter invitedb.FailedFilter
	if sub == "retry" && *failed {
		var err error
		if filter, err = failedFilter(time.Now(), *since, *until, *account, *eventType, *channel, *reasons, *includeUncertain); err != nil {
			return fmt.Errorf("invites retry: %w", err)
		}
	}
	cfg, st, err := env.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()

	switch {
	case sub == "show" && id != "":
		return showInvite(ctx, env, cfg, st, id, *asJSON)
	case sub == "retry" && *failed && id == "":
		return retryFailed(ctx, env.Stdout, st, filter, *dryRun)
	case sub == "retry" && !*failed && id != "":
		return retryOne(ctx, env.Stdout, st, id, *includeUncertain)
	}
	return errors.New(invitesUsage)
}

// failedFilter reads the bulk retry's filters. A time is RFC 3339 or a
// duration back from now.
func failedFilter(now time.Time, since, until, account, eventType, channel, reasons string, includeUncertain bool) (invitedb.FailedFilter, error) {
	f := invitedb.FailedFilter{AccountID: account, EventTypeID: eventType, ChannelID: channel, IncludeUncertain: includeUncertain, Limit: 100}
	for _, id := range []struct{ flag, prefix, value string }{
		{"--account", "acc", account}, {"--event-type", "ety", eventType}, {"--channel", "chl", channel},
	} {
		if id.value != "" && !store.ValidID(id.prefix, id.value) {
			return f, fmt.Errorf("%s takes %s-…, not %q", id.flag, id.prefix, id.value)
		}
	}
	var err error
	if f.Since, err = pointInTime(now, since); err != nil {
		return f, fmt.Errorf("--since: %w", err)
	}
	if until != "" {
		if f.Until, err = pointInTime(now, until); err != nil {
			return f, fmt.Errorf("--until: %w", err)
		}
		if !f.Until.After(f.Since) {
			return f, errors.New("--until must be later than --since")
		}
	}
	for _, r := range strings.Split(reasons, ",") {
		r := invite.Reason(strings.TrimSpace(r))
		switch {
		case r == "":
			continue
		case !r.Valid():
			return f, fmt.Errorf("--reason: %q is not a reason (%s)", r, joinReasons(invite.Reasons()))
		case r == invite.DeliveryUncertain && !includeUncertain:
			return f, errors.New("--reason delivery_uncertain: these invites may have been delivered; add --include-uncertain to retry them")
		}
		f.Reasons = append(f.Reasons, r)
	}
	return f, nil
}

// pointInTime is an RFC 3339 time, or now minus a duration.
func pointInTime(now time.Time, v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("%q is neither a time such as 2026-11-20T00:00:00Z nor a duration such as 24h", v)
	}
	return now.Add(-d), nil
}

func joinReasons(rs []invite.Reason) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

// retryOne retries one failed invite. One failed as delivery_uncertain
// may have arrived: it is retried only with includeUncertain.
func retryOne(ctx context.Context, out io.Writer, st *store.Store, id string, includeUncertain bool) error {
	e, err := event(ctx, st, id)
	if err != nil {
		return err
	}
	if e.InviteStatus == invite.Failed && invite.Reason(e.InviteReason.String) == invite.DeliveryUncertain && !includeUncertain {
		return fmt.Errorf("invite of %s failed as delivery_uncertain: it may have been delivered (look for Message-ID <%s@…> in the mail server's log); add --include-uncertain to send it again", id, id)
	}
	if _, err := st.Invites.RetryInvite(ctx, e.AccountID, id); err != nil {
		if errors.Is(err, invitedb.ErrInviteState) {
			return fmt.Errorf("invite of %s has not failed; only failed invites are retried", id)
		}
		return fmt.Errorf("retry %s: %w", id, err)
	}
	st.Events.Notify(ctx) // wakes the starters at once; they also sweep
	fmt.Fprintf(out, "retry of %s ordered; the invite is sent again shortly\n", id)
	return nil
}

// event reads the event of an id the operator typed: an admin command
// knows no account, so the event's is looked up first.
func event(ctx context.Context, st *store.Store, id string) (invitedb.Event, error) {
	if !store.ValidID("evt", id) {
		return invitedb.Event{}, fmt.Errorf("%q is not an event id (evt-…)", id)
	}
	acc, err := st.Invites.EventAccount(ctx, id)
	if err != nil {
		return invitedb.Event{}, fmt.Errorf("event %s: %w", id, err)
	}
	e, err := st.Invites.Event(ctx, acc, id)
	if err != nil {
		return invitedb.Event{}, fmt.Errorf("event %s: %w", id, err)
	}
	return e, nil
}

// retryFailed retries failed invites page by page. Each retry commits on
// its own, so an interrupted run can simply be run again: what was retried
// is no longer failed. A dry run lists what it would retry.
func retryFailed(ctx context.Context, out io.Writer, st *store.Store, f invitedb.FailedFilter, dryRun bool) error {
	retried, skipped := 0, 0
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if dryRun {
		fmt.Fprintln(tw, "EVENT\tACCOUNT\tEVENT TYPE\tCHANNEL\tFAILED AT\tREASON\tLAST ERROR")
	}
	for {
		page, err := st.Invites.FailedInvites(ctx, f)
		if err != nil {
			return err
		}
		for _, inv := range page {
			if dryRun {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%q\n", inv.EventID, inv.AccountID, inv.EventTypeID, inv.ChannelID,
					inv.FailedAt.UTC().Format(time.RFC3339), inv.Reason, oneLine(inv.LastError, 80))
				retried++
				continue
			}
			switch _, err := st.Invites.RetryInvite(ctx, inv.AccountID, inv.EventID); {
			case errors.Is(err, invitedb.ErrInviteState):
				skipped++ // retried meanwhile by someone else
			case err != nil:
				return fmt.Errorf("retry %s (after %d retried): %w", inv.EventID, retried, err)
			default:
				retried++
			}
		}
		if !dryRun && len(page) > 0 {
			st.Events.Notify(ctx)
			fmt.Fprintf(out, "retried %d so far\n", retried)
		}
		if len(page) < f.Limit {
			break
		}
		f.AfterID = page[len(page)-1].EventID
	}
	tw.Flush()
	switch {
	case dryRun:
		fmt.Fprintf(out, "%d failed invites would be retried (dry run: nothing changed)\n", retried)
	default:
		fmt.Fprintf(out, "done: %d retried, %d no longer failed\n", retried, skipped)
	}
	if !f.IncludeUncertain {
		if n, err := countUncertain(ctx, st, f); err == nil && n > 0 {
			fmt.Fprintf(out, "%d invites failed as delivery_uncertain match too and were left out: they may have been delivered; add --include-uncertain to retry them\n", n)
		}
	}
	return nil
}

// countUncertain counts the delivery_uncertain invites the filter leaves
// out, so a run can say so.
func countUncertain(ctx context.Context, st *store.Store, f invitedb.FailedFilter) (int, error) {
	if len(f.Reasons) > 0 {
		return 0, nil // reasons were named, and delivery_uncertain was not among them
	}
	f.Reasons, f.IncludeUncertain, f.AfterID = []invite.Reason{invite.DeliveryUncertain}, true, ""
	n := 0
	for {
		page, err := st.Invites.FailedInvites(ctx, f)
		if err != nil {
			return 0, err
		}
		n += len(page)
		if len(page) < f.Limit {
			return n, nil
		}
		f.AfterID = page[len(page)-1].EventID
	}
}

// oneLine shortens s to one line of at most n bytes, for a table.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// showInvite prints the event, its invite state and, when Temporal can be
// reached, its workflow's status and `status` query.
func showInvite(ctx context.Context, env *Env, cfg config.Config, st *store.Store, id string, asJSON bool) error {
	e, err := event(ctx, st, id)
	if err != nil {
		return err
	}
	attempts, err := e.History()
	if err != nil {
		return err
	}
	wf := describeWorkflow(ctx, cfg, env, id)
	if asJSON {
		return jsonOut(env.Stdout).Encode(map[string]any{
			"event":    json.RawMessage(e.Payload),
			"id":       e.ID,
			"account":  e.AccountID,
			"invite":   inviteFields(e),
			"attempts": attempts,
			"workflow": wf,
		})
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "event\t%s\naccount\t%s\ntype\t%q (%s)\nreceived\t%s\n", e.ID, e.AccountID, e.Type, e.EventTypeID, cliTime(e.ReceivedAt))
	for _, kv := range inviteFields(e) {
		fmt.Fprintf(tw, "invite.%s\t%s\n", kv.key, cliValue(kv.value))
	}
	for _, a := range attempts {
		outcome := string(a.Outcome)
		if outcome == "" {
			outcome = "running"
		}
		fmt.Fprintf(tw, "attempt\t%s %d (%s) %s: %s %q\n", a.Kind, a.N, a.Medium, cliTime(a.StartedAt), outcome, oneLine(a.Detail, 100))
	}
	fmt.Fprintf(tw, "workflow\t%s\n", wf.summary())
	tw.Flush()
	fmt.Fprint(env.Stdout, "payload\t")
	_, err = terminalSafe{env.Stdout}.Write(append(e.Payload, '\n'))
	return err
}

// cliTime is how the text output of the admin commands writes a time:
// RFC 3339 in UTC, to the second.
func cliTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// written marks a text in a listing that someone outside wrote (a
// provider's reply), which cliValue quotes.
type written string

// cliValue writes one value of a text listing: a time as cliTime, an
// absent one as "-", a written one quoted.
func cliValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "-"
	case written:
		return strconv.Quote(string(v))
	case time.Time:
		return cliTime(v)
	case string:
		if v == "" {
			return "-"
		}
		return v
	}
	return fmt.Sprint(v)
}

type field struct {
	key   string
	value any
}

func (f field) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]any{f.key: f.value}) }

func inviteFields(e invitedb.Event) []field {
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
		{"lastError", opt(e.LastError.Valid, written(e.LastError.String))},
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
func describeWorkflow(ctx context.Context, cfg config.Config, env *Env, eventID string) workflowInfo {
	tc, err := env.DialTemporal(cfg)
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
