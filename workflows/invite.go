package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sendtime"
)

// Options are the worker-side timeouts and retries of the invite workflow.
// Zero fields take the defaults of DefaultOptions.
type Options struct {
	// SendTimeout bounds one send attempt (StartToClose).
	SendTimeout time.Duration
	// SendInitialInterval is the first back-off after a transient failure;
	// it doubles up to SendMaxInterval.
	SendInitialInterval time.Duration
	SendMaxInterval     time.Duration
	// SendGiveUpAfter bounds all attempts of a send (ScheduleToClose);
	// then the invite fails with its last error.
	SendGiveUpAfter time.Duration
	// SendMaxAttempts caps the attempts; 0: until SendGiveUpAfter.
	SendMaxAttempts int32
	// LocalTimeout bounds one database step (a local activity). They are
	// retried until they succeed: a PostgreSQL outage only delays invites.
	LocalTimeout time.Duration
}

// DefaultOptions are the documented defaults.
func DefaultOptions() Options {
	return Options{
		SendTimeout:         2 * time.Minute,
		SendInitialInterval: 10 * time.Second,
		SendMaxInterval:     time.Hour,
		SendGiveUpAfter:     24 * time.Hour,
		LocalTimeout:        10 * time.Second,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	for _, f := range []struct{ v, def *time.Duration }{
		{&o.SendTimeout, &d.SendTimeout}, {&o.SendInitialInterval, &d.SendInitialInterval},
		{&o.SendMaxInterval, &d.SendMaxInterval}, {&o.SendGiveUpAfter, &d.SendGiveUpAfter},
		{&o.LocalTimeout, &d.LocalTimeout},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return o
}

// Invite is the invite workflow with DefaultOptions. Its name is the
// workflow type (WorkflowType); starters pass it to ExecuteWorkflow.
func Invite(ctx workflow.Context, in InviteInput) (InviteResult, error) {
	return InviteWith(DefaultOptions())(ctx, in)
}

// InviteWith returns the invite workflow with other options, for the
// worker to register under WorkflowType.
func InviteWith(opts Options) func(workflow.Context, InviteInput) (InviteResult, error) {
	opts = opts.withDefaults()
	return func(ctx workflow.Context, in InviteInput) (InviteResult, error) {
		w := &inviteRun{in: in, opts: opts}
		if err := w.setup(ctx); err != nil {
			return InviteResult{}, err
		}
		res, err := w.run(ctx)
		w.dropLateCancels(ctx)
		// No update handlers yet; waiting here keeps future ones from
		// being cut off when the run ends. Disconnected: a run that sent
		// despite a cancel request still ends with its result.
		done, _ := workflow.NewDisconnectedContext(ctx)
		if werr := workflow.Await(done, func() bool { return workflow.AllHandlersFinished(done) }); werr != nil && err == nil {
			err = werr
		}
		return res, err
	}
}

// inviteRun is the state of one run.
type inviteRun struct {
	in     InviteInput
	opts   Options
	state  InviteResult // what the status query answers
	cancel workflow.ReceiveChannel
	review workflow.ReceiveChannel
	// legacy: the run began before invite and reminder shared one
	// pipeline, and calls the steps by the names of that time.
	legacy bool
	// resumed: the run found the invite sent by an earlier run, and goes
	// on with its reminder (a restart ordered by the reconciler).
	resumed bool
	// lean: the run began after fewerActionsChange. It publishes the
	// status search attribute only when the invite ends, and records no
	// other version: the one pipeline, the reminder and the resumed
	// reminder are all part of it.
	lean bool
}

// pipelineChange is the workflow.GetVersion change ID of the one send
// pipeline: from it on, the invite and its reminder run the same steps,
// keyed by kind; runs begun before it call the per-kind step names their
// histories hold (legacyStep).
const pipelineChange = "one-send-pipeline"

// fewerActionsChange is the workflow.GetVersion change ID of a run that
// costs fewer Temporal Actions: it upserts the status search attribute
// only when the invite ends (the starter sets every search attribute at
// start), and records this one version instead of the three before it
// (each version is a marker and an upsert of TemporalChangeVersion).
const fewerActionsChange = "fewer-actions"

// resumeReminderChange is the workflow.GetVersion change ID of a run that
// finds its invite sent by an earlier run: from it on, such a run goes on
// with the reminder instead of ending. Only such runs record it.
const resumeReminderChange = "resume-reminder"

func (w *inviteRun) setup(ctx workflow.Context) error {
	w.state = InviteResult{Status: invite.Pending}
	w.cancel = workflow.GetSignalChannel(ctx, CancelSignal)
	w.review = workflow.GetSignalChannel(ctx, ReviewSignal)
	if err := workflow.SetQueryHandler(ctx, StatusQuery, func() (InviteResult, error) { return w.state, nil }); err != nil {
		return err
	}
	// A run started without the search attributes (by hand, from the CLI)
	// gets them here, so it can be found like any other.
	if !workflow.GetTypedSearchAttributes(ctx).ContainsKey(AccountIDKey) {
		if err := workflow.UpsertTypedSearchAttributes(ctx, identity(w.in, invite.Pending)...); err != nil {
			workflow.GetLogger(ctx).Warn("upsert search attributes", "error", err)
		}
	}
	return nil
}

func (w *inviteRun) run(ctx workflow.Context) (InviteResult, error) {
	w.lean = workflow.GetVersion(ctx, fewerActionsChange, workflow.DefaultVersion, 1) == 1
	w.legacy = !w.lean && workflow.GetVersion(ctx, pipelineChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion
	var plan invite.Plan
	if err := workflow.ExecuteLocalActivity(w.local(ctx), w.stepName(invite.KindInvite, LoadPlanActivity),
		EventInput{EventID: w.in.EventID, Kind: invite.KindInvite}).Get(ctx, &plan); err != nil {
		return w.stopped(ctx, err)
	}
	switch {
	case !plan.EventTypeActive:
		return w.skip(ctx, invite.EventTypeInactive)
	case !plan.SettingActive:
		return w.skip(ctx, invite.SettingInactive)
	}

	at := workflow.Now(ctx)
	if !w.in.Retry {
		now := at
		// Recorded, so a replay never depends on the time-zone data of
		// the worker that replays it.
		resolve := func(workflow.Context) any { return sendtime.SendTime(now, plan.Plan) }
		if err := workflow.SideEffect(ctx, resolve).Get(&at); err != nil {
			return InviteResult{}, err
		}
	}
	st, err := w.step(ctx, invite.KindInvite, MarkScheduledActivity,
		MarkScheduledInput{EventID: w.in.EventID, Kind: invite.KindInvite, ScheduledFor: at})
	if err != nil {
		return w.stopped(ctx, err)
	}
	if st.Status != invite.Scheduled {
		if st.Status == invite.Sent && (w.lean || workflow.GetVersion(ctx, resumeReminderChange, workflow.DefaultVersion, 1) == 1) {
			// Sent by an earlier run, lost with its reminder waiting: the
			// reconciler ordered this run for the reminder.
			w.resumed = true
			w.update(ctx, st)
			return w.remind(ctx)
		}
		return w.finish(ctx, st) // decided meanwhile: cancelled by the API before the run began
	}
	w.update(ctx, st)

	cancelled, err := w.wait(ctx, at)
	switch {
	case err != nil:
		return w.stopped(ctx, err)
	case cancelled:
		return w.cancelled(ctx, false)
	}
	res, err := w.send(ctx)
	if err != nil || res.Status != invite.Sent {
		return res, err
	}
	return w.remind(ctx)
}

// wait sleeps until at on a durable timer; a cancel signal ends it early.
func (w *inviteRun) wait(ctx workflow.Context, at time.Time) (cancelled bool, err error) {
	if d := at.Sub(workflow.Now(ctx)); d > 0 {
		timerCtx, stopTimer := workflow.WithCancel(ctx)
		defer stopTimer()
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(workflow.NewTimerWithOptions(timerCtx, d, workflow.TimerOptions{Summary: "until the send time"}),
			func(f workflow.Future) { err = f.Get(ctx, nil) })
		sel.AddReceive(w.cancel, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil) // any input, or none, means cancel
			cancelled = true
		})
		sel.Select(ctx)
		if cancelled || err != nil {
			return cancelled, err
		}
	}
	// A cancel that arrived with the timer still wins: the send has not begun.
	return w.cancel.ReceiveAsync(nil), nil
}

// send runs the invite's send step and records its outcome. From here on
// the invite is recorded whatever happens to the run, so a cancel request
// no longer cuts it short.
func (w *inviteRun) send(ctx workflow.Context) (InviteResult, error) {
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	w.update(ctx, invite.State{Status: invite.Sending, ScheduledFor: timePtr(w.state.ScheduledFor),
		Attempts: w.state.Attempts, LastError: w.state.LastError})
	st, err := w.deliver(ctx, invite.KindInvite)
	if err != nil {
		return InviteResult{}, err
	}
	return w.finish(ctx, st)
}

// deliver runs the send step of a send of kind k — retried with back-off
// until it gives up — and returns the state it ended in: a delivery the
// step could not record is recorded here, and a send the step gave up on
// is given up for good (giveUp).
func (w *inviteRun) deliver(ctx workflow.Context, k invite.Kind) (invite.State, error) {
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	var st invite.State
	err := workflow.ExecuteActivity(w.sendOptions(ctx, "send the "+string(k)), w.stepName(k, SendActivity),
		EventInput{EventID: w.in.EventID, Kind: k}).Get(ctx, &st)
	if err == nil {
		return st, nil
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == ErrTypeSentUnrecorded {
		var d SentUnrecorded
		if derr := appErr.Details(&d); derr == nil {
			return w.step(ctx, k, RecordSentActivity, RecordSentInput{EventID: w.in.EventID, Kind: k, SentAt: d.SentAt})
		}
	}
	return w.giveUp(ctx, k, err)
}

// giveUp records a send whose retries are exhausted or that failed for
// good (a failure the send step recorded itself is only read back). An
// invite fails with the last error; a reminder is skipped, as its invite
// went out and nothing about it failed.
func (w *inviteRun) giveUp(ctx workflow.Context, k invite.Kind, err error) (invite.State, error) {
	if k == invite.KindReminder {
		workflow.GetLogger(ctx).Warn("reminder not sent", "error", err)
		return w.step(ctx, k, MarkSkippedActivity, MarkSkippedInput{EventID: w.in.EventID, Kind: k, Reason: invite.RetriesExhausted})
	}
	return w.step(ctx, k, MarkFailedActivity, MarkFailedInput{
		EventID: w.in.EventID, Kind: k, Reason: invite.RetriesExhausted, LastError: lastError(err)})
}

// sendOptions are the options of a send activity: bounded attempts,
// retried with back-off until the send gives up.
func (w *inviteRun) sendOptions(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    w.opts.SendTimeout,
		ScheduleToCloseTimeout: w.opts.SendGiveUpAfter,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    w.opts.SendInitialInterval,
			BackoffCoefficient: 2,
			MaximumInterval:    w.opts.SendMaxInterval,
			MaximumAttempts:    w.opts.SendMaxAttempts,
		},
		Summary: summary,
	})
}

// skip records a skipped invite.
func (w *inviteRun) skip(ctx workflow.Context, reason invite.Reason) (InviteResult, error) {
	st, err := w.step(ctx, invite.KindInvite, MarkSkippedActivity,
		MarkSkippedInput{EventID: w.in.EventID, Kind: invite.KindInvite, Reason: reason})
	if err != nil {
		return w.stopped(ctx, err)
	}
	return w.finish(ctx, st)
}

// cancelled records a cancel that came by signal or, with requested, as a
// cancel request of the run, which then ends Cancelled.
func (w *inviteRun) cancelled(ctx workflow.Context, requested bool) (InviteResult, error) {
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	st, err := w.step(ctx, invite.KindInvite, MarkCancelledActivity, EventInput{EventID: w.in.EventID, Kind: invite.KindInvite})
	if err != nil {
		return InviteResult{}, err
	}
	res, err := w.finish(ctx, st)
	if requested && err == nil {
		return res, temporal.NewCanceledError()
	}
	return res, err
}

// stopped handles an error before the send: a cancel request is a cancel.
func (w *inviteRun) stopped(ctx workflow.Context, err error) (InviteResult, error) {
	if temporal.IsCanceledError(err) {
		return w.cancelled(ctx, true)
	}
	return InviteResult{}, err
}

// finish publishes the final state; a failed invite fails the run.
func (w *inviteRun) finish(ctx workflow.Context, st invite.State) (InviteResult, error) {
	w.update(ctx, st)
	// Counted here, once per run: the SDK's handler skips replays.
	workflow.GetMetricsHandler(ctx).WithTags(map[string]string{"status": string(st.Status), "reason": string(st.Reason)}).
		Counter(InvitesMetric).Inc(1)
	if st.Status == invite.Failed {
		msg := "invite failed: " + string(st.Reason)
		if st.LastError != "" {
			msg += ": " + st.LastError
		}
		return w.state, temporal.NewNonRetryableApplicationError(msg, ErrTypeInviteFailed, nil)
	}
	return w.state, nil
}

// update publishes a state to the status query, the status search
// attribute and the current details. A lean run upserts the search
// attribute only with the state the invite ends in: each upsert is a
// billed Temporal Action, and the query and the details show the rest.
func (w *inviteRun) update(ctx workflow.Context, st invite.State) {
	prev := w.state.Status
	w.state = InviteResult{Status: st.Status, Reason: st.Reason, Attempts: st.Attempts, LastError: st.LastError, Reminder: w.state.Reminder}
	if st.ScheduledFor != nil {
		w.state.ScheduledFor = st.ScheduledFor.UTC()
	}
	if st.SentAt != nil {
		w.state.SentAt = st.SentAt.UTC()
	}
	if st.Status != prev && (!w.lean || ended(st.Status)) {
		if err := workflow.UpsertTypedSearchAttributes(ctx, InviteStatusKey.ValueSet(string(st.Status))); err != nil {
			workflow.GetLogger(ctx).Warn("upsert invite status", "error", err)
		}
	}
	workflow.SetCurrentDetails(ctx, details(w.state))
}

// ended reports whether an invite in status s has ended: sent, skipped,
// cancelled or failed.
func ended(s invite.Status) bool {
	return s != invite.Pending && s != invite.Scheduled && s != invite.Sending
}

// details is the human summary shown in the Temporal UI.
func details(r InviteResult) string {
	const layout = "2006-01-02 15:04:05 MST"
	var s string
	switch r.Status {
	case invite.Scheduled:
		s = "Scheduled for " + r.ScheduledFor.Format(layout)
	case invite.Sending:
		s = "Sending"
	case invite.Sent:
		s = "Sent at " + r.SentAt.Format(layout)
	case invite.Skipped:
		s = "Skipped: " + string(r.Reason)
	case invite.Cancelled:
		s = "Cancelled"
	case invite.Failed:
		s = "Failed: " + string(r.Reason)
	default:
		s = string(r.Status)
	}
	if r.Attempts > 0 {
		s += fmt.Sprintf(" (attempts: %d)", r.Attempts)
	}
	if r.LastError != "" && r.Status != invite.Sent {
		s += "\n\nLast error: " + r.LastError
	}
	if rem := r.Reminder; rem != nil {
		switch {
		case rem.Status == invite.Scheduled && rem.ScheduledFor != nil:
			s += "\nReminder scheduled for " + rem.ScheduledFor.UTC().Format(layout)
		case rem.Status == invite.Sent && rem.SentAt != nil:
			s += "\nReminder sent at " + rem.SentAt.UTC().Format(layout)
		case rem.Status == invite.Skipped:
			s += "\nReminder skipped: " + string(rem.Reason)
		default:
			s += "\nReminder " + string(rem.Status)
		}
	}
	return s
}

// step runs a database step of the send of kind k as a local activity
// and returns the send's state. (A reminder's step of a legacy run
// answers with an invite.Reminder, whose JSON is a subset of the state's.)
func (w *inviteRun) step(ctx workflow.Context, k invite.Kind, step string, in any) (invite.State, error) {
	var st invite.State
	err := workflow.ExecuteLocalActivity(w.local(ctx), w.stepName(k, step), in).Get(ctx, &st)
	return st, err
}

// stepName is the activity that runs step for a send of kind k in this
// run: the step itself, or in a legacy run the per-kind name of that time.
func (w *inviteRun) stepName(k invite.Kind, step string) string {
	if w.legacy {
		return legacyStep(k, step)
	}
	return step
}

// local sets the options of the database steps: short attempts, retried
// until PostgreSQL answers; only a missing event is final.
func (w *inviteRun) local(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: w.opts.LocalTimeout,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	})
}

// dropLateCancels reads cancels that came after the send began: they have
// no effect, and reading them keeps them from being reported as lost.
func (w *inviteRun) dropLateCancels(ctx workflow.Context) {
	for w.cancel.ReceiveAsync(nil) {
		workflow.GetLogger(ctx).Info("cancel signal after the send began: ignored", "status", w.state.Status)
	}
}

// lastError is the message of the innermost failure of an activity error.
func lastError(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Message()
	}
	var timeoutErr *temporal.TimeoutError
	if errors.As(err, &timeoutErr) {
		return "send attempt timed out (" + timeoutErr.TimeoutType().String() + ")"
	}
	return err.Error()
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
