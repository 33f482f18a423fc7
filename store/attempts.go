package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
)

// Every send attempt of an invite or a reminder is kept (SPEC §11.8) in
// send_attempts. The rows are not written by the callers of the state
// machines but derived from their transitions, in the transaction that
// makes them (changeInvite, changeReminder): a move to `sending` starts
// an attempt, a move away from it finishes the attempt with an outcome
// read off the new state. So every way an attempt can end — delivered,
// refused, retried, found interrupted by the next claim, given up by the
// workflow or by the reconciler — is recorded by the one transition that
// ends it, and none can be forgotten.

// AttemptKind says what an attempt tried to send.
type AttemptKind string

// Attempt kinds.
const (
	AttemptInvite   AttemptKind = "invite"
	AttemptReminder AttemptKind = "reminder"
)

// AttemptOutcome is how an attempt ended; "" while it runs.
type AttemptOutcome string

// Attempt outcomes.
const (
	// OutcomeSent: delivered to the provider.
	OutcomeSent AttemptOutcome = "sent"
	// OutcomeTransient: failed for now; another attempt follows.
	OutcomeTransient AttemptOutcome = "transient"
	// OutcomeRejected: refused for good (the address or the message).
	OutcomeRejected AttemptOutcome = "rejected"
	// OutcomeUncertain: interrupted after it began; it may have been
	// delivered, so it is not repeated.
	OutcomeUncertain AttemptOutcome = "uncertain"
	// OutcomeFailed: ended any other way.
	OutcomeFailed AttemptOutcome = "failed"
)

// Attempt is one send attempt as GET /events/{id} shows it.
type Attempt struct {
	N          int            `json:"n"`
	Kind       AttemptKind    `json:"kind"`
	Medium     string         `json:"medium"`
	StartedAt  time.Time      `json:"startedAt"`
	FinishedAt *time.Time     `json:"finishedAt"`
	Outcome    AttemptOutcome `json:"outcome"`
	Detail     string         `json:"detail"`
	// Template is the template the attempt's message was rendered from;
	// nil when not recorded (attempts from before templates).
	Template *AttemptTemplate `json:"template"`
}

// attemptsColumn is the event's attempts as a JSON array, oldest first,
// for eventColumns; timestamps in RFC 3339 UTC.
const attemptsColumn = `(SELECT json_agg(json_build_object('n', a.n, 'kind', a.kind, 'medium', COALESCE(a.medium, ''),
		'startedAt', to_char(a.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
		'finishedAt', to_char(a.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
		'outcome', COALESCE(a.outcome, ''), 'detail', COALESCE(a.detail, ''),
		'template', CASE WHEN a.template_source IS NULL THEN NULL
		                 ELSE json_build_object('source', a.template_source, 'version', a.template_version) END)
		ORDER BY a.started_at, a.kind, a.n)
	 FROM send_attempts a WHERE a.event_id = events.id) AS attempt_history`

// History decodes the event's send attempts, oldest first.
func (e Event) History() ([]Attempt, error) {
	if len(e.AttemptHistory) == 0 {
		return []Attempt{}, nil
	}
	var out []Attempt
	if err := json.Unmarshal(e.AttemptHistory, &out); err != nil {
		return nil, fmt.Errorf("event %s: decode attempts: %w", e.ID, err)
	}
	return out, nil
}

// EventAttempts returns the send attempts of an event, oldest first.
func (s *Store) EventAttempts(ctx context.Context, eventID string) ([]Attempt, error) {
	var raw []byte
	err := s.db.GetContext(ctx, &raw, `SELECT `+attemptsColumn+` FROM events WHERE id = $1`, eventID)
	if err != nil {
		return nil, translate(err)
	}
	return Event{ID: eventID, AttemptHistory: raw}.History()
}

// trackInviteAttempt records what the invite's transition prev → next
// means for its attempts, in the transition's transaction: entering
// sending starts attempt next.Attempts; leaving it finishes attempt
// prev.Attempts; a delivery recorded after a verdict of
// delivery_uncertain turns that attempt sent.
func (s *Store) trackInviteAttempt(ctx context.Context, tx *sqlx.Tx, eventID string, prev, next invite.State) error {
	now := s.Now()
	switch {
	case next.Status == invite.Sending && prev.Status != invite.Sending:
		return startAttempt(ctx, tx, eventID, AttemptInvite, next.Attempts, string(next.Medium), now)
	case prev.Status == invite.Sending && next.Status != invite.Sending:
		outcome, detail := inviteOutcome(next)
		return finishAttempt(ctx, tx, eventID, AttemptInvite, prev.Attempts, outcome, detail, now)
	case prev.Status == invite.Failed && prev.Reason == invite.DeliveryUncertain && next.Status == invite.Sent:
		return deliveredAfterAll(ctx, tx, eventID, AttemptInvite, prev.Attempts, now)
	}
	return nil
}

// inviteOutcome reads the outcome of an attempt off the state it left the
// invite in.
func inviteOutcome(st invite.State) (AttemptOutcome, string) {
	switch {
	case st.Status == invite.Sent:
		return OutcomeSent, ""
	case st.Status == invite.Scheduled:
		return OutcomeTransient, st.LastError
	case st.Reason == invite.DeliveryUncertain:
		return OutcomeUncertain, st.LastError
	case st.Reason == invite.Rejected:
		return OutcomeRejected, st.LastError
	}
	return OutcomeFailed, joinDetail(string(st.Reason), st.LastError)
}

// trackReminderAttempt is trackInviteAttempt for the reminder, whose
// attempts are numbered on their own.
func (s *Store) trackReminderAttempt(ctx context.Context, tx *sqlx.Tx, eventID string, prev, next invite.Reminder) error {
	now := s.Now()
	switch {
	case next.Status == invite.Sending && prev.Status != invite.Sending:
		var r struct {
			N      int    `db:"n"`
			Medium string `db:"medium"`
		}
		if err := tx.GetContext(ctx, &r, `
			SELECT (SELECT COALESCE(max(n), 0) + 1 FROM send_attempts WHERE event_id = $1 AND kind = 'reminder') AS n,
			       s.medium FROM events e JOIN invite_settings s ON s.id = e.invite_setting_id WHERE e.id = $1`, eventID); err != nil {
			return fmt.Errorf("reminder attempt: %w", err)
		}
		return startAttempt(ctx, tx, eventID, AttemptReminder, r.N, r.Medium, now)
	case prev.Status == invite.Sending && next.Status != invite.Sending:
		outcome := OutcomeFailed
		switch {
		case next.Status == invite.Sent:
			outcome = OutcomeSent
		case next.Status == invite.Scheduled:
			outcome = OutcomeTransient
		case next.Reason == invite.DeliveryUncertain:
			outcome = OutcomeUncertain
		case next.Reason == invite.Rejected:
			outcome = OutcomeRejected
		}
		var detail string
		if outcome == OutcomeUncertain {
			detail = uncertain("")
		} else if outcome == OutcomeFailed {
			detail = string(next.Reason)
		}
		return finishAttempt(ctx, tx, eventID, AttemptReminder, 0, outcome, detail, now)
	case prev.Status == invite.Skipped && prev.Reason == invite.DeliveryUncertain && next.Status == invite.Sent:
		return deliveredAfterAll(ctx, tx, eventID, AttemptReminder, 0, now)
	}
	return nil
}

func startAttempt(ctx context.Context, tx *sqlx.Tx, eventID string, kind AttemptKind, n int, medium string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO send_attempts (event_id, kind, n, medium, started_at)
		VALUES ($1, $2, $3, NULLIF($4, ''), $5) ON CONFLICT (event_id, kind, n) DO NOTHING`, eventID, kind, n, medium, at)
	if err != nil {
		return fmt.Errorf("start %s attempt %d: %w", kind, n, err)
	}
	return nil
}

// finishAttempt ends attempt n of kind, or, with n = 0, the latest
// attempt of kind still running.
func finishAttempt(ctx context.Context, tx *sqlx.Tx, eventID string, kind AttemptKind, n int,
	outcome AttemptOutcome, detail string, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE send_attempts SET finished_at = $4, outcome = $5, detail = NULLIF($6, '')
		WHERE event_id = $1 AND kind = $2 AND finished_at IS NULL
		  AND n = CASE WHEN $3 > 0 THEN $3 ELSE
		      (SELECT max(n) FROM send_attempts WHERE event_id = $1 AND kind = $2 AND finished_at IS NULL) END`,
		eventID, kind, n, at, outcome, truncate(detail, maxAttemptDetail))
	if err != nil {
		return fmt.Errorf("finish %s attempt: %w", kind, err)
	}
	return nil
}

// deliveredAfterAll turns an attempt judged uncertain into a delivery: a
// record of a sent invite must not be lost.
func deliveredAfterAll(ctx context.Context, tx *sqlx.Tx, eventID string, kind AttemptKind, n int, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE send_attempts SET outcome = 'sent', finished_at = $4,
		detail = 'delivered; recorded after the attempt had been judged uncertain'
		WHERE event_id = $1 AND kind = $2 AND outcome = 'uncertain'
		  AND n = CASE WHEN $3 > 0 THEN $3 ELSE
		      (SELECT max(n) FROM send_attempts WHERE event_id = $1 AND kind = $2) END`, eventID, kind, n, at)
	if err != nil {
		return fmt.Errorf("record %s attempt delivered: %w", kind, err)
	}
	return nil
}

// maxAttemptDetail bounds a stored detail; providers' answers are short.
const maxAttemptDetail = 2000

func joinDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ": " + b
}
