package webhookdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Webhook endpoints and their deliveries. The endpoints are
// an account's resource like any other; the deliveries are an outbox:
// emitting (webhookemit.go) writes them in the transaction of the state
// change they report, the webhook starter (webhookstart.go) starts one
// workflow per row, and the workflow's activity records each attempt here.

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliverySucceeded = "succeeded"
	DeliveryFailed    = "failed"
)

// Why a delivery failed (its reason; its last error says it in words).
const (
	ReasonRetriesExhausted = "retries_exhausted"
	// ReasonGone: the endpoint answered 410 Gone to this delivery.
	ReasonGone = "gone"
	// ReasonEndpointDisabled: the endpoint was disabled while the delivery
	// waited, or already when the change it reports happened.
	ReasonEndpointDisabled = "endpoint_disabled"
)

// WebhookEndpoint is a URL that receives an account's webhooks of the
// event types it subscribes to.
type WebhookEndpoint struct {
	ID          string         `db:"id"`
	AccountID   string         `db:"account_id"`
	URL         string         `db:"url"`
	Events      pq.StringArray `db:"events"`
	Description string         `db:"description"`
	Enabled     bool           `db:"enabled"`
	// Secret is the signing secret, sealed by the caller: the store never
	// sees it in the clear. PreviousSecret (sealed too) signs beside it
	// until PreviousExpiresAt, after a rotation.
	Secret            []byte     `db:"secret"`
	PreviousSecret    []byte     `db:"previous_secret"`
	PreviousExpiresAt *time.Time `db:"previous_expires_at"`
	CreatedAt         time.Time  `db:"created_at"`
	UpdatedAt         time.Time  `db:"updated_at"`
}

const webhookEndpointColumns = `id, account_id, url, events, description, enabled, secret, previous_secret,
	previous_expires_at, created_at, updated_at`

// WebhookEndpointUpdate is a partial update; nil fields keep their value.
type WebhookEndpointUpdate struct {
	URL         *string
	Events      []string // nil: keep
	Description *string
	Enabled     *bool
}

// CreateWebhookEndpoint stores a new, enabled endpoint, unless the
// account has as many as its quota allows (a *QuotaError). The caller
// makes its ID (the secret is sealed for it) and validates URL and events.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, ep WebhookEndpoint) (WebhookEndpoint, error) {
	now := s.Now()
	ep.Enabled, ep.CreatedAt, ep.UpdatedAt = true, now, now
	ep.PreviousSecret, ep.PreviousExpiresAt = nil, nil
	if ep.Events == nil {
		ep.Events = pq.StringArray{}
	}
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := accountdb.LockTx(ctx, tx, ep.AccountID); err != nil {
			return err
		}
		if err := s.Accounts.CheckResourceQuotaTx(ctx, tx, ep.AccountID, accountdb.QuotaWebhooks); err != nil {
			return err
		}
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO webhook_endpoints (`+webhookEndpointColumns+`)
			VALUES (:id, :account_id, :url, :events, :description, :enabled, :secret, :previous_secret,
			        :previous_expires_at, :created_at, :updated_at)`, ep); err != nil {
			return err
		}
		return persondb.RecordChange(ctx, tx, now, ep.AccountID, persondb.AuditWebhookEndpointAdded, ep.ID, nil)
	})
	if err != nil {
		return WebhookEndpoint{}, fmt.Errorf("create webhook endpoint: %w", pg.Translate(err))
	}
	return ep, nil
}

// WebhookEndpoint returns one endpoint of an account.
func (s *Store) WebhookEndpoint(ctx context.Context, accountID, id string) (WebhookEndpoint, error) {
	var ep WebhookEndpoint
	err := s.db.GetContext(ctx, &ep, `SELECT `+webhookEndpointColumns+` FROM webhook_endpoints WHERE id = $1 AND account_id = $2`, id, accountID)
	return ep, pg.Translate(err)
}

// ListWebhookEndpoints returns a page of the account's endpoints, newest
// first.
func (s *Store) ListWebhookEndpoints(ctx context.Context, accountID string, p pg.Page) ([]WebhookEndpoint, *pg.Cursor, error) {
	var eps []WebhookEndpoint
	next, err := pg.SelectPage(ctx, s.Read(ctx), &eps, pg.NewWhere(accountID), `SELECT `+webhookEndpointColumns+` FROM webhook_endpoints`, p,
		func(ep WebhookEndpoint) pg.Cursor { return pg.Cursor{CreatedAt: ep.CreatedAt, ID: ep.ID} })
	if err != nil {
		return nil, nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return eps, next, nil
}

// UpdateWebhookEndpoint applies u. Disabling an endpoint gives up its
// pending deliveries in the same transaction (failed, "endpoint
// disabled"): they would otherwise wait out their retries against an
// endpoint that is not to be called.
func (s *Store) UpdateWebhookEndpoint(ctx context.Context, accountID, id string, u WebhookEndpointUpdate) (WebhookEndpoint, error) {
	var ep WebhookEndpoint
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &ep, `SELECT `+webhookEndpointColumns+` FROM webhook_endpoints
			WHERE id = $1 AND account_id = $2 FOR UPDATE`, id, accountID); err != nil {
			return err
		}
		wasEnabled := ep.Enabled
		if u.URL != nil {
			ep.URL = *u.URL
		}
		if u.Events != nil {
			ep.Events = u.Events
		}
		if u.Description != nil {
			ep.Description = *u.Description
		}
		if u.Enabled != nil {
			ep.Enabled = *u.Enabled
		}
		ep.UpdatedAt = s.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET url = $2, events = $3, description = $4,
			enabled = $5, updated_at = $6 WHERE id = $1`, id, ep.URL, ep.Events, ep.Description, ep.Enabled, ep.UpdatedAt); err != nil {
			return err
		}
		if wasEnabled && !ep.Enabled {
			if err := failPendingDeliveries(ctx, tx, id, "", "endpoint disabled"); err != nil {
				return err
			}
		}
		return persondb.RecordChange(ctx, tx, ep.UpdatedAt, accountID, persondb.AuditWebhookEndpointChanged, id,
			map[string]string{"enabled": strconv.FormatBool(ep.Enabled)})
	})
	if err != nil {
		return WebhookEndpoint{}, fmt.Errorf("update webhook endpoint: %w", err)
	}
	return ep, nil
}

// DeleteWebhookEndpoint deletes an endpoint and its deliveries (their
// workflows find nothing left to deliver); pg.ErrNotFound when there is none.
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, accountID, id string) error {
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = $1 AND account_id = $2`, id, accountID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return pg.TranslateOr(err, pg.ErrNotFound)
		}
		return persondb.RecordChange(ctx, tx, s.Now(), accountID, persondb.AuditWebhookEndpointDeleted, id, nil)
	})
	if err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", pg.Translate(err))
	}
	return nil
}

// RotateWebhookSecret makes sealed the endpoint's secret; the one it
// replaces goes on signing beside it for overlap, so receivers can switch
// at their own pace. A rotation within the overlap of the previous one
// drops the oldest secret: at most two ever sign.
func (s *Store) RotateWebhookSecret(ctx context.Context, accountID, id string, sealed []byte, overlap time.Duration) (WebhookEndpoint, error) {
	now := s.Now()
	var ep WebhookEndpoint
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &ep, `UPDATE webhook_endpoints
			SET previous_secret = secret, previous_expires_at = $3, secret = $4, updated_at = $5
			WHERE id = $1 AND account_id = $2 RETURNING `+webhookEndpointColumns,
			id, accountID, now.Add(overlap), sealed, now); err != nil {
			return err
		}
		return persondb.RecordChange(ctx, tx, now, accountID, persondb.AuditWebhookSecretRotated, id, nil)
	})
	if err != nil {
		return WebhookEndpoint{}, fmt.Errorf("rotate webhook secret: %w", pg.Translate(err))
	}
	return ep, nil
}

// WebhookDelivery is one message to one endpoint.
type WebhookDelivery struct {
	ID         string `db:"id"` // msg-<uuid>, the webhook-id
	EndpointID string `db:"endpoint_id"`
	AccountID  string `db:"account_id"`
	Type       string `db:"type"`
	// Payload is the exact body sent on every attempt.
	Payload        json.RawMessage `db:"payload"`
	Status         string          `db:"status"`
	Reason         sql.NullString  `db:"reason"` // set when Status is failed
	Attempts       int             `db:"attempts"`
	LastStatusCode sql.NullInt32   `db:"last_status_code"`
	LastError      sql.NullString  `db:"last_error"`
	CreatedAt      time.Time       `db:"created_at"`
	DeliveredAt    sql.NullTime    `db:"delivered_at"`
	// AttemptLog is the last attemptLogSize attempts, oldest first.
	AttemptLog DeliveryAttempts `db:"attempt_log"`
}

// attemptLogSize is how many attempts a delivery's log keeps: the retry
// schedule's attempts of one run and more, without a row growing without
// bound through replays.
const attemptLogSize = 20

// DeliveryAttempt is one attempt at a delivery as its log keeps it.
type DeliveryAttempt struct {
	At         time.Time `json:"at"`                   // when it ended
	StatusCode int       `json:"statusCode,omitempty"` // the HTTP status answered; 0: none
	Error      string    `json:"error,omitempty"`      // why it did not succeed; "" when it did
	TookMs     int64     `json:"tookMs"`
}

// DeliveryAttempts is a delivery's attempt log, oldest first.
type DeliveryAttempts []DeliveryAttempt

// Scan reads the log from its JSON column.
func (a *DeliveryAttempts) Scan(src any) error {
	var raw []byte
	switch v := src.(type) {
	case []byte:
		raw = v
	case string:
		raw = []byte(v)
	case nil:
		*a = nil
		return nil
	default:
		return fmt.Errorf("attempt log: cannot scan %T", src)
	}
	return json.Unmarshal(raw, a)
}

const webhookDeliveryColumns = `id, endpoint_id, account_id, type, payload, status, reason, attempts, last_status_code,
	last_error, created_at, delivered_at, attempt_log`

// ListWebhookDeliveries returns a page of an endpoint's deliveries, newest
// first, of one status when status is not "". pg.ErrNotFound when the
// account has no such endpoint.
func (s *Store) ListWebhookDeliveries(ctx context.Context, accountID, endpointID, status string, p pg.Page) ([]WebhookDelivery, *pg.Cursor, error) {
	var exists bool
	rd := s.Read(ctx)
	if err := rd.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $1 AND account_id = $2)`,
		endpointID, accountID); err != nil {
		return nil, nil, fmt.Errorf("list webhook deliveries: %w", pg.Translate(err))
	}
	if !exists {
		return nil, nil, pg.ErrNotFound
	}
	w := pg.NewWhere(accountID)
	w.Add("endpoint_id = ", endpointID)
	if status != "" {
		w.Add("status = ", status)
	}
	var ds []WebhookDelivery
	next, err := pg.SelectPage(ctx, rd, &ds, w, `SELECT `+webhookDeliveryColumns+` FROM webhook_deliveries`, p,
		func(d WebhookDelivery) pg.Cursor { return pg.Cursor{CreatedAt: d.CreatedAt, ID: d.ID} })
	if err != nil {
		return nil, nil, fmt.Errorf("list webhook deliveries: %w", err)
	}
	return ds, next, nil
}

// WebhookAttempt is what one delivery attempt needs: the delivery and its
// endpoint's URL, state and sealed secrets.
type WebhookAttempt struct {
	Delivery WebhookDelivery
	URL      string
	Enabled  bool
	// Secrets are the sealed secrets that sign now: the endpoint's, and
	// during a rotation the previous one.
	Secrets [][]byte
}

// LoadWebhookAttempt reads a delivery with its endpoint; pg.ErrNotFound when
// the delivery is gone (its endpoint was deleted).
func (s *Store) LoadWebhookAttempt(ctx context.Context, deliveryID string) (WebhookAttempt, error) {
	var r struct {
		WebhookDelivery
		URL               string     `db:"url"`
		Enabled           bool       `db:"enabled"`
		Secret            []byte     `db:"secret"`
		PreviousSecret    []byte     `db:"previous_secret"`
		PreviousExpiresAt *time.Time `db:"previous_expires_at"`
	}
	err := s.db.GetContext(ctx, &r, `SELECT d.id, d.endpoint_id, d.account_id, d.type, d.payload, d.status, d.reason, d.attempts,
		       d.last_status_code, d.last_error, d.created_at, d.delivered_at, d.attempt_log,
		       e.url, e.enabled, e.secret, e.previous_secret, e.previous_expires_at
		FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
		WHERE d.id = $1`, deliveryID)
	if err != nil {
		return WebhookAttempt{}, fmt.Errorf("load webhook delivery %s: %w", deliveryID, pg.Translate(err))
	}
	a := WebhookAttempt{Delivery: r.WebhookDelivery, URL: r.URL, Enabled: r.Enabled, Secrets: [][]byte{r.Secret}}
	if r.PreviousSecret != nil && r.PreviousExpiresAt != nil && r.PreviousExpiresAt.After(s.Now()) {
		a.Secrets = append(a.Secrets, r.PreviousSecret)
	}
	return a, nil
}

// AttemptResult is how one delivery attempt went.
type AttemptResult struct {
	StatusCode int    // the HTTP status answered; 0: none
	Error      string // why it did not succeed; "" when it did
	Delivered  bool   // answered 2xx
	// Gone: answered 410; the endpoint is disabled and the delivery fails.
	Gone bool
	Took time.Duration // how long the attempt took
}

// RecordWebhookAttempt counts an attempt, adds it to the delivery's log
// and keeps its status code and error. A delivered attempt makes the delivery succeeded — whatever it
// was, since the receiver has it. A 410 fails the delivery and disables
// the endpoint, giving up its other pending deliveries, in one
// transaction. Otherwise the status is unchanged: the retry schedule
// decides when to give up (FailWebhookDelivery).
func (s *Store) RecordWebhookAttempt(ctx context.Context, deliveryID string, r AttemptResult) (WebhookDelivery, error) {
	var d WebhookDelivery
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		now := s.Now()
		status := `status`
		switch {
		case r.Delivered:
			status = `'succeeded'`
		case r.Gone:
			status = `CASE WHEN status = 'pending' THEN 'failed' ELSE status END,
				reason = CASE WHEN status = 'pending' THEN 'gone' ELSE reason END`
		}
		// The answer is kept while the delivery is pending, and when it
		// delivered; an attempt that ends after the delivery was given up
		// (its endpoint disabled meanwhile) leaves the reason it was.
		logged, err := json.Marshal(DeliveryAttempt{At: now, StatusCode: r.StatusCode, Error: pg.Truncate(r.Error, 1000),
			TookMs: r.Took.Milliseconds()})
		if err != nil {
			return err
		}
		// The log drops its oldest attempt when it is full.
		err = tx.GetContext(ctx, &d, `UPDATE webhook_deliveries SET attempts = attempts + 1,
			last_status_code = CASE WHEN status = 'pending' OR $4 THEN NULLIF($2, 0) ELSE last_status_code END,
			last_error = CASE WHEN status = 'pending' OR $4 THEN NULLIF($3, '') ELSE last_error END,
			status = `+status+`,
			delivered_at = CASE WHEN $4 THEN COALESCE(delivered_at, $5) ELSE delivered_at END,
			attempt_log = (CASE WHEN jsonb_array_length(attempt_log) >= $7 THEN attempt_log - 0 ELSE attempt_log END)
				|| jsonb_build_array($6::jsonb)
			WHERE id = $1 RETURNING `+webhookDeliveryColumns, deliveryID, r.StatusCode, pg.Truncate(r.Error, 1000), r.Delivered, now,
			string(logged), attemptLogSize)
		if err != nil || !r.Gone {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET enabled = false, updated_at = $2
			WHERE id = $1 AND enabled`, d.EndpointID, now); err != nil {
			return err
		}
		return failPendingDeliveries(ctx, tx, d.EndpointID, d.ID, "endpoint disabled: it answered 410 Gone to another delivery")
	})
	if err != nil {
		return WebhookDelivery{}, fmt.Errorf("record webhook attempt %s: %w", deliveryID, err)
	}
	return d, nil
}

// FailWebhookDelivery gives up a pending delivery for reason (its
// retries are exhausted, or its endpoint is disabled). The last attempt's
// error is kept; lastError is stored only when there is none. A delivery
// that is no longer pending is returned unchanged.
func (s *Store) FailWebhookDelivery(ctx context.Context, deliveryID, reason, lastError string) (WebhookDelivery, error) {
	var d WebhookDelivery
	err := s.db.GetContext(ctx, &d, `UPDATE webhook_deliveries
		SET status = CASE WHEN status = 'pending' THEN 'failed' ELSE status END,
		    reason = CASE WHEN status = 'pending' THEN $3 ELSE reason END,
		    last_error = CASE WHEN status = 'pending' THEN COALESCE(last_error, NULLIF($2, '')) ELSE last_error END
		WHERE id = $1 RETURNING `+webhookDeliveryColumns, deliveryID, pg.Truncate(lastError, 1000), reason)
	if err != nil {
		return WebhookDelivery{}, fmt.Errorf("fail webhook delivery %s: %w", deliveryID, pg.Translate(err))
	}
	return d, nil
}

// failPendingDeliveries gives up the pending deliveries of an endpoint
// (but except), which is disabled, with reason as their last error.
func failPendingDeliveries(ctx context.Context, tx *sqlx.Tx, endpointID, except, reason string) error {
	_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'failed', reason = $4, last_error = $3
		WHERE endpoint_id = $1 AND status = 'pending' AND id <> $2`, endpointID, except, reason, ReasonEndpointDisabled)
	return err
}

// WebhookBacklog reports the deliveries not yet succeeded or given up and
// the age of the oldest, for the backlog gauges.
func (s *Store) WebhookBacklog(ctx context.Context) (pending int, oldest time.Duration, err error) {
	var r struct {
		N      int          `db:"n"`
		Oldest sql.NullTime `db:"oldest"`
	}
	if err := s.db.GetContext(ctx, &r, `SELECT count(*) AS n, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'`); err != nil {
		return 0, 0, pg.Translate(err)
	}
	if r.Oldest.Valid {
		oldest = max(s.Now().Sub(r.Oldest.Time), 0)
	}
	return r.N, oldest, nil
}
