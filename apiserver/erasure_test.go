package apiserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mailevents"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/webhook"
)

// TestErasureLeavesNoCopyAnywhere plants a customer's values in every
// place an event, a review, a product, a provider's report and a webhook
// delivery can carry them — each column the registry of personal data
// says may hold them, most through their real paths — erases the
// customer, and then searches every text, JSON and byte column of every
// table for each value: only the suppression list keeps the address. The
// public outputs built from the product reviews' copies (the product's
// JSON and JSON-LD, the Google feed) and the provider's report shown on
// the event no longer show any of them.
func TestErasureLeavesNoCopyAnywhere(t *testing.T) {
	t.Parallel()
	p := newMailProviders(t)
	e := newEnv(t, withMailEvents(t, p, metrics.New(), mailevents.Postmark))
	ctx := context.Background()
	db := e.store.DB()
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := db.Exec(q, args...)
		require.NoError(t, err)
	}
	const (
		email     = "Annabel.Leeward+shop@example.com"
		mobile    = "+49 151 2345 6789"
		reference = "cst-annabel-5521"
		order     = "order-5521-AL"
		sku       = "MUG-ENGRAVED"
	)
	// Every value of the customer's, as a search would look for it.
	values := []string{strings.ToLower(email), url.QueryEscape(strings.ToLower(email)), "Annabel", "Leeward", "Hidden Lane",
		"Springfield", "2345 6789", "4915123456789", reference, order}
	// The values that are part of the address the suppression list keeps.
	inAddress := func(v string) bool { return strings.Contains(strings.ToLower(email), strings.ToLower(v)) }
	carries := func(body []byte) []string {
		var found []string
		for _, v := range values {
			if strings.Contains(strings.ToLower(string(body)), strings.ToLower(v)) {
				found = append(found, v)
			}
		}
		return found
	}

	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	hook := e.create(t, "/webhooks", map[string]any{"url": "https://hooks.example.com/tp", "events": webhook.EventTypes()})
	event := func(key string) string {
		ev := e.minimalEvent("checkout")
		ev["customer"] = map[string]any{"email": email, "firstName": "Annabel", "lastName": "Leeward",
			"address": "7 Hidden Lane, Springfield", "mobile": mobile, "reference": reference}
		ev["transaction"] = map[string]any{"reference": order, "date": "2026-11-20T10:00:00Z"}
		ev["metadata"] = map[string]any{"contact": "write to " + email}
		// A personalised product: its name, brand, address and image
		// carry the customer's values, and so does each copy of it.
		ev["products"] = []any{map[string]any{"name": "Engraved mug for Annabel Leeward", "sku": sku, "brand": "Leeward Gifts",
			"url":      "https://shop.example/mug?for=" + url.QueryEscape(email) + "&also=" + strings.ToLower(email),
			"imageUrl": "https://cdn.example/engraved/annabel-leeward.png"}}
		var headers []header
		if key != "" {
			headers = append(headers, header{"Idempotency-Key", key})
		}
		return e.acceptEvent(t, ev, headers...)
	}

	// Sent by mail on the second attempt (the relay refused the first),
	// to a number the SMS claim would have recorded too.
	sent := event(strings.ToLower(email) + "/" + order)
	_, err := e.store.Invites.MarkScheduled(ctx, invite.KindInvite, sent, time.Now())
	require.NoError(t, err)
	for _, o := range []invite.SendResult{{Retry: true, Error: "452 mailbox of Annabel Leeward is full"}, {SentAt: time.Now()}} {
		c, err := e.store.Invites.ClaimSend(ctx, invite.KindInvite, sent, invitedb.ClaimOptions{})
		require.NoError(t, err)
		require.True(t, c.Send)
		_, err = e.store.Invites.FinishSend(ctx, invite.KindInvite, sent, o)
		require.NoError(t, err)
	}
	exec(`UPDATE events SET customer_mobile = '+4915123456789' WHERE id = $1`, sent)
	// Another event of theirs failed, its error naming them.
	failed := event("")
	_, err = e.store.Invites.MarkScheduled(ctx, invite.KindInvite, failed, time.Now())
	require.NoError(t, err)
	_, err = e.store.Invites.GiveUp(ctx, invite.KindInvite, failed, invite.Reason("rejected"), "550 no mailbox for Annabel Leeward")
	require.NoError(t, err)

	// The customer reviews on the feedback page, the product too, named
	// with their consent.
	link, err := url.Parse(e.feedbackLinks.URL(sent))
	require.NoError(t, err)
	form := url.Values{"event": {sent}, "sig": {link.Query().Get("sig")}, "rating": {"4"}, "showName": {"1"},
		"comment":          {"Lovely! Annabel Leeward (" + email + ", " + mobile + ", 7 Hidden Lane, Springfield), " + order + ", " + reference},
		"product.0.rating": {"5"}, "product.0.comment": {"The engraving says Annabel; call " + mobile}}
	requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, form.Encode()), http.StatusOK)
	reviews, _ := items(t, e.get(t, "/reviews"))
	require.Len(t, reviews, 1)
	rev := reviews[0]["id"].(string)
	// The shop answers, reports it, and the operator keeps it published.
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPut, "/reviews/"+rev+"/reply", e.token,
		map[string]any{"text": "We have written to " + email + " about " + order}).status)
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPost, "/reviews/"+rev+"/report", e.token,
		map[string]any{"reason": "spam", "note": "mentions " + reference}).status)
	_, _, err = e.store.Reviews.ModerateReview(ctx, rev, review.Publish, "kept: Annabel Leeward wrote it")
	require.NoError(t, err)

	// The mail provider reports a bounce in words that name the customer.
	bounce, err := json.Marshal(map[string]any{"RecordType": "Bounce", "ID": 4242, "Type": "HardBounce",
		"BouncedAt": time.Now().UTC().Format(time.RFC3339), "MessageID": "883953f4-6105-42a2-a16a-77a8eac79483",
		"Recipient": email, "Metadata": map[string]string{"touchpoint-message": sent}, "MessageStream": "outbound",
		"Description": "550 Mailbox of Annabel Leeward <" + email + "> (cust " + reference + ", tel " + mobile + ")"})
	require.NoError(t, err)
	r := e.post(t, p.postmarkAs(testPostmarkUser, testPostmarkPassword, string(bounce)))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, 1.0, r.object(t)["reports"])

	// The shop's receiver echoed the customer reference in its error.
	ds, _, err := e.store.Webhooks.ListWebhookDeliveries(ctx, e.account, hook["id"].(string), "", store.Page{Limit: 100})
	require.NoError(t, err)
	require.NotEmpty(t, ds)
	_, err = e.store.Webhooks.RecordWebhookAttempt(ctx, ds[0].ID, webhookdb.AttemptResult{StatusCode: 422, Error: "422 unknown customer " + reference})
	require.NoError(t, err)

	// Their number was listed once and lifted; a test send went to their
	// address; today's sends to it are counted by its hash.
	_, _, err = e.store.Suppressions.AddSuppressionBy(ctx, e.account, "+4915123456789", invite.SMS, invite.Manual, "cli-shop")
	require.NoError(t, err)
	require.NoError(t, e.store.Suppressions.LiftSuppression(ctx, e.account, "+4915123456789", "cli-shop", false))
	exec(`INSERT INTO template_test_sends (id, account_id, kind, locale, address, masked_address, status, error, created_by,
			created_at, next_start_at)
		VALUES ('tts-1', $1, 'invite', 'en', $2, 'a***@example.com', 'pending', $3, 'cli-shop', now(), now())`,
		e.account, email, "451 greylisted "+strings.ToLower(email))
	hash := sha256.Sum256([]byte("email:" + strings.ToLower(email)))
	exec(`INSERT INTO recipient_daily_sends (account_id, address_hash, day, sends) VALUES ($1, $2, current_date, 1)`, e.account, hash[:])

	// Planted: every column the registry says may hold a customer's data
	// holds some of theirs now (a hash or a mask by its row).
	planted := map[string]bool{}
	for _, v := range values {
		for col := range testdb.Copies(t, db, v) {
			planted[col] = true
		}
	}
	count := func(q, arg string) func() int {
		return func() int {
			var n int
			require.NoError(t, db.Get(&n, q, arg))
			return n
		}
	}
	byRow := map[string]func() int{
		"idempotency_keys.request_hash":      count(`SELECT count(*) FROM idempotency_keys WHERE event_id = $1`, sent),
		"recipient_daily_sends.address_hash": count(`SELECT count(*) FROM recipient_daily_sends WHERE account_id = $1`, e.account),
		"template_test_sends.masked_address": count(`SELECT count(*) FROM template_test_sends WHERE account_id = $1`, e.account),
	}
	for _, tab := range schema.Tables() {
		for _, c := range tab.Customer() {
			key := tab.Name + "." + c.Name
			if rows, ok := byRow[key]; ok {
				assert.Positive(t, rows(), "the test puts a row in %s", key)
				continue
			}
			assert.True(t, planted[key], "the test puts a copy of the customer's values in %s", key)
		}
	}

	// The public outputs show the personalised product, and the event
	// shows the provider's words.
	public := map[string]string{
		"product JSON":    "/public/products/reviews?account=" + e.account + "&sku=" + sku,
		"product JSON-LD": "/public/products/reviews.jsonld?account=" + e.account + "&sku=" + sku,
		"feed":            "/public/accounts/" + e.account + "/feeds/google-product-reviews.xml",
	}
	for name, path := range public {
		r := e.anon(t, path)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", name, r.body)
		assert.NotEmpty(t, carries(r.body), "%s shows the customer's values before the erasure", name)
	}
	providerEvents := func() []any {
		history := e.inviteOf(t, e.token, sent)["attemptHistory"].([]any)
		require.Len(t, history, 2)
		return history[1].(map[string]any)["providerEvents"].([]any)
	}
	require.Len(t, providerEvents(), 1)
	assert.Contains(t, providerEvents()[0].(map[string]any)["detail"], "Annabel Leeward")

	erased := e.do(t, http.MethodPost, "/customers/erase", e.token, map[string]any{"email": email})
	require.Equal(t, http.StatusOK, erased.status, "%s", erased.body)
	assert.EqualValues(t, 2, erased.object(t)["events"])

	// Nothing is left but the suppression list's entry of the bounced
	// address, and its history.
	for _, v := range values {
		found := testdb.Copies(t, db, v)
		if inAddress(v) {
			assert.Equal(t, map[string]int{"suppressions.address": 1, "suppression_history.address": 1}, found, v)
			continue
		}
		assert.Empty(t, found, "no copy of %q", v)
	}
	for key, rows := range byRow {
		assert.Zero(t, rows(), "%s: the rows are gone", key)
	}

	// The public outputs still show the review and the product, without
	// a value of the customer's; so does the event.
	for name, path := range public {
		r := e.anon(t, path)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", name, r.body)
		assert.Empty(t, carries(r.body), "%s: %s", name, r.body)
		assert.Contains(t, string(r.body), "Engraved mug for [erased]", name)
	}
	got := e.get(t, "/events/"+sent)
	assert.Empty(t, carries(got.body), "%s", got.body)
	require.Len(t, providerEvents(), 1, "the report is kept")
	assert.Nil(t, providerEvents()[0].(map[string]any)["detail"], "without the provider's words")
	assert.Equal(t, "bounced", providerEvents()[0].(map[string]any)["outcome"])
	d := e.get(t, "/webhooks/"+hook["id"].(string)+"/deliveries")
	assert.Empty(t, carries(d.body), "%s", d.body)
	assert.Contains(t, string(d.body), "422 unknown customer [erased]")
}
