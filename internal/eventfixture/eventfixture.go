// Package eventfixture inserts the rows an invite needs — account, event
// type, channel, invite setting, event — straight into a test database,
// so tests of the invite machinery do not depend on the API's accept path.
package eventfixture

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
)

// Setting describes the account's one invite setting.
type Setting struct {
	Inactive          bool
	EventTypeInactive bool
	Medium            invite.Medium // default Email
	MinDays           int           // minDaysBetweenInvites; 0: no throttle
	Delay             string        // default "PT0S"
	DelayFrom         string        // default "event"
	SendWindow        string        // JSON, e.g. {"start":"09:00","end":"17:00","timeZone":"UTC"}; "": none
}

// Account is an account with one event type, channel and setting.
type Account struct {
	db                                           *sqlx.DB
	AccountID, EventTypeID, ChannelID, SettingID string
}

// Product is a product of an event's payload.
type Product struct {
	Name     string `json:"name"`
	SKU      string `json:"sku,omitempty"`
	GTIN     string `json:"gtin,omitempty"`
	MPN      string `json:"mpn,omitempty"`
	Brand    string `json:"brand,omitempty"`
	URL      string `json:"url,omitempty"`
	ImageURL string `json:"imageUrl,omitempty"`
}

// Event describes one event; zero values take plausible defaults.
type Event struct {
	Email             string // default "jane.doe@example.com"; NoEmail for none
	FirstName         string
	LastName          string
	Mobile            string
	Locale            string
	CustomerReference string
	Products          []Product
	Status            invite.Status // default Pending
	SentAt            time.Time     // with Status "sent"
	ReceivedAt        time.Time     // default now
	TransactionDate   time.Time     // default ReceivedAt
	DeliveryDate      string        // YYYY-MM-DD
}

// NoEmail asks for an event whose customer email is empty.
const NoEmail = "-"

// NewAccount inserts an account with one event type, channel and setting.
func NewAccount(tb testing.TB, db *sqlx.DB, s Setting) *Account {
	tb.Helper()
	if s.Medium == "" {
		s.Medium = invite.Email
	}
	if s.Delay == "" {
		s.Delay = "PT0S"
	}
	if s.DelayFrom == "" {
		s.DelayFrom = "event"
	}
	var window any
	if s.SendWindow != "" {
		window = s.SendWindow
	}
	a := &Account{db: db, AccountID: store.NewID("acc"), EventTypeID: store.NewID("ety"),
		ChannelID: store.NewID("chl"), SettingID: store.NewID("ist")}
	now := time.Now().UTC()
	exec(tb, db, `INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)`, a.AccountID, "fixture "+a.AccountID, now)
	exec(tb, db, `INSERT INTO event_types (id, account_id, name, active, created_at, updated_at) VALUES ($1, $2, 'order', $3, $4, $4)`,
		a.EventTypeID, a.AccountID, !s.EventTypeInactive, now)
	exec(tb, db, `INSERT INTO channels (id, account_id, name, type, created_at, updated_at) VALUES ($1, $2, 'Default', 'native', $3, $3)`,
		a.ChannelID, a.AccountID, now)
	exec(tb, db, `INSERT INTO invite_settings (id, account_id, channel_id, event_type_id, active, medium, delay, delay_from,
		send_window, min_days_between_invites, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
		a.SettingID, a.AccountID, a.ChannelID, a.EventTypeID, !s.Inactive, s.Medium, s.Delay, s.DelayFrom, window, s.MinDays, now)
	return a
}

// Event inserts an event of the account and returns its ID.
func (a *Account) Event(tb testing.TB, e Event) string {
	tb.Helper()
	switch e.Email {
	case "":
		e.Email = "jane.doe@example.com"
	case NoEmail:
		e.Email = ""
	}
	if e.Status == "" {
		e.Status = invite.Pending
	}
	if e.ReceivedAt.IsZero() {
		e.ReceivedAt = time.Now().UTC()
	}
	if e.TransactionDate.IsZero() {
		e.TransactionDate = e.ReceivedAt
	}
	id := store.NewTimeID("evt", e.ReceivedAt)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := store.EnsurePartitions(ctx, a.db, e.ReceivedAt, e.ReceivedAt); err != nil {
		tb.Fatal(err)
	}
	customer := map[string]string{"email": e.Email}
	for k, v := range map[string]string{"firstName": e.FirstName, "lastName": e.LastName, "mobile": e.Mobile, "reference": e.CustomerReference} {
		if v != "" {
			customer[k] = v
		}
	}
	payload := map[string]any{
		"customer":      customer,
		"type":          "order",
		"channel":       map[string]string{"id": a.ChannelID},
		"transaction":   map[string]string{"reference": "T-" + id[len(id)-8:], "date": e.TransactionDate.Format(time.RFC3339Nano)},
		"system":        "fixture",
		"systemVersion": "1",
		"products":      e.Products,
	}
	if e.Locale != "" {
		payload["defaultLocale"] = e.Locale
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		tb.Fatal(err)
	}
	var delivery, sentAt, ref any
	if e.DeliveryDate != "" {
		delivery = e.DeliveryDate
	}
	if !e.SentAt.IsZero() {
		sentAt = e.SentAt
	}
	if e.CustomerReference != "" {
		ref = e.CustomerReference
	}
	exec(tb, a.db, `INSERT INTO events (id, account_id, event_type_id, channel_id, received_at, type, customer_email,
		customer_reference, transaction_reference, transaction_date, estimated_delivery_date, payload,
		invite_setting_id, delay, delay_from, send_window, invite_status, invite_medium, sent_at, updated_at)
		SELECT $1, $2, $3, $4, $5, 'order', $6, $7, $8, $9, $10, $11, s.id, s.delay, s.delay_from, s.send_window,
		       $12, s.medium, $13, $5
		FROM invite_settings s WHERE s.id = $14`,
		id, a.AccountID, a.EventTypeID, a.ChannelID, e.ReceivedAt, e.Email, ref, "T-"+id[len(id)-8:], e.TransactionDate,
		delivery, raw, e.Status, sentAt, a.SettingID)
	return id
}

// Set changes columns of the account's setting, e.g. Set(tb, "active", false).
func (a *Account) Set(tb testing.TB, column string, value any) {
	tb.Helper()
	switch column {
	case "active", "medium", "min_days_between_invites", "reminder_delay":
	default:
		tb.Fatalf("eventfixture: cannot set %q", column)
	}
	exec(tb, a.db, `UPDATE invite_settings SET `+column+` = $2 WHERE id = $1`, a.SettingID, value)
}

func exec(tb testing.TB, db *sqlx.DB, q string, args ...any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, q, args...); err != nil {
		tb.Fatalf("eventfixture: %v\n%s", err, q)
	}
}

// Tenant is an account made through the store, with its default channel
// and one active event type, for tests of the accept path and of the
// lists of what was accepted.
type Tenant struct {
	St        *store.Store
	AccountID string
	ChannelID string
	TypeName  string
}

// NewTenant makes an account named after the test, with the event type
// "checkout".
func NewTenant(t *testing.T, st *store.Store) Tenant {
	t.Helper()
	ctx := context.Background()
	acc, ch, err := st.Accounts.CreateAccount(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Accounts.CreateEventType(ctx, acc.ID, "checkout", true); err != nil {
		t.Fatal(err)
	}
	return Tenant{St: st, AccountID: acc.ID, ChannelID: ch.ID, TypeName: "checkout"}
}

// Event is an event of the tenant's event type for the customer email.
func (tn Tenant) Event(email string) eventdb.NewEvent {
	return eventdb.NewEvent{
		AccountID: tn.AccountID, Type: tn.TypeName, ChannelID: tn.ChannelID,
		CustomerEmail: email, TransactionReference: "order-1",
		TransactionDate: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
		Payload:         json.RawMessage(fmt.Sprintf(`{"customer":{"email":%q}}`, email)),
	}
}

// SentText makes an event of a whose SMS invite to number the store
// claimed and recorded as sent, and returns its ID.
func (a *Account) SentText(t *testing.T, st *store.Store, number string) string {
	t.Helper()
	id := a.Event(t, Event{Status: invite.Scheduled, Mobile: number})
	c, err := st.Invites.ClaimSend(t.Context(), invite.KindInvite, id, invitedb.ClaimOptions{SMSEnabled: true, Mobile: number})
	if err != nil || !c.Send {
		t.Fatalf("claim of the text to %s: %v (%s/%s)", number, err, c.State.Status, c.State.Reason)
	}
	if _, err := st.Invites.FinishSend(t.Context(), invite.KindInvite, id, invite.SendResult{SentAt: st.Now()}); err != nil {
		t.Fatal(err)
	}
	return id
}
