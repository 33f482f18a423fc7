// Package invitedb keeps the invite of each event and its reminder: the
// invite and reminder state carried in the event's row (events), the
// attempts of each send (send_attempts), and the reads of an event with
// its invite that the API, the console, the reconciler and the operator
// make. It is the imperative shell around package invite's rules: each
// step locks the event's row, reads the facts, calls the rule and writes
// its outcome — the state, the attempt, a new run ordered through the
// outbox, a suppression, the webhook deliveries and the funnel's counts —
// in one transaction.
package invitedb

import (
	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/statsdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// Store is the repository of invites, reminders and their attempts.
type Store struct {
	*pg.DB
	db *sqlx.DB
	// stats counts an invite's moves, and the first opening of its
	// feedback page, in the funnel, last in their transaction.
	stats *statsdb.Store
	// accounts counts a claimed send against the account's send quotas.
	accounts *accountdb.Store
	// suppressions is looked at, under its (account, address) lock, by a
	// claim, and written by a send refused for good.
	suppressions *suppressiondb.Store
	// webhooks writes the invite.* and reminder.* deliveries of each
	// change.
	webhooks *webhookdb.Store
	// The statements every send runs are prepared once (see pg.Stmt).
	invite *inviteStatements
}

// New is the repository on db: stats counts the invites in the funnel,
// accounts holds the send quotas, suppressions the suppression list, and
// webhooks writes the deliveries of each change.
func New(db *pg.DB, stats *statsdb.Store, accounts *accountdb.Store, suppressions *suppressiondb.Store,
	webhooks *webhookdb.Store) *Store {
	return &Store{DB: db, db: db.Pool(), stats: stats, accounts: accounts, suppressions: suppressions, webhooks: webhooks,
		invite: newInviteStatements(db.Pool(), stats, suppressions)}
}
