package console

import "net/http"

// routes is every page and form of the console, with the action each
// needs the signed-in person's role to allow.
func (h *Handler) routes() []route {
	return []route{
		{http.MethodGet, "/{$}", Read, h.overview},

		{http.MethodGet, "/reviews", Read, h.reviews},
		{http.MethodGet, "/reviews/{id}", Read, h.review},
		{http.MethodPost, "/reviews/{id}/reply", ReplyReview, h.putReply},
		{http.MethodPost, "/reviews/{id}/reply/delete", ReplyReview, h.deleteReply},
		{http.MethodPost, "/reviews/{id}/report", ReportReview, h.reportReview},

		{http.MethodGet, "/invites", Read, h.invites},
		{http.MethodGet, "/invites/{id}", Read, h.invitePage},
		{http.MethodPost, "/invites/{id}/cancel", CancelInvite, h.cancelInvite},
		{http.MethodPost, "/invites/{id}/retry", RetryInvite, h.retryInvite},

		{http.MethodGet, "/templates", Read, h.templatesIndex},
		{http.MethodGet, "/templates/{kind}/{locale}", Read, h.templateEditor},
		{http.MethodPost, "/templates/{kind}/{locale}", EditTemplates, h.saveTemplate},
		{http.MethodPost, "/templates/{kind}/{locale}/delete", EditTemplates, h.deleteTemplate},
		{http.MethodGet, "/templates/{kind}/{locale}/preview", Read, h.previewTemplate},
		{http.MethodPost, "/templates/{kind}/{locale}/test", SendTest, h.testSend},

		{http.MethodGet, "/webhooks", Read, h.webhooks},
		{http.MethodPost, "/webhooks", ManageWebhooks, h.createWebhook},
		{http.MethodGet, "/webhooks/{id}", Read, h.webhookPage},
		{http.MethodPost, "/webhooks/{id}/enable", ManageWebhooks, h.setWebhookEnabled(true)},
		{http.MethodPost, "/webhooks/{id}/disable", ManageWebhooks, h.setWebhookEnabled(false)},
		{http.MethodPost, "/webhooks/{id}/rotate", ManageWebhooks, h.rotateWebhook},
		{http.MethodPost, "/webhooks/{id}/deliveries/{msg}/retry", RetryWebhook, h.retryDelivery},
		{http.MethodPost, "/webhooks/{id}/replay", ReplayWebhook, h.replayWebhook},

		{http.MethodGet, "/settings", Read, h.settings},
		{http.MethodPost, "/settings/language", ChooseLanguage, h.saveLanguage},
		{http.MethodGet, "/settings/branding/advice", Read, h.brandingAdvice},
		{http.MethodPost, "/settings/branding", EditBranding, h.saveBranding},
		{http.MethodPost, "/settings/invite-settings/{id}", EditSettings, h.saveInviteSetting},
		{http.MethodPost, "/settings/clients", ManageClients, h.createClient},
		{http.MethodPost, "/settings/clients/{id}/delete", ManageClients, h.deleteClient},
		{http.MethodPost, "/settings/people", ManagePeople, h.addPerson},
		{http.MethodPost, "/settings/people/{id}", ManagePeople, h.changePerson},

		{http.MethodGet, "/suppressions", Read, h.suppressions},
		{http.MethodPost, "/suppressions", Suppress, h.addSuppression},
		{http.MethodPost, "/suppressions/lift", Unsuppress, h.liftSuppression},
	}
}
