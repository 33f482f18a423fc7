package invite_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/webhook"
)

var (
	kinds = []invite.Kind{invite.KindInvite, invite.KindReminder}
	// statuses are every status a send can be found in; "" is a reminder
	// not planned.
	statuses = []invite.Status{"", invite.Pending, invite.Scheduled, invite.Sending, invite.Sent,
		invite.Skipped, invite.Failed, invite.Cancelled}
	at = time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC)
)

// stateIn is a send found in status, with the marks an earlier attempt
// leaves: two attempts, an error.
func stateIn(status invite.Status) invite.State {
	st := invite.State{Status: status, Attempts: 2, LastError: "451 try later", Medium: invite.Email}
	if status == invite.Scheduled || status == invite.Sending {
		st.ScheduledFor = &at
	}
	return st
}

// moves runs a rule on every kind and status and returns, for each
// "kind/status", the status it leads to or "refused"; a refusal must
// leave the state as it was and match invite.ErrRefused.
func moves(t *testing.T, rule func(k invite.Kind, cur invite.State) (invite.Change, error)) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range kinds {
		for _, s := range statuses {
			if k == invite.KindInvite && s == "" {
				continue
			}
			cur := stateIn(s)
			c, err := rule(k, cur)
			key := fmt.Sprintf("%s/%s", k, s)
			if err != nil {
				require.ErrorIs(t, err, invite.ErrRefused, key)
				assert.False(t, c.Changed(), key)
				assert.Equal(t, cur, c.To, key)
				out[key] = "refused"
				continue
			}
			assert.Equal(t, k, c.Kind, key)
			assert.Equal(t, cur, c.From, key)
			out[key] = string(c.To.Status)
		}
	}
	return out
}

func TestSchedule(t *testing.T) {
	t.Parallel()
	later := at.Add(time.Hour)
	got := moves(t, func(k invite.Kind, cur invite.State) (invite.Change, error) {
		return invite.Schedule(k, cur, later, invite.Sent)
	})
	assert.Equal(t, map[string]string{
		"invite/pending": "scheduled", "invite/scheduled": "scheduled", "invite/failed": "scheduled",
		"invite/sending": "refused", "invite/sent": "refused", "invite/skipped": "refused", "invite/cancelled": "refused",
		// A reminder is planned once.
		"reminder/": "scheduled", "reminder/pending": "refused", "reminder/scheduled": "refused", "reminder/sending": "refused",
		"reminder/sent": "refused", "reminder/skipped": "refused", "reminder/failed": "refused", "reminder/cancelled": "refused",
	}, got)

	c, err := invite.Schedule(invite.KindInvite, invite.State{Status: invite.Failed, Reason: invite.Rejected, Attempts: 1, LastError: "550"}, later, "")
	require.NoError(t, err)
	assert.Equal(t, invite.State{Status: invite.Scheduled, ScheduledFor: &later, Attempts: 1, LastError: "550"}, c.To,
		"a retry run clears the reason and keeps the attempts")
	assert.Equal(t, webhook.InviteScheduled, c.Event)
	assert.Equal(t, invite.NoAttempt, c.Attempt.Op)

	c, err = invite.Schedule(invite.KindInvite, invite.State{Status: invite.Scheduled, ScheduledFor: &at}, later, "")
	require.NoError(t, err)
	assert.Equal(t, &later, c.To.ScheduledFor)
	assert.Empty(t, c.Event, "a new send time is no new schedule for the shop")

	c, err = invite.Schedule(invite.KindReminder, invite.State{Attempts: 0}, later, invite.Sent)
	require.NoError(t, err)
	assert.Equal(t, invite.State{Status: invite.Scheduled, ScheduledFor: &later}, c.To)
	assert.Empty(t, c.Event, "the shop hears of the reminder when it is sent")

	for _, inv := range []invite.Status{invite.Pending, invite.Scheduled, invite.Sending, invite.Skipped, invite.Failed, invite.Cancelled} {
		_, err := invite.Schedule(invite.KindReminder, invite.State{}, later, inv)
		assert.ErrorIs(t, err, invite.ErrRefused, "no reminder for an invite %s", inv)
	}
}

func TestSkip(t *testing.T) {
	t.Parallel()
	got := moves(t, func(k invite.Kind, cur invite.State) (invite.Change, error) {
		return invite.Skip(k, cur, invite.SettingInactive)
	})
	assert.Equal(t, map[string]string{
		"invite/pending": "skipped", "invite/scheduled": "skipped", "invite/failed": "skipped",
		"invite/sending": "refused", "invite/sent": "refused", "invite/skipped": "refused", "invite/cancelled": "refused",
		"reminder/scheduled": "skipped",
		"reminder/":          "refused", "reminder/pending": "refused", "reminder/sending": "refused", "reminder/sent": "refused",
		"reminder/skipped": "refused", "reminder/failed": "refused", "reminder/cancelled": "refused",
	}, got)

	c, err := invite.Skip(invite.KindInvite, stateIn(invite.Pending), invite.EventTypeInactive)
	require.NoError(t, err)
	assert.Equal(t, invite.EventTypeInactive, c.To.Reason)
	assert.Equal(t, webhook.InviteSkipped, c.Event)
	c, err = invite.Skip(invite.KindReminder, stateIn(invite.Scheduled), invite.Reviewed)
	require.NoError(t, err)
	assert.Equal(t, invite.Reviewed, c.To.Reason)
	assert.Empty(t, c.Event)
}

func TestCancel(t *testing.T) {
	t.Parallel()
	got := moves(t, invite.Cancel)
	assert.Equal(t, map[string]string{
		"invite/pending": "cancelled", "invite/scheduled": "cancelled",
		"invite/sending": "refused", "invite/sent": "refused", "invite/skipped": "refused", "invite/failed": "refused",
		"invite/cancelled":   "refused",
		"reminder/scheduled": "cancelled",
		"reminder/":          "refused", "reminder/pending": "refused", "reminder/sending": "refused", "reminder/sent": "refused",
		"reminder/skipped": "refused", "reminder/failed": "refused", "reminder/cancelled": "refused",
	}, got)
	c, err := invite.Cancel(invite.KindInvite, invite.State{Status: invite.Scheduled, Reason: invite.RecentlyInvited})
	require.NoError(t, err)
	assert.Empty(t, c.To.Reason)
	assert.Equal(t, webhook.InviteCancelled, c.Event)
}

// The shop's cancel stops whichever send still waits, answers a cancel
// made already as done, and refuses the rest.
func TestCancelWaiting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		inv, rem invite.Status
		kind     invite.Kind
		want     string // the new status of kind, "unchanged" or "refused"
	}{
		{invite.Pending, "", invite.KindInvite, "cancelled"},
		{invite.Scheduled, "", invite.KindInvite, "cancelled"},
		{invite.Sent, invite.Scheduled, invite.KindReminder, "cancelled"},
		{invite.Cancelled, "", invite.KindInvite, "unchanged"},
		{invite.Sent, invite.Cancelled, invite.KindReminder, "unchanged"},
		{invite.Sending, "", invite.KindInvite, "refused"},
		{invite.Skipped, "", invite.KindInvite, "refused"},
		{invite.Failed, "", invite.KindInvite, "refused"},
		{invite.Sent, "", invite.KindReminder, "refused"},
		{invite.Sent, invite.Sending, invite.KindReminder, "refused"},
		{invite.Sent, invite.Sent, invite.KindReminder, "refused"},
		{invite.Sent, invite.Skipped, invite.KindReminder, "refused"},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("invite %s, reminder %q", tt.inv, tt.rem)
		c, err := invite.CancelWaiting(invite.State{Status: tt.inv}, invite.State{Status: tt.rem})
		assert.Equal(t, tt.kind, c.Kind, name)
		switch tt.want {
		case "refused":
			assert.ErrorIs(t, err, invite.ErrRefused, name)
			assert.False(t, c.Changed(), name)
		case "unchanged":
			assert.NoError(t, err, name)
			assert.False(t, c.Changed(), name)
		default:
			assert.NoError(t, err, name)
			assert.True(t, c.Changed(), name)
			assert.Equal(t, invite.Status(tt.want), c.To.Status, name)
		}
	}
}

func TestGiveUp(t *testing.T) {
	t.Parallel()
	got := moves(t, func(k invite.Kind, cur invite.State) (invite.Change, error) {
		return invite.GiveUp(k, cur, invite.RetriesExhausted, "send attempt timed out")
	})
	assert.Equal(t, map[string]string{
		// An invite fails; a reminder is skipped.
		"invite/pending": "failed", "invite/scheduled": "failed", "invite/sending": "failed",
		"invite/sent": "refused", "invite/skipped": "refused", "invite/failed": "refused", "invite/cancelled": "refused",
		"reminder/scheduled": "skipped", "reminder/sending": "skipped",
		"reminder/": "refused", "reminder/pending": "refused", "reminder/sent": "refused", "reminder/skipped": "refused",
		"reminder/failed": "refused", "reminder/cancelled": "refused",
	}, got)

	c, err := invite.GiveUp(invite.KindInvite, stateIn(invite.Scheduled), invite.RetriesExhausted, "send attempt timed out")
	require.NoError(t, err)
	assert.Equal(t, invite.RetriesExhausted, c.To.Reason)
	assert.Equal(t, "send attempt timed out", c.To.LastError)
	assert.Equal(t, webhook.InviteFailed, c.Event)

	for _, k := range kinds {
		c, err := invite.GiveUp(k, stateIn(invite.Sending), invite.RetriesExhausted, "send attempt timed out")
		require.NoError(t, err)
		assert.Equal(t, invite.DeliveryUncertain, c.To.Reason, "%s left sending may have gone out", k)
		assert.Contains(t, c.To.LastError, "may have been delivered")
		assert.Contains(t, c.To.LastError, "send attempt timed out")
		assert.Equal(t, invite.AttemptChange{Op: invite.AttemptFinished, N: 2, Outcome: invite.OutcomeUncertain,
			Detail: c.To.LastError}, c.Attempt)
	}
}

func TestAbandon(t *testing.T) {
	t.Parallel()
	got := moves(t, func(k invite.Kind, cur invite.State) (invite.Change, error) {
		return invite.Abandon(k, cur, "its workflow is terminated")
	})
	for key, status := range got {
		switch key {
		case "invite/sending":
			assert.Equal(t, "failed", status)
		case "reminder/sending":
			assert.Equal(t, "skipped", status)
		default:
			assert.Equal(t, "refused", status, key)
		}
	}
	c, err := invite.Abandon(invite.KindInvite, stateIn(invite.Sending), "its workflow is terminated")
	require.NoError(t, err)
	assert.Equal(t, invite.DeliveryUncertain, c.To.Reason)
	assert.Contains(t, c.To.LastError, "its workflow is terminated")
	assert.Equal(t, webhook.InviteFailed, c.Event)
}

func TestRetry(t *testing.T) {
	t.Parallel()
	for _, s := range statuses[1:] {
		c, err := invite.Retry(invite.State{Status: s, Reason: invite.Rejected, LastError: "550", Attempts: 3})
		if s != invite.Failed {
			assert.ErrorIs(t, err, invite.ErrRefused, s)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, invite.State{Status: invite.Pending, Attempts: 3}, c.To, "the reason and error go, the attempts stay")
		assert.Equal(t, invite.RunRetry, c.Run)
		assert.Empty(t, c.Event)
		assert.Equal(t, invite.NoAttempt, c.Attempt.Op)
	}
}

func TestRestartReminder(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	waiting := invite.State{Status: invite.Scheduled, ScheduledFor: &at}
	c, err := invite.RestartReminder(waiting, invite.Sent, false)
	require.NoError(t, err)
	assert.Equal(t, invite.KindReminder, c.Kind)
	assert.Equal(t, waiting, c.To, "the reminder keeps its time")
	assert.Equal(t, invite.RunRestart, c.Run)
	assert.True(t, c.Changed(), "the order is written")
	assert.Empty(t, c.Event)
	assert.Equal(t, invite.NoAttempt, c.Attempt.Op)

	_, err = invite.RestartReminder(waiting, invite.Sent, true)
	assert.ErrorIs(t, err, invite.ErrRefused, "a run is ordered already")
	for _, s := range statuses {
		if s != invite.Sent {
			_, err := invite.RestartReminder(waiting, s, false)
			assert.ErrorIs(t, err, invite.ErrRefused, "an invite %s has no reminder to restart", s)
		}
		if s != invite.Scheduled {
			_, err := invite.RestartReminder(invite.State{Status: s}, invite.Sent, false)
			assert.ErrorIs(t, err, invite.ErrRefused, "a reminder %s is not waiting", s)
		}
	}
}

func TestRestart(t *testing.T) {
	t.Parallel()
	for _, seen := range []invite.Status{invite.Pending, invite.Scheduled} {
		c, err := invite.Restart(stateIn(seen), seen, false)
		require.NoError(t, err)
		assert.Equal(t, invite.Pending, c.To.Status)
		assert.Equal(t, invite.RunRestart, c.Run)
		assert.Empty(t, c.Event)

		_, err = invite.Restart(stateIn(seen), seen, true)
		assert.ErrorIs(t, err, invite.ErrRefused, "a run is ordered already")
	}
	_, err := invite.Restart(stateIn(invite.Scheduled), invite.Pending, false)
	assert.ErrorIs(t, err, invite.ErrRefused, "it moved since it was seen")
	_, err = invite.Restart(stateIn(invite.Sending), invite.Sending, false)
	assert.ErrorIs(t, err, invite.ErrRefused, "a send under way is never restarted")
}

// facts that let a send go out by email.
func facts() invite.ClaimFacts {
	return invite.ClaimFacts{EventTypeActive: true, SettingActive: true, Medium: invite.Email,
		Address: "jane.doe@example.com", ProviderReady: true}
}

func TestClaim(t *testing.T) {
	t.Parallel()
	type want struct {
		status    invite.Status
		reason    invite.Reason
		lastError string
	}
	tests := []struct {
		name    string
		facts   func(*invite.ClaimFacts)
		invite  want
		remind  want
		lastErr string
	}{
		{name: "all clear", facts: func(*invite.ClaimFacts) {},
			invite: want{status: invite.Sending}, remind: want{status: invite.Sending}},
		{name: "reviewed", facts: func(f *invite.ClaimFacts) { f.Reviewed = true },
			invite: want{status: invite.Sending}, remind: want{invite.Skipped, invite.Reviewed, ""}},
		{name: "event type inactive", facts: func(f *invite.ClaimFacts) { f.EventTypeActive = false; f.Suppressed = true },
			invite: want{invite.Skipped, invite.EventTypeInactive, ""}, remind: want{invite.Skipped, invite.EventTypeInactive, ""}},
		{name: "setting inactive", facts: func(f *invite.ClaimFacts) { f.SettingActive = false; f.Address = "" },
			invite: want{invite.Skipped, invite.SettingInactive, ""}, remind: want{invite.Skipped, invite.SettingInactive, ""}},
		{name: "no address", facts: func(f *invite.ClaimFacts) { f.Address = ""; f.ProviderReady = false },
			invite: want{invite.Skipped, invite.NoAddress, ""}, remind: want{invite.Skipped, invite.NoAddress, ""}},
		{name: "no provider", facts: func(f *invite.ClaimFacts) {
			f.Medium, f.Address, f.ProviderReady, f.Suppressed = invite.SMS, "+4915112345678", false, true
		},
			invite: want{invite.Failed, invite.NoProvider, "no SMS provider configured"},
			remind: want{invite.Skipped, invite.NoProvider, "no SMS provider configured"}},
		{name: "suppressed", facts: func(f *invite.ClaimFacts) { f.Suppressed = true; f.RecentlyInvited = true },
			invite: want{invite.Skipped, invite.Suppressed, ""}, remind: want{invite.Skipped, invite.Suppressed, ""}},
		{name: "recently invited", facts: func(f *invite.ClaimFacts) { f.RecentlyInvited = true; f.OverQuota = "used up" },
			invite: want{invite.Skipped, invite.RecentlyInvited, ""}, remind: want{invite.Skipped, invite.QuotaExceeded, "used up"}},
		{name: "over quota", facts: func(f *invite.ClaimFacts) { f.OverQuota = "the account's daily send quota of 5 is used up" },
			invite: want{invite.Skipped, invite.QuotaExceeded, "the account's daily send quota of 5 is used up"},
			remind: want{invite.Skipped, invite.QuotaExceeded, "the account's daily send quota of 5 is used up"}},
	}
	for _, tt := range tests {
		for _, k := range kinds {
			name := fmt.Sprintf("%s: %s", k, tt.name)
			w := tt.invite
			if k == invite.KindReminder {
				w = tt.remind
			}
			f := facts()
			tt.facts(&f)
			cur := invite.State{Status: invite.Scheduled, ScheduledFor: &at, Attempts: 1, LastError: "451 try later"}
			c, err := invite.Claim(k, cur, f)
			require.NoError(t, err, name)
			assert.Equal(t, w.status, c.To.Status, name)
			assert.Equal(t, w.reason, c.To.Reason, name)
			assert.Equal(t, f.Medium, c.To.Medium, "%s: the medium is recorded whatever the outcome", name)
			if w.status != invite.Sending {
				assert.False(t, c.Sends(), name)
				assert.Equal(t, 1, c.To.Attempts, "%s: no attempt", name)
				assert.Equal(t, invite.NoAttempt, c.Attempt.Op, name)
				assert.Empty(t, c.Number, name)
				if w.lastError != "" {
					assert.Equal(t, w.lastError, c.To.LastError, name)
				} else {
					assert.Equal(t, "451 try later", c.To.LastError, "%s: the last error stays", name)
				}
				continue
			}
			assert.True(t, c.Sends(), name)
			assert.Empty(t, c.To.Reason, name)
			assert.Equal(t, 2, c.To.Attempts, name)
			assert.Equal(t, invite.AttemptChange{Op: invite.AttemptStarted, N: 2, Medium: invite.Email}, c.Attempt, name)
			assert.Empty(t, c.Event, "%s: sending is a step the shop does not hear of", name)
		}
	}
}

func TestClaimBySMSKeepsTheNumber(t *testing.T) {
	t.Parallel()
	f := facts()
	f.Medium, f.Address = invite.SMS, "+4915112345678"
	for _, k := range kinds {
		c, err := invite.Claim(k, invite.State{Status: invite.Scheduled}, f)
		require.NoError(t, err)
		require.True(t, c.Sends())
		assert.Equal(t, "+4915112345678", c.Number)
		assert.Equal(t, invite.AttemptChange{Op: invite.AttemptStarted, N: 1, Medium: invite.SMS}, c.Attempt)
	}
}

// A claim finding the send marked sending meets the mark of an attempt
// that stopped mid-send: never sent twice.
func TestClaimFindsAnInterruptedSend(t *testing.T) {
	t.Parallel()
	got := moves(t, func(k invite.Kind, cur invite.State) (invite.Change, error) { return invite.Claim(k, cur, facts()) })
	for key, status := range got {
		switch key {
		case "invite/scheduled", "reminder/scheduled":
			assert.Equal(t, "sending", status, key)
		case "invite/sending":
			assert.Equal(t, "failed", status, key)
		case "reminder/sending":
			assert.Equal(t, "skipped", status, key)
		default:
			assert.Equal(t, "refused", status, key)
		}
	}
	for _, k := range kinds {
		c, err := invite.Claim(k, stateIn(invite.Sending), facts())
		require.NoError(t, err)
		assert.False(t, c.Sends())
		assert.Equal(t, invite.DeliveryUncertain, c.To.Reason)
		assert.Equal(t, invite.AttemptChange{Op: invite.AttemptFinished, N: 2, Outcome: invite.OutcomeUncertain,
			Detail: c.To.LastError}, c.Attempt)
		assert.Contains(t, c.Attempt.Detail, "may have been delivered")
	}
}

func TestFinish(t *testing.T) {
	t.Parallel()
	sentAt := at.Add(time.Minute)
	sending := invite.State{Status: invite.Sending, Medium: invite.Email, ScheduledFor: &at, Attempts: 2, LastError: "451 try later"}
	tests := []struct {
		name    string
		kind    invite.Kind
		cur     invite.State
		result  invite.SendResult
		want    invite.State
		event   string
		attempt invite.AttemptChange
		refused bool
	}{
		{name: "invite sent", kind: invite.KindInvite, cur: sending, result: invite.SendResult{SentAt: sentAt},
			want:    invite.State{Status: invite.Sent, Medium: invite.Email, ScheduledFor: &at, SentAt: &sentAt, Attempts: 2, LastError: "451 try later"},
			event:   webhook.InviteSent,
			attempt: invite.AttemptChange{Op: invite.AttemptFinished, N: 2, Outcome: invite.OutcomeSent}},
		{name: "reminder sent", kind: invite.KindReminder, cur: sending, result: invite.SendResult{SentAt: sentAt},
			want:    invite.State{Status: invite.Sent, Medium: invite.Email, ScheduledFor: &at, SentAt: &sentAt, Attempts: 2, LastError: "451 try later"},
			event:   webhook.ReminderSent,
			attempt: invite.AttemptChange{Op: invite.AttemptFinished, N: 2, Outcome: invite.OutcomeSent}},
		{name: "transient", kind: invite.KindInvite, cur: sending, result: invite.SendResult{Retry: true, Error: "421 busy"},
			want:    invite.State{Status: invite.Scheduled, Medium: invite.Email, ScheduledFor: &at, Attempts: 2, LastError: "421 busy"},
			attempt: invite.AttemptChange{Op: invite.AttemptFinished, N: 2, Outcome: invite.OutcomeTransient, Detail: "421 busy"}},
		{name: "reminder transient", kind: invite.KindReminder, cur: sending, result: invite.SendResult{Retry: true, Error: "421 busy"},
			want:    invite.State{Status: invite.Scheduled, Medium: invite.Email, ScheduledFor: &at, Attempts: 2, LastError: "421 busy"},
			attempt: invite.AttemptChange{Op: invite.AttemptFinished, N: 2, Outcome: invite.OutcomeTransient, Detail: "421 busy"}},
		{name: "invite rejected", kind: invite.KindInvite, cur: sending,
			result: invite.SendResult{Reason: invite.Rejected, Error: "550 no such user", Suppress: invite.Bounced, Address: "jane.doe@example.com"},
			want:   invite.State{Status: invite.Failed, Reason: invite.Rejected, Medium: invite.Email, ScheduledFor: &at, Attempts: 2, LastError: "550 no such user"},
			event:  webhook.InviteFailed,
			attempt: invite.AttemptChange{Op: invite.AttemptFinished, N: 2, Outcome: invite.OutcomeRejected,
				Detail: "550 no such user"}},
		{name: "reminder rejected", kind: invite.KindReminder, cur: sending,
			result: invite.SendResult{Reason: invite.Rejected, Error: "550 no such user", Suppress: invite.Bounced, Address: "jane.doe@example.com"},
			want:   invite.State{Status: invite.Skipped, Reason: invite.Rejected, Medium: invite.Email, ScheduledFor: &at, Attempts: 2, LastError: "550 no such user"},
			attempt: invite.AttemptChange{Op: invite.AttemptFinished, N: 2, Outcome: invite.OutcomeRejected,
				Detail: "550 no such user"}},
		{name: "uncertain", kind: invite.KindInvite, cur: sending, result: invite.SendResult{Reason: invite.DeliveryUncertain, Error: "no reply after DATA"},
			want:  invite.State{Status: invite.Failed, Reason: invite.DeliveryUncertain, Medium: invite.Email, ScheduledFor: &at, Attempts: 2, LastError: "no reply after DATA"},
			event: webhook.InviteFailed,
			attempt: invite.AttemptChange{Op: invite.AttemptFinished, N: 2, Outcome: invite.OutcomeUncertain,
				Detail: "no reply after DATA"}},
		{name: "other failure", kind: invite.KindInvite, cur: sending, result: invite.SendResult{Reason: invite.NoProvider, Error: "gone"},
			want:    invite.State{Status: invite.Failed, Reason: invite.NoProvider, Medium: invite.Email, ScheduledFor: &at, Attempts: 2, LastError: "gone"},
			event:   webhook.InviteFailed,
			attempt: invite.AttemptChange{Op: invite.AttemptFinished, N: 2, Outcome: invite.OutcomeFailed, Detail: "no_provider: gone"}},
		{name: "delivered after a verdict of delivery_uncertain", kind: invite.KindInvite,
			cur:     invite.State{Status: invite.Failed, Reason: invite.DeliveryUncertain, Attempts: 2, LastError: "interrupted"},
			result:  invite.SendResult{SentAt: sentAt},
			want:    invite.State{Status: invite.Sent, SentAt: &sentAt, Attempts: 2, LastError: "interrupted"},
			event:   webhook.InviteSent,
			attempt: invite.AttemptChange{Op: invite.AttemptDelivered, N: 2, Outcome: invite.OutcomeSent, Detail: invite.DeliveredAfterAll}},
		{name: "reminder delivered after a verdict of delivery_uncertain", kind: invite.KindReminder,
			cur:     invite.State{Status: invite.Skipped, Reason: invite.DeliveryUncertain, Attempts: 1},
			result:  invite.SendResult{SentAt: sentAt},
			want:    invite.State{Status: invite.Sent, SentAt: &sentAt, Attempts: 1},
			event:   webhook.ReminderSent,
			attempt: invite.AttemptChange{Op: invite.AttemptDelivered, N: 1, Outcome: invite.OutcomeSent, Detail: invite.DeliveredAfterAll}},
		{name: "a reminder skipped otherwise stays skipped", kind: invite.KindReminder,
			cur: invite.State{Status: invite.Skipped, Reason: invite.Reviewed}, result: invite.SendResult{SentAt: sentAt}, refused: true},
		{name: "an invite failed otherwise stays failed", kind: invite.KindInvite,
			cur: invite.State{Status: invite.Failed, Reason: invite.Rejected}, result: invite.SendResult{SentAt: sentAt}, refused: true},
		{name: "a failure after the verdict changes nothing", kind: invite.KindInvite,
			cur: invite.State{Status: invite.Failed, Reason: invite.DeliveryUncertain}, result: invite.SendResult{Retry: true}, refused: true},
		{name: "sent twice", kind: invite.KindInvite, cur: invite.State{Status: invite.Sent, SentAt: &at},
			result: invite.SendResult{SentAt: sentAt}, refused: true},
		{name: "cancelled", kind: invite.KindInvite, cur: invite.State{Status: invite.Cancelled},
			result: invite.SendResult{Reason: invite.Rejected}, refused: true},
	}
	for _, tt := range tests {
		c, err := invite.Finish(tt.kind, tt.cur, tt.result)
		if tt.refused {
			assert.ErrorIs(t, err, invite.ErrRefused, tt.name)
			assert.Equal(t, tt.cur, c.To, tt.name)
			continue
		}
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, c.To, tt.name)
		assert.Equal(t, tt.event, c.Event, tt.name)
		assert.Equal(t, tt.attempt, c.Attempt, tt.name)
		if tt.result.Suppress != "" {
			assert.Equal(t, tt.result.Suppress, c.Suppress, tt.name)
			assert.Equal(t, tt.result.Address, c.Address, tt.name)
		} else {
			assert.Empty(t, c.Suppress, tt.name)
		}
	}

	// A suppression needs an address.
	c, err := invite.Finish(invite.KindInvite, sending, invite.SendResult{Reason: invite.Rejected, Suppress: invite.Bounced})
	require.NoError(t, err)
	assert.Empty(t, c.Suppress)
}

// Every webhook a change can report is one an endpoint can subscribe to,
// and the shop hears of each move exactly as documented.
func TestChangeEvents(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	rules := map[string]func(k invite.Kind, cur invite.State) (invite.Change, error){
		"schedule": func(k invite.Kind, cur invite.State) (invite.Change, error) {
			return invite.Schedule(k, cur, at, invite.Sent)
		},
		"skip": func(k invite.Kind, cur invite.State) (invite.Change, error) {
			return invite.Skip(k, cur, invite.Suppressed)
		},
		"cancel": invite.Cancel,
		"give up": func(k invite.Kind, cur invite.State) (invite.Change, error) {
			return invite.GiveUp(k, cur, invite.RetriesExhausted, "")
		},
		"claim": func(k invite.Kind, cur invite.State) (invite.Change, error) { return invite.Claim(k, cur, facts()) },
		"sent": func(k invite.Kind, cur invite.State) (invite.Change, error) {
			return invite.Finish(k, cur, invite.SendResult{SentAt: at})
		},
		"transient": func(k invite.Kind, cur invite.State) (invite.Change, error) {
			return invite.Finish(k, cur, invite.SendResult{Retry: true})
		},
		"rejected": func(k invite.Kind, cur invite.State) (invite.Change, error) {
			return invite.Finish(k, cur, invite.SendResult{Reason: invite.Rejected})
		},
		"retry": func(_ invite.Kind, cur invite.State) (invite.Change, error) { return invite.Retry(cur) },
		"restart": func(_ invite.Kind, cur invite.State) (invite.Change, error) {
			return invite.Restart(cur, cur.Status, false)
		},
		"abandon": func(k invite.Kind, cur invite.State) (invite.Change, error) { return invite.Abandon(k, cur, "") },
	}
	for name, rule := range rules {
		for _, k := range kinds {
			for _, s := range statuses {
				c, err := rule(k, stateIn(s))
				if err != nil || c.Event == "" {
					continue
				}
				seen[c.Event] = true
				assert.True(t, webhook.ValidEventType(c.Event), "%s %s from %s: %s", name, k, s, c.Event)
				assert.Equal(t, string(c.Kind)+"."+string(c.To.Status), c.Event, "%s %s from %s", name, k, s)
			}
		}
	}
	assert.Equal(t, map[string]bool{webhook.InviteScheduled: true, webhook.InviteSent: true, webhook.InviteSkipped: true,
		webhook.InviteFailed: true, webhook.InviteCancelled: true, webhook.ReminderSent: true}, seen)
}

// A reminder's State reads back as the Reminder the API shows.
func TestStateAsReminder(t *testing.T) {
	t.Parallel()
	st := invite.State{Status: invite.Skipped, Reason: invite.Reviewed, ScheduledFor: &at, SentAt: &at, Attempts: 3,
		Medium: invite.SMS, LastError: "x"}
	assert.Equal(t, invite.Reminder{Status: invite.Skipped, Reason: invite.Reviewed, ScheduledFor: &at, SentAt: &at}, st.Reminder())
}

func TestRefusalSaysWhat(t *testing.T) {
	t.Parallel()
	_, err := invite.Cancel(invite.KindReminder, invite.State{})
	var r *invite.Refusal
	require.ErrorAs(t, err, &r)
	assert.Equal(t, invite.Refusal{Kind: invite.KindReminder, Rule: "cancel", Status: ""}, *r)
	assert.Equal(t, "reminder cannot cancel from status none", err.Error())
}

// TestNextDelivery: a message's delivery status only rises; a deferral
// never changes it.
func TestNextDelivery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cur, report, want invite.MailOutcome
		changed           bool
	}{
		{"", invite.MailDelivered, invite.MailDelivered, true},
		{"", invite.MailBounced, invite.MailBounced, true},
		{"", invite.MailComplained, invite.MailComplained, true},
		{"", invite.MailDeferred, "", false},
		{invite.MailDelivered, invite.MailDelivered, invite.MailDelivered, false},
		{invite.MailDelivered, invite.MailBounced, invite.MailBounced, true},
		{invite.MailDelivered, invite.MailComplained, invite.MailComplained, true},
		{invite.MailBounced, invite.MailDelivered, invite.MailBounced, false},
		{invite.MailBounced, invite.MailComplained, invite.MailComplained, true},
		{invite.MailComplained, invite.MailBounced, invite.MailComplained, false},
		{invite.MailComplained, invite.MailDelivered, invite.MailComplained, false},
		{invite.MailBounced, invite.MailDeferred, invite.MailBounced, false},
		{invite.MailDelivered, "opened", invite.MailDelivered, false},
	}
	for _, tc := range tests {
		got, changed := invite.NextDelivery(tc.cur, tc.report)
		assert.Equal(t, tc.want, got, "%q then %q", tc.cur, tc.report)
		assert.Equal(t, tc.changed, changed, "%q then %q", tc.cur, tc.report)
	}
	assert.Equal(t, invite.Bounced, invite.MailBounced.Suppression())
	assert.Equal(t, invite.Complained, invite.MailComplained.Suppression())
	assert.Empty(t, invite.MailDelivered.Suppression())
	assert.Empty(t, invite.MailDeferred.Suppression())
}
