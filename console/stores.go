package console

import (
	"context"
	"time"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/store/statsdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// ReviewStore is what the reviews' pages read and change, and what the
// overview reads of the reviews.
type ReviewStore interface {
	ReviewAggregate(ctx context.Context, accountID string) (review.Aggregate, error)
	ReviewAttention(ctx context.Context, accountID string, maxRating int) (reviewdb.ReviewAttention, error)
	ListReviews(ctx context.Context, accountID string, f reviewdb.ReviewFilter, p store.Page) ([]reviewdb.Review, *store.Cursor, error)
	Review(ctx context.Context, accountID, id string) (reviewdb.Review, error)
	ReviewHistory(ctx context.Context, accountID, id string, p store.Page) ([]reviewdb.HistoryEntry, *store.Cursor, error)
	SetReply(ctx context.Context, accountID, id, text, actor string) (reviewdb.Review, bool, error)
	DeleteReply(ctx context.Context, accountID, id, actor string) error
	ReportReview(ctx context.Context, accountID, id string, reason review.Reason, note, actor string) (reviewdb.Review, bool, error)
}

// InviteStore is what the invites' pages read and change of an event and
// its invite.
type InviteStore interface {
	ListEvents(ctx context.Context, accountID string, f invitedb.EventFilter, p store.Page) ([]invitedb.Event, *store.Cursor, error)
	Event(ctx context.Context, accountID, id string) (invitedb.Event, error)
	CancelInvite(ctx context.Context, accountID, id string) (invitedb.Event, error)
	RetryInvite(ctx context.Context, accountID, id string) (invitedb.Event, error)
}

// SuppressionStore is what the suppressions' page and an invite's page
// read and change of the suppression list.
type SuppressionStore interface {
	ListSuppressions(ctx context.Context, accountID string, f suppressiondb.SuppressionFilter, p store.Page) ([]suppressiondb.Suppression, *store.Cursor, error)
	Suppression(ctx context.Context, accountID, address string) (suppressiondb.Suppression, error)
	SuppressionHistory(ctx context.Context, accountID, address string, p store.Page) ([]suppressiondb.SuppressionChange, *store.Cursor, error)
	AddSuppressionBy(ctx context.Context, accountID, address string, medium invite.Medium, reason invite.SuppressionReason,
		by string) (suppressiondb.Suppression, bool, error)
	LiftSuppression(ctx context.Context, accountID, address, by string, customerConsent bool) error
}

// TemplateStore is what the templates' pages read and change.
type TemplateStore interface {
	ListTemplates(ctx context.Context, accountID string, f templatedb.TemplateFilter, p store.Page) ([]templatedb.Template, *store.Cursor, error)
	TemplateLevels(ctx context.Context, accountID, eventTypeID, kind, lang string) (eventType, account templatedb.Level, err error)
	TemplateVersions(ctx context.Context, key templatedb.TemplateKey, limit int) ([]templatedb.TemplateVersion, error)
	PutTemplate(ctx context.Context, key templatedb.TemplateKey, content []byte, by string) (templatedb.Template, bool, error)
	DeleteTemplate(ctx context.Context, key templatedb.TemplateKey) error
	CreateTestSend(ctx context.Context, t templatedb.TestSend, medium invite.Medium) (templatedb.TestSend, error)
}

// ReportStore is what the overview reads of the mail providers' reports.
type ReportStore interface {
	ComplaintsSince(ctx context.Context, accountID string, since time.Time) (int64, error)
}

// StatsStore is what the overview reads of the funnel's counts.
type StatsStore interface {
	InviteStats(ctx context.Context, q statsdb.Query) ([]stats.Group, error)
}

// AccountStore is what the console reads of the account and what it has
// set up.
type AccountStore interface {
	Account(ctx context.Context, id string) (accountdb.Account, error)
	ListEventTypes(ctx context.Context, accountID string, f accountdb.EventTypeFilter, p store.Page) ([]accountdb.EventType, *store.Cursor, error)
	EventType(ctx context.Context, accountID, id string) (accountdb.EventType, error)
	ListChannels(ctx context.Context, accountID string, p store.Page) ([]accountdb.Channel, *store.Cursor, error)
	ListInviteSettings(ctx context.Context, accountID string, f accountdb.InviteSettingFilter, p store.Page) ([]accountdb.InviteSetting, *store.Cursor, error)
	UpdateInviteSetting(ctx context.Context, accountID, id string, apply func(*accountdb.InviteSetting) error) (accountdb.InviteSetting, error)
	UpdateBranding(ctx context.Context, id string, u accountdb.BrandingUpdate) (accountdb.Account, error)
}

// WebhookStore is what the webhooks' pages read and change.
type WebhookStore interface {
	ListWebhookEndpoints(ctx context.Context, accountID string, p store.Page) ([]webhookdb.WebhookEndpoint, *store.Cursor, error)
	WebhookEndpoint(ctx context.Context, accountID, id string) (webhookdb.WebhookEndpoint, error)
	CreateWebhookEndpoint(ctx context.Context, ep webhookdb.WebhookEndpoint) (webhookdb.WebhookEndpoint, error)
	UpdateWebhookEndpoint(ctx context.Context, accountID, id string, u webhookdb.WebhookEndpointUpdate) (webhookdb.WebhookEndpoint, error)
	RotateWebhookSecret(ctx context.Context, accountID, id string, sealed []byte, overlap time.Duration) (webhookdb.WebhookEndpoint, error)
	ListWebhookDeliveries(ctx context.Context, accountID, endpointID, status string, p store.Page) ([]webhookdb.WebhookDelivery, *store.Cursor, error)
	RetryWebhookDelivery(ctx context.Context, accountID, endpointID, deliveryID string) (webhookdb.WebhookDelivery, error)
	ReplayWebhookDeliveries(ctx context.Context, accountID, endpointID string, f webhookdb.ReplayFilter, dryRun bool) (int, error)
}
