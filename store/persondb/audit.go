package persondb

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/pg"
)

// AuditPrefix is the prefix of an audit entry's id.
const AuditPrefix = "aud"

// The changes the trail records, every one in the transaction of the
// change itself: this package's own, and those of the other aggregates,
// which they record with RecordChange. The trail holds ids and words of
// this list only, never a customer's data: a suppression's change is
// recorded without its address, which its own history keeps.
const (
	AuditInviteCancelled        = "invite.cancelled"
	AuditInviteRetried          = "invite.retried"
	AuditReviewReplied          = "review.replied"
	AuditReviewReplyDeleted     = "review.reply_deleted"
	AuditReviewReported         = "review.reported"
	AuditReviewModerated        = "review.moderated"
	AuditSuppressionAdded       = "suppression.added"
	AuditSuppressionLifted      = "suppression.lifted"
	AuditTemplateSaved          = "template.saved"
	AuditTemplateDeleted        = "template.deleted"
	AuditWebhookEndpointAdded   = "webhook_endpoint.created"
	AuditWebhookEndpointChanged = "webhook_endpoint.updated"
	AuditWebhookEndpointDeleted = "webhook_endpoint.deleted"
	AuditWebhookSecretRotated   = "webhook_endpoint.secret_rotated"
	AuditWebhookRetried         = "webhook_delivery.retried"
	AuditWebhooksReplayed       = "webhook_deliveries.replayed"
	AuditInviteSettingChanged   = "invite_setting.updated"
	AuditEventTypeCreated       = "event_type.created"
	AuditEventTypeChanged       = "event_type.updated"
	AuditBrandingChanged        = "account.branding_updated"
	AuditClientCreated          = "client.created"
	AuditClientDeleted          = "client.deleted"

	AuditPersonCreated   = "person.created"
	AuditRoleChanged     = "person.role_changed"
	AuditLanguageChanged = "person.language_changed"
	AuditPersonDisabled  = "person.disabled"
	AuditSignedOut       = "person.signed_out" // every session of a person ended
	AuditPersonLinked    = "person.linked"
	AuditPersonErased    = "person.erased"
	AuditLinkSent        = "sign_in.link_sent"
	AuditSessionStarted  = "session.started"
	AuditSessionEnded    = "session.ended"
)

// AuditActions lists every action the trail records: the API's
// description names each one.
func AuditActions() []string {
	return []string{
		AuditInviteCancelled, AuditInviteRetried, AuditReviewReplied, AuditReviewReplyDeleted,
		AuditReviewReported, AuditReviewModerated, AuditSuppressionAdded, AuditSuppressionLifted,
		AuditTemplateSaved, AuditTemplateDeleted, AuditWebhookEndpointAdded, AuditWebhookEndpointChanged,
		AuditWebhookEndpointDeleted, AuditWebhookSecretRotated, AuditWebhookRetried,
		AuditWebhooksReplayed, AuditInviteSettingChanged, AuditEventTypeCreated, AuditEventTypeChanged,
		AuditBrandingChanged, AuditClientCreated, AuditClientDeleted, AuditPersonCreated, AuditRoleChanged, AuditLanguageChanged, AuditPersonDisabled, AuditSignedOut,
		AuditPersonLinked, AuditPersonErased, AuditLinkSent, AuditSessionStarted, AuditSessionEnded,
	}
}

// Entry is one line of the audit trail.
type Entry struct {
	ID        string       `db:"id"`
	AccountID string       `db:"account_id"`
	Actor     people.Actor `db:"actor"`
	Action    string       `db:"action"`
	// Target is the id of what changed ("" when the action names it).
	Target string `db:"target"`
	// Detail says more, in ids and words of the vocabulary only: never a
	// customer's data, nor an address.
	Detail    map[string]string `db:"-"`
	CreatedAt time.Time         `db:"created_at"`
	// ActorEmail is the address of the person who acted, as it is now:
	// "" for an API client, the operator, or a person since erased.
	ActorEmail string `db:"actor_email"`
}

type entryRow struct {
	Entry
	DetailJSON []byte `db:"detail"`
}

// RecordTx writes e (its ID and time are made here) in the transaction of
// the change it records.
func RecordTx(ctx context.Context, tx *sqlx.Tx, now time.Time, e Entry) error {
	detail, err := json.Marshal(e.Detail)
	if err != nil {
		return fmt.Errorf("audit detail: %w", err)
	}
	if e.Detail == nil {
		detail = []byte("{}")
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO audit_trail (id, account_id, actor, action, target, detail, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, pg.NewID(AuditPrefix), e.AccountID, string(e.Actor), e.Action, e.Target, detail, now)
	if err != nil {
		return fmt.Errorf("record %s: %w", e.Action, err)
	}
	return nil
}

// RecordChange records a change of another aggregate, made by the actor of
// ctx (people.ActorOf: the API's client, the console's person, else the
// admin CLI), in the transaction of the change.
func RecordChange(ctx context.Context, tx *sqlx.Tx, now time.Time, accountID, action, target string, detail map[string]string) error {
	return RecordTx(ctx, tx, now, Entry{AccountID: accountID, Actor: people.ActorOf(ctx), Action: action, Target: target, Detail: detail})
}

// AuditFilter narrows Audit; zero values do not filter.
type AuditFilter struct {
	From, To time.Time // created at From or after, before To
	Actor    people.Actor
}

// Audit lists an account's trail, newest first, a page at a time.
func (s *Store) Audit(ctx context.Context, accountID string, f AuditFilter, p pg.Page) ([]Entry, *pg.Cursor, error) {
	w := pg.NewWhere(accountID)
	if !f.From.IsZero() {
		w.Add("created_at >= ", f.From)
	}
	if !f.To.IsZero() {
		w.Add("created_at < ", f.To)
	}
	if f.Actor != "" {
		w.Add("actor = ", string(f.Actor))
	}
	var rows []entryRow
	next, err := pg.SelectPage(ctx, s.db, &rows, w, `SELECT id, account_id, actor, action, target, detail, created_at, actor_email FROM (
		SELECT a.*, COALESCE(p.email, '') AS actor_email FROM audit_trail a
		LEFT JOIN people p ON p.id = a.actor AND p.account_id = a.account_id) t`, p,
		func(r entryRow) pg.Cursor { return pg.Cursor{CreatedAt: r.CreatedAt, ID: r.ID} })
	if err != nil {
		return nil, nil, fmt.Errorf("list audit trail: %w", err)
	}
	out := make([]Entry, len(rows))
	for i, r := range rows {
		out[i] = r.Entry
		if err := json.Unmarshal(r.DetailJSON, &out[i].Detail); err != nil {
			return nil, nil, fmt.Errorf("audit entry %s: %w", r.ID, err)
		}
	}
	return out, next, nil
}
