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
	return []route{
		{http.MethodGet, "/healthz", public, s.healthz},
		{http.MethodGet, "/readyz", public, s.readyz},
		{http.MethodGet, "/openapi.yaml", public, s.openAPI},

		{http.MethodPost, "/event-types", fullOnly, s.createEventType},
		{http.MethodGet, "/event-types", anyClient, s.listEventTypes},
		{http.MethodGet, "/event-types/{id}", anyClient, s.getEventType},
		{http.MethodPatch, "/event-types/{id}", fullOnly, s.updateEventType},

		{http.MethodPost, "/channels", fullOnly, s.createChannel},
		{http.MethodGet, "/channels", anyClient, s.listChannels},
		{http.MethodGet, "/channels/{id}", anyClient, s.getChannel},

		{http.MethodGet, "/invite-settings", anyClient, s.listInviteSettings},
		{http.MethodGet, "/invite-settings/{id}", anyClient, s.getInviteSetting},
		{http.MethodPatch, "/invite-settings/{id}", fullOnly, s.updateInviteSetting},

		{http.MethodPost, "/events", senders, s.createEvent},
		{http.MethodPost, "/events/batch", senders, s.createEvents},
		{http.MethodGet, "/events", anyClient, s.listEvents},
		{http.MethodGet, "/events/{id}", anyClient, s.getEvent},
		{http.MethodPost, "/events/{id}/cancel", fullOnly, s.cancelEvent},
		{http.MethodPost, "/events/{id}/retry", fullOnly, s.retryEvent},

		{http.MethodGet, "/stats/invites", anyClient, s.inviteStats},
		{http.MethodGet, "/stats/reviews", anyClient, s.reviewStats},

		{http.MethodGet, "/reviews", anyClient, s.listReviews},
		{http.MethodGet, "/reviews/summary", anyClient, s.getReviewSummary}, // before /reviews/{id}
		{http.MethodGet, "/reviews/{id}", anyClient, s.getReview},
		{http.MethodGet, "/reviews/{id}/history", anyClient, s.reviewHistory},
		{http.MethodPost, "/reviews/{id}/report", fullOnly, s.reportReview},
		{http.MethodPut, "/reviews/{id}/reply", fullOnly, s.putReply},
		{http.MethodDelete, "/reviews/{id}/reply", fullOnly, s.deleteReply},
		{http.MethodGet, "/product-reviews", anyClient, s.listProductReviews},
		{http.MethodGet, "/product-reviews/{id}", anyClient, s.getProductReview},
		{http.MethodGet, "/products/summary", anyClient, s.getProductSummary},

		{http.MethodGet, "/suppressions", anyClient, s.listSuppressions},
		{http.MethodPost, "/suppressions", fullOnly, s.createSuppression},
		{http.MethodDelete, "/suppressions/{address}", fullOnly, s.deleteSuppression},
		{http.MethodGet, "/suppressions/{address}/history", anyClient, s.suppressionHistory},

		{http.MethodGet, "/webhooks", anyClient, s.listWebhooks},
		{http.MethodPost, "/webhooks", fullOnly, s.createWebhook},
		{http.MethodGet, "/webhooks/{id}", anyClient, s.getWebhook},
		{http.MethodPatch, "/webhooks/{id}", fullOnly, s.updateWebhook},
		{http.MethodDelete, "/webhooks/{id}", fullOnly, s.deleteWebhook},
		{http.MethodPost, "/webhooks/{id}/rotate-secret", fullOnly, s.rotateWebhookSecret},
		{http.MethodGet, "/webhooks/{id}/deliveries", anyClient, s.listWebhookDeliveries},
		{http.MethodPost, "/webhooks/{id}/deliveries/{msg}/retry", fullOnly, s.retryWebhookDelivery},
		{http.MethodPost, "/webhooks/{id}/replay", fullOnly, s.replayWebhook},

		{http.MethodPost, "/customers/erase", fullOnly, s.eraseCustomer},

		{http.MethodGet, "/audit", fullOnly, s.listAudit},

		{http.MethodGet, "/account", anyClient, s.getAccount},
		{http.MethodPatch, "/account", fullOnly, s.updateAccount},

		{http.MethodGet, "/templates", anyClient, s.listTemplates},
		{http.MethodPost, "/templates/preview", anyClient, s.previewTemplate},
		{http.MethodPost, "/templates/test-send", fullOnly, s.testSend},
		{http.MethodGet, "/templates/test-sends/{id}", anyClient, s.getTestSend},
		{http.MethodGet, "/templates/{kind}/{locale}", anyClient, s.getTemplate},
		{http.MethodPut, "/templates/{kind}/{locale}", fullOnly, s.putTemplate},
		{http.MethodDelete, "/templates/{kind}/{locale}", fullOnly, s.deleteTemplate},

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
		{http.MethodPost, "/mail-events/{provider}", providerReport, s.mailEvents},
	}
}
