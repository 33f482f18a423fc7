package console

import "net/http"

// routes is every page and form of the console, with the action each
// needs the signed-in person's role to allow.
func (h *Handler) routes() []route {
	rv, iv, tp := reviewPages{h}, invitePages{h}, templatePages{h}
	wh, st, sp := webhookPages{h}, settingsPages{h}, suppressionPages{h}
	return []route{
		{http.MethodGet, "/{$}", Read, h.overview},

		{http.MethodGet, "/reviews", Read, rv.reviews},
		{http.MethodGet, "/reviews/{id}", Read, rv.review},
		{http.MethodPost, "/reviews/{id}/reply", ReplyReview, rv.putReply},
		{http.MethodPost, "/reviews/{id}/reply/delete", ReplyReview, rv.deleteReply},
		{http.MethodPost, "/reviews/{id}/report", ReportReview, rv.reportReview},

		{http.MethodGet, "/invites", Read, iv.invites},
		{http.MethodGet, "/invites/{id}", Read, iv.invitePage},
		{http.MethodPost, "/invites/{id}/cancel", CancelInvite, iv.cancelInvite},
		{http.MethodPost, "/invites/{id}/retry", RetryInvite, iv.retryInvite},

		{http.MethodGet, "/templates", Read, tp.templatesIndex},
		{http.MethodGet, "/templates/{kind}/{locale}", Read, tp.templateEditor},
		{http.MethodPost, "/templates/{kind}/{locale}", EditTemplates, tp.saveTemplate},
		{http.MethodPost, "/templates/{kind}/{locale}/delete", EditTemplates, tp.deleteTemplate},
		{http.MethodGet, "/templates/{kind}/{locale}/preview", Read, tp.previewTemplate},
		{http.MethodPost, "/templates/{kind}/{locale}/test", SendTest, tp.testSend},

		{http.MethodGet, "/webhooks", Read, wh.webhooks},
		{http.MethodPost, "/webhooks", ManageWebhooks, wh.createWebhook},
		{http.MethodGet, "/webhooks/{id}", Read, wh.webhookPage},
		{http.MethodPost, "/webhooks/{id}/enable", ManageWebhooks, wh.setWebhookEnabled(true)},
		{http.MethodPost, "/webhooks/{id}/disable", ManageWebhooks, wh.setWebhookEnabled(false)},
		{http.MethodPost, "/webhooks/{id}/rotate", ManageWebhooks, wh.rotateWebhook},
		{http.MethodPost, "/webhooks/{id}/deliveries/{msg}/retry", RetryWebhook, wh.retryDelivery},
		{http.MethodPost, "/webhooks/{id}/replay", ReplayWebhook, wh.replayWebhook},

		{http.MethodGet, "/settings", Read, st.settings},
		{http.MethodPost, "/settings/language", ChooseLanguage, st.saveLanguage},
		{http.MethodGet, "/settings/branding/advice", Read, st.brandingAdvice},
		{http.MethodPost, "/settings/branding", EditBranding, st.saveBranding},
		{http.MethodPost, "/settings/invite-settings/{id}", EditSettings, st.saveInviteSetting},
		{http.MethodPost, "/settings/clients", ManageClients, st.createClient},
		{http.MethodPost, "/settings/clients/{id}/delete", ManageClients, st.deleteClient},
		{http.MethodPost, "/settings/people", ManagePeople, st.addPerson},
		{http.MethodPost, "/settings/people/{id}", ManagePeople, st.changePerson},

		{http.MethodGet, "/suppressions", Read, sp.suppressions},
		{http.MethodPost, "/suppressions", Suppress, sp.addSuppression},
		{http.MethodPost, "/suppressions/lift", Unsuppress, sp.liftSuppression},
	}
}
