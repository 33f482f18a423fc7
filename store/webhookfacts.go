package store

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// The facts of the changes of the suppression list that endpoints may
// subscribe to, written with the change (webhookdb.EmitTx); those of
// reviews are package reviewdb's.

// emitSuppressionWebhook reports a new entry of the suppression list; when
// the entry came from an event (an unsubscribe link, a bounce), its ID and
// customer reference let the shop find the customer.
func (s *Store) emitSuppressionWebhook(ctx context.Context, tx *sqlx.Tx, sup Suppression) error {
	f := webhookdb.SuppressionFact{Medium: sup.Medium, Reason: sup.Reason}
	subscribed, err := false, error(nil)
	if sup.EventID == nil {
		subscribed, err = webhookdb.SubscribedTx(ctx, tx, sup.AccountID, webhookdb.SuppressionCreated)
	} else {
		f.EventID = *sup.EventID
		f.CustomerReference, subscribed, err = s.Webhooks.ReferenceTx(ctx, tx, sup.AccountID, *sup.EventID, webhookdb.SuppressionCreated)
	}
	if err != nil || !subscribed {
		return err
	}
	return s.Webhooks.EmitTx(ctx, tx, sup.AccountID, webhookdb.SuppressionCreated, sup.CreatedAt, f)
}

// emitErasureCancel reports the invite of eventID moving from status from to
// cancelled by an erasure, after the transaction has written it.
func (s *Store) emitErasureCancel(ctx context.Context, tx *sqlx.Tx, eventID string, from invite.Status) error {
	return s.Webhooks.EmitSendTx(ctx, tx, eventID, invite.Change{Kind: invite.KindInvite,
		Event: invite.EventOf(invite.KindInvite, from, invite.Cancelled)})
}
