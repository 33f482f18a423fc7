// Package reportdb keeps what the mail and SMS providers report of the
// messages they took: every mail report once (mail_events), with the
// once-signed values of the requests that carried them
// (mail_event_nonces), the delivery status of each mail
// (mail_deliveries) and each SMS (sms_deliveries), and the customers'
// STOP messages. A report that changes a status writes its webhook, and
// one that refuses the address puts it on the suppression list, in the
// report's transaction.
package reportdb

import (
	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/statsdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// Store is the repository of the providers' reports.
type Store struct {
	*pg.DB
	db *sqlx.DB
	// stats counts a change of the invite mail's delivery status.
	stats *statsdb.Store
	// webhooks writes the webhook of a changed delivery status.
	webhooks *webhookdb.Store
	// suppressions takes the addresses that bounced, complained or
	// asked to stop.
	suppressions *suppressiondb.Store
}

// New is the repository on db: stats counts the changes of delivery
// status, webhooks reports them, suppressions takes the addresses the
// reports refuse.
func New(db *pg.DB, stats *statsdb.Store, webhooks *webhookdb.Store, suppressions *suppressiondb.Store) *Store {
	return &Store{DB: db, db: db.Pool(), stats: stats, webhooks: webhooks, suppressions: suppressions}
}
