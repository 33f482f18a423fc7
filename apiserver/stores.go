package apiserver

import (
	"context"

	"github.com/touchpoint/touchpoint/account/accountapi"
	"github.com/touchpoint/touchpoint/contact/suppressionapi"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/publication/publicapi"
	"github.com/touchpoint/touchpoint/review/reviewapi"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/stats/statsapi"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reportdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/templates/templateapi"
	"github.com/touchpoint/touchpoint/webhook/webhookapi"
)

// AccountStore is what the API reads and writes of an account and what
// it sets up (accountapi.Store): branding, quotas, channels, event types,
// invite settings.
type AccountStore interface {
	accountapi.Store
}

// StatsStore is what the API reads of the funnel's counts
// (statsapi.Store).
type StatsStore interface {
	statsapi.Store
}

// WebhookStore is what the API reads and changes of an account's webhook
// endpoints and their deliveries (webhookapi.Store).
type WebhookStore interface {
	webhookapi.Store
}

// ReviewStore is what the API's routes read and change of an account's
// reviews (reviewapi.Store), what the public endpoints read
// (publicapi.Store), and what the customer pages store of them.
type ReviewStore interface {
	reviewapi.Store
	publicapi.Store
	ReviewOfEvent(ctx context.Context, eventID string) (reviewdb.Review, error)
	SaveReview(ctx context.Context, in reviewdb.ReviewInput) (reviewdb.Review, reviewdb.Saved, error)
}

// InviteStore is what the API reads and changes of an event and its
// invite, and what the customer pages and a template's preview read of
// it.
type InviteStore interface {
	ListEvents(ctx context.Context, accountID string, f invitedb.EventFilter, p store.Page) ([]invitedb.Event, *store.Cursor, error)
	Event(ctx context.Context, accountID, id string) (invitedb.Event, error)
	CancelInvite(ctx context.Context, accountID, id string) (invitedb.Event, error)
	RetryInvite(ctx context.Context, accountID, id string) (invitedb.Event, error)

	LoadInviteContent(ctx context.Context, eventID string) (invitedb.InviteContent, error)
	MarkOpened(ctx context.Context, eventID string) (bool, error)
}

// EventStore is what the API writes of accepted events.
type EventStore interface {
	AcceptEvent(ctx context.Context, e eventdb.NewEvent) (eventdb.Accepted, error)
	AcceptEvents(ctx context.Context, events []eventdb.NewEvent) ([]eventdb.Outcome, error)
}

// SuppressionStore is the suppression list as the API's routes and the
// customer pages' unsubscribe change it.
type SuppressionStore interface {
	suppressionapi.Store
	AddSuppression(ctx context.Context, accountID, address string, medium invite.Medium,
		reason invite.SuppressionReason, eventID string) (suppressiondb.Suppression, bool, error)
}

// TemplateStore is the shop's templates as the API's routes and the
// unsubscribe link of a test send read them.
type TemplateStore interface {
	templateapi.Store
	LoadTestSend(ctx context.Context, id string) (templatedb.TestSend, error)
}

// ReportStore is what the mail and SMS providers' reports change.
type ReportStore interface {
	sms.CallbackStore
	ApplyMailReports(ctx context.Context, nonce *reportdb.MailNonce, reports []reportdb.MailReport) ([]reportdb.MailResult, error)
}

// Eraser erases a customer's personal data across every table.
type Eraser interface {
	EraseCustomer(ctx context.Context, accountID string, key store.CustomerKey) (store.Erasure, error)
}

// pageStore is what the customer pages read and write (pages.Store),
// from the repositories that keep it.
type pageStore struct {
	AccountStore
	ReviewStore
	InviteStore
	suppressions SuppressionStore
	templates    TemplateStore
}

// AddSuppression is the suppression list's: an unsubscribe.
func (p pageStore) AddSuppression(ctx context.Context, accountID, address string, medium invite.Medium,
	reason invite.SuppressionReason, eventID string) (suppressiondb.Suppression, bool, error) {
	return p.suppressions.AddSuppression(ctx, accountID, address, medium, reason, eventID)
}

// LoadTestSend is the template tests': the unsubscribe link of a test.
func (p pageStore) LoadTestSend(ctx context.Context, id string) (templatedb.TestSend, error) {
	return p.templates.LoadTestSend(ctx, id)
}
