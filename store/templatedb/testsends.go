package templatedb

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
)

// TestSendsPerDay is how many test sends of its templates an account may
// make per UTC day. Each also counts against its daily send quota.
const TestSendsPerDay = 20

// QuotaTestSends names the daily limit of test sends in a QuotaError.
const QuotaTestSends = "template_test_sends"

// Test send statuses.
const (
	TestSendPending = "pending"
	TestSendSent    = "sent"
	TestSendFailed  = "failed"
)

// TestSend is one test of a template, sent to the shop's own address or
// number. Address is cleared once the test has ended.
type TestSend struct {
	ID              string     `db:"id"`
	AccountID       string     `db:"account_id"`
	EventTypeID     string     `db:"event_type_id"`
	Kind            string     `db:"kind"` // a templates.Kind
	Locale          string     `db:"locale"`
	Address         string     `db:"address"`
	MaskedAddress   string     `db:"masked_address"`
	Status          string     `db:"status"`
	TemplateSource  string     `db:"template_source"`
	TemplateVersion int        `db:"template_version"`
	Error           string     `db:"error"`
	CreatedBy       string     `db:"created_by"`
	CreatedAt       time.Time  `db:"created_at"`
	FinishedAt      *time.Time `db:"finished_at"`
}

const testSendColumns = `id, account_id, COALESCE(event_type_id, '') AS event_type_id, kind, locale, COALESCE(address, '') AS address,
	masked_address, status, COALESCE(template_source, '') AS template_source, COALESCE(template_version, 0) AS template_version,
	COALESCE(error, '') AS error, created_by, created_at, finished_at`

// CreateTestSend records a pending test send, which goes out by medium
// (by SMS for an SMS kind, else by email), after checking its address as
// a send's claim does — under the address lock, an address on the
// account's suppression list is a *suppressiondb.SuppressedError — and
// counting it: against the account's TestSendsPerDay, against the daily
// cap of sends to the address (which the account's invites count too),
// and against its daily send quota, in one transaction with the account
// locked, so concurrent requests cannot both take the last one. A used-up
// limit is a *accountdb.QuotaError (QuotaTestSends, QuotaRecipient or
// QuotaDailySends). An event type of another account is ErrNotFound.
func (s *Store) CreateTestSend(ctx context.Context, t TestSend, medium invite.Medium) (TestSend, error) {
	t.ID, t.Status, t.CreatedAt = pg.NewID("tts"), TestSendPending, s.Now()
	listed := suppressiondb.ListedAddress(medium, t.Address)
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := accountdb.LockTx(ctx, tx, t.AccountID); err != nil {
			return err
		}
		if err := checkEventType(ctx, tx, t.AccountID, t.EventTypeID); err != nil {
			return err
		}
		if err := suppressiondb.RefuseTx(ctx, tx, t.AccountID, listed); err != nil {
			return err
		}
		day := t.CreatedAt.Truncate(24 * time.Hour)
		var today int
		if err := tx.GetContext(ctx, &today, `SELECT count(*) FROM template_test_sends WHERE account_id = $1 AND created_at >= $2`,
			t.AccountID, day); err != nil {
			return fmt.Errorf("count test sends: %w", err)
		}
		if today >= TestSendsPerDay {
			return s.accounts.Refuse(QuotaTestSends, TestSendsPerDay)
		}
		address := accountdb.SendAddress(medium, listed, listed)
		refused, err := s.accounts.CountSendTx(ctx, tx, t.AccountID, address, accountdb.SendInvite)
		if err != nil {
			return err
		}
		if refused != nil {
			return refused
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO template_test_sends
			(id, account_id, event_type_id, kind, locale, address, masked_address, status, created_by, created_at, next_start_at)
			VALUES ($1, $2, NULLIF($3, ''), $4, $5, $6, $7, $8, $9, $10, $10)`,
			t.ID, t.AccountID, t.EventTypeID, t.Kind, t.Locale, t.Address, t.MaskedAddress, t.Status, t.CreatedBy, t.CreatedAt)
		return err
	})
	if err != nil {
		return TestSend{}, fmt.Errorf("create test send: %w", err)
	}
	return t, nil
}

// GetTestSend returns a test send of the account.
func (s *Store) GetTestSend(ctx context.Context, accountID, id string) (TestSend, error) {
	var t TestSend
	err := s.db.GetContext(ctx, &t, `SELECT `+testSendColumns+` FROM template_test_sends WHERE id = $1 AND account_id = $2`, id, accountID)
	return t, pg.Translate(err)
}

// LoadTestSend returns a test send by its ID alone, for the worker.
func (s *Store) LoadTestSend(ctx context.Context, id string) (TestSend, error) {
	var t TestSend
	err := s.db.GetContext(ctx, &t, `SELECT `+testSendColumns+` FROM template_test_sends WHERE id = $1`, id)
	return t, pg.Translate(err)
}

// FinishTestSend records how a pending test send ended — sent, or failed
// with errText — and the template it was rendered from (its source, a
// templates.Source, and version, 0 for the built-in one), and forgets the
// address. A test send that has ended already is returned unchanged.
func (s *Store) FinishTestSend(ctx context.Context, id, templateSource string, templateVersion int, errText string) (TestSend, error) {
	status := TestSendSent
	if errText != "" {
		status = TestSendFailed
	}
	var t TestSend
	err := s.db.GetContext(ctx, &t, `UPDATE template_test_sends SET status = $2, template_source = NULLIF($3, ''),
		template_version = NULLIF($4, 0), error = NULLIF($5, ''), address = NULL, finished_at = $6
		WHERE id = $1 AND status = 'pending' RETURNING `+testSendColumns,
		id, status, templateSource, templateVersion, pg.Truncate(errText, pg.MaxDetail), s.Now())
	if err != nil {
		if t, gerr := s.LoadTestSend(ctx, id); gerr == nil {
			return t, nil // it had ended
		}
		return TestSend{}, fmt.Errorf("finish test send: %w", pg.Translate(err))
	}
	return t, nil
}

// TestSendStart is a test send whose workflow has not been started yet.
type TestSendStart struct {
	ID            string `db:"id"`
	AccountID     string `db:"account_id"`
	Kind          string `db:"kind"`
	StartAttempts int    `db:"start_attempts"`
}

// ClaimTestSendStarts locks up to limit test sends whose workflow is due
// to be started, skipping rows other starters hold. The caller must
// Finish or Release the batch.
func (s *Store) ClaimTestSendStarts(ctx context.Context, limit int) (*pg.StartBatch[TestSendStart], error) {
	return pg.ClaimStarts[TestSendStart](ctx, s.DB, "template_test_sends", "id, account_id, kind, start_attempts", "test send", limit)
}
