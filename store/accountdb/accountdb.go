// Package accountdb keeps an account and what it sets up: the account
// and its branding (accounts), its channels, event types and the invite
// setting of each (channel, event type) pair, its quotas (account_quotas)
// and the daily counters that hold them (account_daily_sends,
// recipient_daily_sends, account_daily_events). Every creation of a
// channel, an event type or a webhook endpoint, and every counted send,
// takes the account's row lock (LockTx) and its quota (CheckResourceQuotaTx,
// CountSendTx) inside the writer's transaction; accepted events are
// counted by the statement that stores them (EventQuotaCTEs).
package accountdb

import (
	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/pg"
)

// Store is the repository of accounts and what they set up.
type Store struct {
	*pg.DB
	db *sqlx.DB
	// DefaultInviteDelay is the delay of automatically created invite
	// settings (P7D; PT10S in `touchpoint dev`).
	DefaultInviteDelay string
	// Quotas are the limits of an account without its own (set with
	// SetAccountQuotas). The zero value limits nothing: `touchpoint`
	// sets the configured defaults (TOUCHPOINT_DAILY_SEND_QUOTA, …).
	Quotas Quotas
	// OnQuotaExceeded, when set, is told of every refusal by a quota, by
	// kind (QuotaDailySends, QuotaRecipient, QuotaChannels, …): the
	// process's metrics count them.
	OnQuotaExceeded func(kind string)
	// exhausted are the accounts found without room in their daily event
	// quota (eventquota.go).
	exhausted exhausted
}

// New is the repository on db; defaultInviteDelay "" means P7D.
func New(db *pg.DB, defaultInviteDelay string) *Store {
	return &Store{DB: db, db: db.Pool(), DefaultInviteDelay: defaultInviteDelay}
}
