package invitedb

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sendtime"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/statsdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
)

// inviteStatements are the statements every send runs: its plan, the
// row lock and write of each transition, the claim's reads and throttle,
// its content. Prepared once like the accept statements, each is one
// round trip without planning (an unprepared query with arguments is two,
// planned each time).
type inviteStatements struct {
	plan, reminderPlan, lockInvite, lockReminder, writeInvite, writeReminder,
	claimRead, recentlyInvited, content *pg.Stmt
	// The statements of the funnel's counts and of the suppression list,
	// prepared with these.
	stats        *statsdb.Store
	suppressions *suppressiondb.Store
}

func newInviteStatements(db *sqlx.DB, stats *statsdb.Store, suppressions *suppressiondb.Store) *inviteStatements {
	return &inviteStatements{stats: stats, suppressions: suppressions,
		plan:            pg.NewStmt(db, planSQL),
		reminderPlan:    pg.NewStmt(db, reminderPlanSQL),
		lockInvite:      pg.NewStmt(db, lockInviteSQL),
		lockReminder:    pg.NewStmt(db, lockReminderSQL),
		writeInvite:     pg.NewStmt(db, writeInviteSQL),
		writeReminder:   pg.NewStmt(db, writeReminderSQL),
		claimRead:       pg.NewStmt(db, claimReadSQL),
		recentlyInvited: pg.NewStmt(db, recentlyInvitedSQL),
		content:         pg.NewStmt(db, contentSQL),
	}
}

// prepareForTx makes the statements that run inside transactions ready
// before one begins (see pg.Stmt.On).
func (st *inviteStatements) prepareForTx(ctx context.Context) error {
	if err := pg.PrepareAll(ctx, st.lockInvite, st.lockReminder, st.writeInvite, st.writeReminder,
		st.claimRead, st.recentlyInvited); err != nil {
		return err
	}
	if err := st.suppressions.Prepare(ctx); err != nil {
		return err
	}
	return st.stats.Prepare(ctx)
}

// LoadInviteState returns an event's invite state.
func (s *Store) LoadInviteState(ctx context.Context, eventID string) (invite.State, error) {
	var st invite.State
	err := s.db.GetContext(ctx, &st, `SELECT `+inviteStateColumns+` FROM events WHERE id = $1`, eventID)
	return st, pg.Translate(err)
}

const planSQL = `
	SELECT e.invite_status, et.active AS event_type_active, s.active AS setting_active,
	       e.received_at, e.transaction_date,
	       COALESCE(to_char(e.estimated_delivery_date, 'YYYY-MM-DD'), '') AS delivery_date,
	       e.delay, e.delay_from, e.send_window
	FROM events e
	JOIN event_types et ON et.id = e.event_type_id
	JOIN invite_settings s ON s.id = e.invite_setting_id
	WHERE e.id = $1`

// reminderPlanSQL reads what a reminder's plan is made from
// (sendtime.ReminderPlan): the invite's send and the setting's reminder
// delay as it is now.
const reminderPlanSQL = `
	SELECT COALESCE(e.reminder_status, '') AS reminder_status, et.active AS event_type_active, s.active AS setting_active,
	       e.invite_status, e.sent_at, COALESCE(s.reminder_delay, '') AS reminder_delay, e.send_window
	FROM events e
	JOIN event_types et ON et.id = e.event_type_id
	JOIN invite_settings s ON s.id = e.invite_setting_id
	WHERE e.id = $1`

// LoadPlan returns what scheduling the send of kind k starts from (see
// invite.Plan): for an invite the event's schedule copy; for a reminder
// sendtime.ReminderPlan, with Plan.Delay "" when none is due; and whether
// the event type and the invite setting are active now.
func (s *Store) LoadPlan(ctx context.Context, k invite.Kind, eventID string) (invite.Plan, error) {
	if k == invite.KindReminder {
		return s.loadReminderPlan(ctx, eventID)
	}
	var r struct {
		Status          invite.Status `db:"invite_status"`
		EventTypeActive bool          `db:"event_type_active"`
		SettingActive   bool          `db:"setting_active"`
		ReceivedAt      time.Time     `db:"received_at"`
		TransactionDate time.Time     `db:"transaction_date"`
		DeliveryDate    string        `db:"delivery_date"`
		Delay           string        `db:"delay"`
		DelayFrom       string        `db:"delay_from"`
		SendWindow      []byte        `db:"send_window"`
	}
	if err := s.invite.plan.Get(ctx, nil, &r, eventID); err != nil {
		return invite.Plan{}, fmt.Errorf("load %s plan: %w", k, pg.Translate(err))
	}
	window, err := decodeSendWindow(eventID, r.SendWindow)
	if err != nil {
		return invite.Plan{}, err
	}
	return invite.Plan{Status: r.Status, EventTypeActive: r.EventTypeActive, SettingActive: r.SettingActive,
		Plan: sendtime.Plan{ReceivedAt: r.ReceivedAt.UTC(), TransactionDate: r.TransactionDate.UTC(),
			DeliveryDate: r.DeliveryDate, Delay: r.Delay, DelayFrom: r.DelayFrom, SendWindow: window}}, nil
}

func (s *Store) loadReminderPlan(ctx context.Context, eventID string) (invite.Plan, error) {
	var r struct {
		Status          invite.Status `db:"reminder_status"`
		EventTypeActive bool          `db:"event_type_active"`
		SettingActive   bool          `db:"setting_active"`
		InviteStatus    invite.Status `db:"invite_status"`
		SentAt          *time.Time    `db:"sent_at"`
		ReminderDelay   string        `db:"reminder_delay"`
		SendWindow      []byte        `db:"send_window"`
	}
	if err := s.invite.reminderPlan.Get(ctx, nil, &r, eventID); err != nil {
		return invite.Plan{}, fmt.Errorf("load %s plan: %w", invite.KindReminder, pg.Translate(err))
	}
	p := invite.Plan{Status: r.Status, EventTypeActive: r.EventTypeActive, SettingActive: r.SettingActive}
	if r.InviteStatus != invite.Sent {
		return p, nil // a reminder follows only an invite whose status is sent
	}
	window, err := decodeSendWindow(eventID, r.SendWindow)
	if err != nil {
		return invite.Plan{}, err
	}
	p.Plan, _ = sendtime.ReminderPlan(r.SentAt, r.ReminderDelay, window)
	return p, nil
}

// decodeSendWindow reads an event's copy of its setting's send window;
// nil when it has none.
func decodeSendWindow(eventID string, raw []byte) (*sendtime.SendWindow, error) {
	if raw == nil {
		return nil, nil
	}
	w := new(sendtime.SendWindow)
	if err := json.Unmarshal(raw, w); err != nil {
		return nil, fmt.Errorf("event %s: decode send_window: %w", eventID, err)
	}
	return w, nil
}

// InviteContent is what rendering and addressing an invite needs: the
// customer's data, kept in PostgreSQL only (never in Temporal).
type InviteContent struct {
	EventID   string
	AccountID string
	Email     string
	FirstName string
	LastName  string
	Mobile    string
	Locale    string // defaultLocale as sent, e.g. "de_AT"; may be ""
	Products  []InviteProduct
	Account   accountdb.Account // the shop: its name and branding
	// SentAt is when the invite was last sent; nil while it never was.
	SentAt *time.Time
}

const contentSQL = `
	SELECT e.account_id, e.customer_email, e.payload, e.sent_at,
	       a.name, COALESCE(a.display_name, '') AS display_name, COALESCE(a.logo_url, '') AS logo_url,
	       COALESCE(a.brand_color, '') AS brand_color, COALESCE(a.reply_to, '') AS reply_to, a.created_at
	FROM events e JOIN accounts a ON a.id = e.account_id
	WHERE e.id = $1`

// InviteProduct is a product as an invite shows it.
type InviteProduct struct {
	Name     string `json:"name"`
	URL      string `json:"url"`
	ImageURL string `json:"imageUrl"`
}

// LoadInviteContent reads the event's customer, products and locale.
func (s *Store) LoadInviteContent(ctx context.Context, eventID string) (InviteContent, error) {
	var r struct {
		AccountID string     `db:"account_id"`
		Email     string     `db:"customer_email"`
		Payload   []byte     `db:"payload"`
		SentAt    *time.Time `db:"sent_at"`
		accountdb.Account
	}
	if err := s.invite.content.Get(ctx, nil, &r, eventID); err != nil {
		return InviteContent{}, fmt.Errorf("load invite content: %w", pg.Translate(err))
	}
	var p struct {
		Customer struct {
			FirstName string `json:"firstName"`
			LastName  string `json:"lastName"`
			Mobile    string `json:"mobile"`
		} `json:"customer"`
		DefaultLocale string          `json:"defaultLocale"`
		Products      []InviteProduct `json:"products"`
	}
	if err := json.Unmarshal(r.Payload, &p); err != nil {
		return InviteContent{}, fmt.Errorf("event %s: decode payload: %w", eventID, err)
	}
	r.Account.ID = r.AccountID
	return InviteContent{EventID: eventID, AccountID: r.AccountID, Email: r.Email,
		FirstName: p.Customer.FirstName, LastName: p.Customer.LastName, Mobile: p.Customer.Mobile,
		Locale: p.DefaultLocale, Products: p.Products, Account: r.Account, SentAt: r.SentAt}, nil
}

// MarkOpened records that the event's feedback page was opened: the
// first time only (opened reports whether this was it). A review counts
// as an opening too (reviewdb.Store.SaveReview). Nothing but the time is
// kept.
func (s *Store) MarkOpened(ctx context.Context, eventID string) (opened bool, err error) {
	if err := s.invite.prepareForTx(ctx); err != nil {
		return false, fmt.Errorf("mark opened: %w", pg.Translate(err))
	}
	err = pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		opened, err = s.markOpened(ctx, tx, eventID)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("mark opened: %w", err)
	}
	return opened, nil
}

// markOpened is MarkOpened in tx, which must write no counts after it.
func (s *Store) markOpened(ctx context.Context, tx *sqlx.Tx, eventID string) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE events SET opened_at = $2 WHERE id = $1 AND opened_at IS NULL`, eventID, s.Now())
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	return true, s.stats.CountChangeTx(ctx, tx, eventID, func(before, _ *stats.Facts) { before.Opened = false })
}
