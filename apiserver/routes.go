package apiserver

import (
	"net/http"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/pages"
	"github.com/touchpoint/touchpoint/sms"
)

// access is the set of access groups that may call a route.
type access uint8

const (
	allowFull access = 1 << iota
	allowEvents
	allowReadonly

	// public routes need no token at all.
	public access = 1 << 7
	// page routes are public HTML pages for customers, limited per address.
	page access = 1<<7 | 1<<6
	// publicRead routes publish an account's reviews to anyone: no token,
	// CORS *, limited per address.
	publicRead access = 1<<7 | 1<<5
	// publicPage routes are publicRead routes that answer HTML, their
	// errors too.
	publicPage access = 1<<7 | 1<<5 | 1<<4
	// providerReport routes take what a provider signs instead of a
	// token, limited per address before a byte of the body is read.
	providerReport access = 1<<7 | 1<<3

	fullOnly  = allowFull                               // writes of event types, channels, settings, webhooks, templates; cancel, retry; report, reply
	senders   = allowFull | allowEvents                 // POST /events, POST /events/batch
	anyClient = allowFull | allowEvents | allowReadonly // every read
)

func (a access) allows(group string) bool {
	switch group {
	case auth.GroupFull:
		return a&allowFull != 0
	case auth.GroupEvents:
		return a&allowEvents != 0
	case auth.GroupReadonly:
		return a&allowReadonly != 0
	}
	return false
}

// route is one endpoint: the only list of what the API answers and who
// may call it. Adding an endpoint is a line here and a handler method.
type route struct {
	method, path string
	access       access
	handle       http.HandlerFunc
}

func (s *server) routes() []route {
	acc, ev := accountAPI{s}, eventAPI{s}
	return []route{
		{http.MethodGet, "/healthz", public, s.healthz},
		{http.MethodGet, "/readyz", public, s.readyz},
		{http.MethodGet, "/openapi.yaml", public, s.openAPI},

		// The account's setup, served by package accountapi.
		{http.MethodPost, "/event-types", fullOnly, s.account.CreateEventType},
		{http.MethodGet, "/event-types", anyClient, s.account.ListEventTypes},
		{http.MethodGet, "/event-types/{id}", anyClient, s.account.GetEventType},
		{http.MethodPatch, "/event-types/{id}", fullOnly, s.account.UpdateEventType},

		{http.MethodPost, "/channels", fullOnly, s.account.CreateChannel},
		{http.MethodGet, "/channels", anyClient, s.account.ListChannels},
		{http.MethodGet, "/channels/{id}", anyClient, s.account.GetChannel},

		{http.MethodGet, "/invite-settings", anyClient, s.account.ListInviteSettings},
		{http.MethodGet, "/invite-settings/{id}", anyClient, s.account.GetInviteSetting},
		{http.MethodPatch, "/invite-settings/{id}", fullOnly, s.account.UpdateInviteSetting},

		{http.MethodPost, "/events", senders, ev.createEvent},
		{http.MethodPost, "/events/batch", senders, ev.createEvents},
		{http.MethodGet, "/events", anyClient, ev.listEvents},
		{http.MethodGet, "/events/{id}", anyClient, ev.getEvent},
		{http.MethodPost, "/events/{id}/cancel", fullOnly, ev.cancelEvent},
		{http.MethodPost, "/events/{id}/retry", fullOnly, ev.retryEvent},

		// The funnel's counts, served by package statsapi.
		{http.MethodGet, "/stats/invites", anyClient, s.stats.Invites},
		{http.MethodGet, "/stats/reviews", anyClient, s.stats.Reviews},

		// The shop's reviews, served by package reviewapi.
		{http.MethodGet, "/reviews", anyClient, s.reviews.List},
		{http.MethodGet, "/reviews/summary", anyClient, s.reviews.Summary}, // before /reviews/{id}
		{http.MethodGet, "/reviews/{id}", anyClient, s.reviews.Get},
		{http.MethodGet, "/reviews/{id}/history", anyClient, s.reviews.History},
		{http.MethodPost, "/reviews/{id}/report", fullOnly, s.reviews.Report},
		{http.MethodPut, "/reviews/{id}/reply", fullOnly, s.reviews.PutReply},
		{http.MethodDelete, "/reviews/{id}/reply", fullOnly, s.reviews.DeleteReply},
		{http.MethodGet, "/product-reviews", anyClient, s.reviews.ListProductReviews},
		{http.MethodGet, "/product-reviews/{id}", anyClient, s.reviews.GetProductReview},
		{http.MethodGet, "/products/summary", anyClient, s.reviews.ProductSummary},

		// The suppression list, served by package suppressionapi.
		{http.MethodGet, "/suppressions", anyClient, s.suppressions.List},
		{http.MethodPost, "/suppressions", fullOnly, s.suppressions.Create},
		{http.MethodDelete, "/suppressions/{address}", fullOnly, s.suppressions.Delete},
		{http.MethodGet, "/suppressions/{address}/history", anyClient, s.suppressions.History},

		// The webhooks, served by package webhookapi.
		{http.MethodGet, "/webhooks", anyClient, s.webhooks.List},
		{http.MethodPost, "/webhooks", fullOnly, s.webhooks.Create},
		{http.MethodGet, "/webhooks/{id}", anyClient, s.webhooks.Get},
		{http.MethodPatch, "/webhooks/{id}", fullOnly, s.webhooks.Update},
		{http.MethodDelete, "/webhooks/{id}", fullOnly, s.webhooks.Delete},
		{http.MethodPost, "/webhooks/{id}/rotate-secret", fullOnly, s.webhooks.RotateSecret},
		{http.MethodGet, "/webhooks/{id}/deliveries", anyClient, s.webhooks.ListDeliveries},
		{http.MethodPost, "/webhooks/{id}/deliveries/{msg}/retry", fullOnly, s.webhooks.RetryDelivery},
		{http.MethodPost, "/webhooks/{id}/replay", fullOnly, s.webhooks.Replay},

		{http.MethodPost, "/customers/erase", fullOnly, acc.eraseCustomer},

		{http.MethodGet, "/audit", fullOnly, acc.listAudit},

		// The account, served by package accountapi.
		{http.MethodGet, "/account", anyClient, s.account.GetAccount},
		{http.MethodPatch, "/account", fullOnly, s.account.UpdateAccount},

		// The shop's templates, served by package templateapi.
		{http.MethodGet, "/templates", anyClient, s.templates.List},
		{http.MethodPost, "/templates/preview", anyClient, s.templates.Preview},
		{http.MethodPost, "/templates/test-send", fullOnly, s.templates.TestSend},
		{http.MethodGet, "/templates/test-sends/{id}", anyClient, s.templates.GetTestSend},
		{http.MethodGet, "/templates/{kind}/{locale}", anyClient, s.templates.Get},
		{http.MethodPut, "/templates/{kind}/{locale}", fullOnly, s.templates.Put},
		{http.MethodDelete, "/templates/{kind}/{locale}", fullOnly, s.templates.Delete},

		// The customer pages, served by package pages.
		{http.MethodGet, s.feedbackPath, page, s.pages.ShowFeedback},
		{http.MethodPost, s.feedbackPath, page, s.pages.PostFeedback},
		{http.MethodGet, pages.UnsubscribePath, page, s.pages.ShowUnsubscribe},
		{http.MethodPost, pages.UnsubscribePath, page, s.pages.PostUnsubscribe},

		// The public endpoints of reviews, served by package publicapi.
		{http.MethodGet, "/public/accounts/{acc}/reviews", publicRead, s.publicReviews.Reviews},
		{http.MethodGet, "/public/accounts/{acc}/reviews.jsonld", publicRead, s.publicReviews.AccountJSONLD},
		{http.MethodGet, "/public/accounts/{acc}/widget", publicPage, s.publicReviews.Widget},
		{http.MethodGet, "/public/accounts/{acc}/feeds/google-product-reviews.xml", publicRead, s.publicReviews.Feed},
		{http.MethodGet, "/public/accounts/{acc}/jwks.json", publicRead, s.publicReviews.JWKS},
		{http.MethodGet, "/public/products/reviews", publicRead, s.publicReviews.ProductReviews},
		{http.MethodGet, "/public/products/reviews.jsonld", publicRead, s.publicReviews.ProductJSONLD},
		{http.MethodGet, "/public/reviews/{id}/verify", publicPage, s.publicReviews.VerifyPage},

		// The SMS provider's callbacks, served by package sms.
		{http.MethodPost, sms.StatusPath, public, s.smsCallbacks.ServeStatus},
		{http.MethodPost, sms.InboundPath, public, s.smsCallbacks.ServeInbound},

		// The mail providers' reports of what became of a message, each
		// verified as its provider signs it.
		{http.MethodPost, "/mail-events/{provider}", providerReport, mailEventAPI{s}.mailEvents},
	}
}
