package invitedb

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/reportdb"
)

// Every send attempt of an invite or a reminder is kept in send_attempts.
// The rows are not written by the callers of the steps but follow from the
// changes the rules make (invite.Change.Attempt), in the transaction that
// makes them (apply): a move to sending starts an attempt, a move away
// from it finishes the attempt with an outcome read off the new state. So
// every way an attempt can end — delivered, refused, retried, found
// interrupted by the next claim, given up by the workflow or by the
// reconciler — is recorded by the one change that ends it, and none can be
// forgotten.

// Attempt is one send attempt as GET /events/{id} shows it.
type Attempt struct {
	N          int            `json:"n"`
	Kind       invite.Kind    `json:"kind"`
	Medium     string         `json:"medium"`
	StartedAt  time.Time      `json:"startedAt"`
	FinishedAt *time.Time     `json:"finishedAt"`
	Outcome    invite.Outcome `json:"outcome"`
	Detail     string         `json:"detail"`
	// Template is the template the attempt's message was rendered from;
	// nil when not recorded (attempts from before templates).
	Template *AttemptTemplate `json:"template"`
	// ProviderEvents are what the mail provider reported of the attempt's
	// message after its relay took it, oldest first; nil when none.
	ProviderEvents []ProviderEvent `json:"providerEvents"`
}

// AttemptTemplate is the template an attempt's message was rendered from:
// its level (a templates.Source) and version.
type AttemptTemplate struct {
	Source  string `json:"source"`
	Version *int   `json:"version"`
}

// ProviderEvent is one report of a mail provider on a message.
type ProviderEvent struct {
	Provider string             `json:"provider"`
	Outcome  invite.MailOutcome `json:"outcome"`
	Detail   string             `json:"detail"`
	At       time.Time          `json:"at"`
}

// attemptsColumn is the event's attempts as a JSON array, oldest first,
// for eventColumns; timestamps in RFC 3339 UTC.
const attemptsColumn = `(SELECT json_agg(json_build_object('n', a.n, 'kind', a.kind, 'medium', COALESCE(a.medium, ''),
		'startedAt', to_char(a.started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
		'finishedAt', to_char(a.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
		'outcome', COALESCE(a.outcome, ''), 'detail', COALESCE(a.detail, ''),
		'template', CASE WHEN a.template_source IS NULL THEN NULL
		                 ELSE json_build_object('source', a.template_source, 'version', a.template_version) END,
		'providerEvents', ` + reportdb.MailEventsColumn + `)
		ORDER BY a.started_at, a.kind, a.n)
	 FROM send_attempts a WHERE a.event_id = events.id AND a.event_received_at = events.received_at) AS attempt_history`

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
		return nil, pg.Translate(err)
	}
	return Event{ID: eventID, AttemptHistory: raw}.History()
}

// applyAttempt writes what a change does to the attempt rows of kind k.
func applyAttempt(ctx context.Context, tx *sqlx.Tx, eventID string, k invite.Kind, a invite.AttemptChange, now time.Time) error {
	var err error
	switch a.Op {
	case invite.AttemptStarted:
		// The attempt is kept in its event's month (event_received_at).
		_, err = tx.ExecContext(ctx, `INSERT INTO send_attempts (event_id, kind, n, medium, started_at, event_received_at)
			SELECT $1, $2, $3, NULLIF($4, ''), $5, received_at FROM events WHERE id = $1
			ON CONFLICT DO NOTHING`, eventID, k, a.N, a.Medium, now)
	case invite.AttemptFinished:
		_, err = tx.ExecContext(ctx, `UPDATE send_attempts SET finished_at = $4, outcome = $5, detail = NULLIF($6, '')
			WHERE event_id = $1 AND kind = $2 AND n = $3 AND finished_at IS NULL`,
			eventID, k, a.N, now, a.Outcome, pg.Truncate(a.Detail, pg.MaxDetail))
	case invite.AttemptDelivered:
		_, err = tx.ExecContext(ctx, `UPDATE send_attempts SET outcome = $4, finished_at = $5, detail = $6
			WHERE event_id = $1 AND kind = $2 AND n = $3 AND outcome = 'uncertain'`,
			eventID, k, a.N, a.Outcome, now, a.Detail)
	}
	if err != nil {
		return fmt.Errorf("%s attempt %d: %w", k, a.N, err)
	}
	return nil
}

// RecordAttemptTemplate notes on the event's running send attempt of kind
// ("invite" or "reminder") the template its message was rendered from:
// its source (a templates.Source) and version (0 for the built-in one).
func (s *Store) RecordAttemptTemplate(ctx context.Context, eventID, kind, source string, version int) error {
	_, err := s.db.ExecContext(ctx, `UPDATE send_attempts SET template_source = $3, template_version = NULLIF($4, 0)
		WHERE event_id = $1 AND kind = $2 AND finished_at IS NULL
		  AND n = (SELECT max(n) FROM send_attempts WHERE event_id = $1 AND kind = $2)`, eventID, kind, source, version)
	if err != nil {
		return fmt.Errorf("record attempt template: %w", pg.Translate(err))
	}
	return nil
}
