package webhookstack_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/webhook"
)

// TestErasureLeavesNoCopy plants a customer's data everywhere the product
// copies it, each through its real path — events accepted by the API
// (with an idempotency key and metadata that repeat the address), a mail
// sent after a refused attempt, a text message and its delivery report,
// a review written on the feedback page, webhook deliveries delivered to
// one endpoint and still retrying at another — erases the customer, then
// searches every text, JSON and array column of every table for each of
// their values: only the suppression list keeps the address. The
// deliveries that were retrying then go out, redacted.
func TestErasureLeavesNoCopy(t *testing.T) {
	t.Parallel()
	s := newStack(t, fast)
	const (
		email     = "Annabel.Leeward+shop@example.com"
		mobile    = "+49 151 2345 6789"
		reference = "cst-annabel-5521"
	)
	customer := map[string]any{"email": email, "firstName": "Annabel", "lastName": "Leeward",
		"address": "7 Hidden Lane, Springfield", "mobile": mobile, "reference": reference}
	// Every value of the customer's, as a search would look for it.
	values := []string{"annabel.leeward+shop@example.com", "Annabel", "Leeward", "Hidden Lane", "Springfield",
		"2345 6789", "4915123456789", reference}
	carries := func(body string) bool {
		for _, v := range values {
			if strings.Contains(strings.ToLower(body), strings.ToLower(v)) {
				return true
			}
		}
		return false
	}

	// The shop's endpoints: one takes everything; the other refuses any
	// body that carries the customer's data, so those deliveries keep
	// being retried — until they come without it.
	all := newReceiver(t)
	allHook, secret := s.webhook(t, all.URL, webhook.EventTypes()...)
	all.trust(t, secret)
	picky := newReceiver(t)
	pickyHook, secret := s.webhook(t, picky.URL, webhook.EventTypes()...)
	picky.trust(t, secret)
	picky.respond(func(n int, w http.ResponseWriter, _ *http.Request) {
		if carries(picky.requests()[n].Body) {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})

	// An invite by mail, sent on its second attempt (the relay refused the
	// first), and reviewed on the feedback page.
	s.smtp.FailRCPT(1, 451)
	byMail := s.acceptWithKey(t, map[string]any{"customer": customer, "type": "checkout", "channel": map[string]any{"id": s.channel},
		"transaction": map[string]any{"reference": "order-5521", "date": time.Now().UTC().Format(time.RFC3339)},
		"metadata":    map[string]any{"contact": "write to " + email}, "system": "shop", "systemVersion": "1"},
		strings.ToLower(email)+"/order-5521")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Len(c, all.ofType(webhook.InviteSent), 1)
	}, wait, 20*time.Millisecond)
	link, err := url.Parse(s.feedback.URL(byMail))
	require.NoError(t, err)
	res, err := http.PostForm(s.api.URL+"/feedback", url.Values{"event": {byMail}, "sig": {link.Query().Get("sig")}, "rating": {"5"},
		"comment": {"Lovely! Annabel Leeward (annabel.leeward+shop@example.com, " + mobile + ", 7 Hidden Lane, Springfield)"}})
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)

	// An invite by text message, and the provider's report that it arrived.
	s.call(t, http.MethodPost, "/event-types", map[string]any{"name": "pickup"}, http.StatusCreated)
	s.call(t, http.MethodPatch, "/invite-settings/"+s.settingOf(t, "pickup"), map[string]any{"medium": "sms"}, http.StatusOK)
	bySMS := s.acceptWithKey(t, map[string]any{"customer": customer, "type": "pickup", "channel": map[string]any{"id": s.channel},
		"transaction": map[string]any{"reference": "order-5522", "date": time.Now().UTC().Format(time.RFC3339)},
		"system":      "shop", "systemVersion": "1"}, "")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Len(c, s.texts.messages(), 1)
		assert.Len(c, all.ofType(webhook.InviteSent), 2)
		assert.Len(c, all.ofType(webhook.ReviewCreated), 1)
	}, wait, 20*time.Millisecond)
	s.texts.report(t, 0, "delivered")

	// The customer unsubscribes: the suppression list keeps the address.
	s.call(t, http.MethodPost, "/suppressions", map[string]any{"address": email, "reason": "unsubscribed"}, http.StatusCreated)

	// Planted: the data is where the product put it, and the deliveries
	// that carry it keep failing at the picky endpoint.
	db := s.st.DB()
	planted := map[string]bool{}
	for _, v := range values {
		for col := range testdb.Copies(t, db, v) {
			planted[col] = true
		}
	}
	for _, col := range []string{"events.customer_email", "events.customer_mobile", "events.customer_reference", "events.payload",
		"idempotency_keys.key", "reviews.comment", "webhook_deliveries.payload", "suppressions.address"} {
		assert.True(t, planted[col], "the customer's data is in %s", col)
	}
	var smsReports, failedAttempts int
	require.NoError(t, db.Get(&smsReports, `SELECT count(*) FROM sms_deliveries WHERE event_id = $1`, bySMS))
	require.NoError(t, db.Get(&failedAttempts, `SELECT count(*) FROM send_attempts WHERE event_id = $1 AND detail IS NOT NULL`, byMail))
	assert.Equal(t, 1, smsReports, "the provider's report is kept")
	assert.Equal(t, 1, failedAttempts, "the refused attempt is kept with its detail")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		refused := 0
		for _, r := range picky.requests() {
			if carries(r.Body) {
				refused++
			}
		}
		assert.GreaterOrEqual(c, refused, 4, "invite.sent twice, review.created, and their retries")
	}, wait, 20*time.Millisecond)
	pending := 0
	for _, d := range s.deliveries(t, pickyHook) {
		if d["status"] == "pending" {
			pending++
		}
	}
	require.GreaterOrEqual(t, pending, 3, "the deliveries carrying the customer's data are retrying")

	erased := s.call(t, http.MethodPost, "/customers/erase", map[string]any{"email": email}, http.StatusOK)
	assert.EqualValues(t, 2, erased["events"])

	// Nothing is left but the suppression list's entry and its history.
	left := func() {
		t.Helper()
		assert.Equal(t, map[string]int{"suppressions.address": 1, "suppression_history.address": 1},
			testdb.Copies(t, db, "annabel.leeward+shop@example.com"))
		for _, v := range values[1:] {
			found := testdb.Copies(t, db, v)
			delete(found, "suppressions.address") // the names are in the address
			delete(found, "suppression_history.address")
			assert.Empty(t, found, "no copy of %q", v)
		}
	}
	left()

	// The retrying deliveries go out redacted and succeed; what was
	// delivered before is redacted where it is kept.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, d := range s.deliveries(t, pickyHook) {
			assert.Equal(c, "succeeded", d["status"], "%s %s", d["id"], d["type"])
		}
	}, wait, 20*time.Millisecond)
	redacted := 0
	for _, r := range picky.requests() {
		assert.NoError(t, r.VerifyErr, "a redacted body is signed like any other")
		if !carries(r.Body) {
			redacted++
			assert.Nil(t, r.Data["customerReference"], "%s", r.Body)
		}
	}
	assert.GreaterOrEqual(t, redacted, 3)
	review := picky.ofType(webhook.ReviewCreated)
	assert.Equal(t, "Lovely! [erased] ([erased], [erased], [erased])", review[len(review)-1].Data["comment"])
	for _, hook := range []string{allHook, pickyHook} {
		for _, d := range s.deliveries(t, hook) {
			body, err := json.Marshal(d)
			require.NoError(t, err)
			assert.False(t, carries(string(body)), "%s", body)
		}
	}
	left() // and none came back
	got := s.call(t, http.MethodGet, "/events/"+byMail, nil, http.StatusOK)
	assert.EqualValues(t, 5, got["review"].(map[string]any)["rating"], "the review is kept")
}

// acceptWithKey posts an event with an Idempotency-Key (none for "") and
// returns its id.
func (s *stack) acceptWithKey(t *testing.T, event map[string]any, key string) string {
	t.Helper()
	body, err := json.Marshal(event)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.api.URL+"/events", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	require.Equal(t, http.StatusAccepted, res.StatusCode, "%v", out)
	return out["EventRef"].(string)
}

// settingOf is the id of the invite setting of the event type named name
// on the stack's channel.
func (s *stack) settingOf(t *testing.T, name string) string {
	t.Helper()
	var typeID string
	for _, it := range s.call(t, http.MethodGet, "/event-types", nil, http.StatusOK)["items"].([]any) {
		if et := it.(map[string]any); et["name"] == name {
			typeID = et["id"].(string)
		}
	}
	require.NotEmpty(t, typeID, "event type %s", name)
	q := url.Values{"eventTypeId": {typeID}, "channelId": {s.channel}}
	items := s.call(t, http.MethodGet, "/invite-settings?"+q.Encode(), nil, http.StatusOK)["items"].([]any)
	require.Len(t, items, 1)
	return items[0].(map[string]any)["id"].(string)
}
