package activities_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/webhook"
	"github.com/touchpoint/touchpoint/workflows"
)

// hookReceiver is a shop's webhook endpoint: it verifies every request
// with the Standard Webhooks reference library and answers as told.
type hookReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	verifier *standardwebhooks.Webhook
	got      []hookRequest
}

type hookRequest struct {
	header    http.Header
	body      []byte
	verifyErr error
}

// newHookReceiver serves on 127.0.0.1; respond answers request n
// (0-based) after it was recorded; nil answers 204.
func newHookReceiver(t *testing.T, secret string, respond func(n int, w http.ResponseWriter, r *http.Request)) *hookReceiver {
	t.Helper()
	v, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	rc := &hookReceiver{verifier: v}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, hookRequest{header: r.Header.Clone(), body: body, verifyErr: rc.verifier.Verify(body, r.Header)})
		rc.mu.Unlock()
		if respond != nil {
			respond(n, w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *hookReceiver) requests() []hookRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hookRequest(nil), rc.got...)
}

// hookHarness is the webhook activities over a fresh database.
type hookHarness struct {
	st      *store.Store
	box     *webhook.SecretBox
	acts    *activities.Webhooks
	metrics *metrics.Set
	account *eventfixture.Account
}

func newHookHarness(t *testing.T, client *webhook.Client) *hookHarness {
	t.Helper()
	db := testdb.New(t)
	box, err := webhook.NewSecretBox(bytes.Repeat([]byte{1}, 32))
	require.NoError(t, err)
	h := &hookHarness{st: storeset.New(db, "P7D"), box: box, metrics: metrics.New(), account: eventfixture.NewAccount(t, db, eventfixture.Setting{})}
	h.acts = &activities.Webhooks{Store: h.st.Webhooks, Client: client, Secrets: box, Metrics: h.metrics}
	return h
}

// endpoint registers url for invite.scheduled with a fresh secret.
func (h *hookHarness) endpoint(t *testing.T, url string) (webhookdb.WebhookEndpoint, string) {
	t.Helper()
	secret, err := webhook.NewSecret()
	require.NoError(t, err)
	id := store.NewID("whk")
	sealed, err := h.box.Seal(id, secret)
	require.NoError(t, err)
	ep, err := h.st.Webhooks.CreateWebhookEndpoint(context.Background(), webhookdb.WebhookEndpoint{ID: id, AccountID: h.account.AccountID,
		URL: url, Events: []string{webhook.InviteScheduled}, Secret: sealed})
	require.NoError(t, err)
	return ep, secret
}

// delivery schedules an invite and returns the delivery it wrote for ep.
func (h *hookHarness) delivery(t *testing.T, ep webhookdb.WebhookEndpoint) workflows.WebhookInput {
	t.Helper()
	ctx := context.Background()
	_, err := h.st.Invites.MarkScheduled(ctx, invite.KindInvite, h.account.Event(t, eventfixture.Event{CustomerReference: "C-1"}), time.Now())
	require.NoError(t, err)
	ds, _, err := h.st.Webhooks.ListWebhookDeliveries(ctx, ep.AccountID, ep.ID, webhookdb.DeliveryPending, store.Page{Limit: 1})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	return workflows.WebhookInput{DeliveryID: ds[0].ID, EndpointID: ep.ID, AccountID: ep.AccountID, Type: ds[0].Type}
}

func (h *hookHarness) stored(t *testing.T, in workflows.WebhookInput) webhookdb.WebhookDelivery {
	t.Helper()
	att, err := h.st.Webhooks.LoadWebhookAttempt(context.Background(), in.DeliveryID)
	require.NoError(t, err)
	return att.Delivery
}

func TestDeliverWebhookSignsAndSucceeds(t *testing.T) {
	t.Parallel()
	h := newHookHarness(t, webhook.NewClient(webhook.Options{AllowPrivate: true}))
	ep, secret := h.endpoint(t, "")
	rc := newHookReceiver(t, secret, nil)
	_, err := h.st.Webhooks.UpdateWebhookEndpoint(context.Background(), ep.AccountID, ep.ID, webhookdb.WebhookEndpointUpdate{URL: &rc.URL})
	require.NoError(t, err)
	in := h.delivery(t, ep)

	res, err := h.acts.DeliverWebhook(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, workflows.WebhookResult{Status: workflows.WebhookSucceeded, Attempts: 1, LastStatusCode: 204}, res)
	reqs := rc.requests()
	require.Len(t, reqs, 1)
	assert.NoError(t, reqs[0].verifyErr, "the reference library verifies the signature")
	assert.Equal(t, in.DeliveryID, reqs[0].header.Get("webhook-id"))
	assert.Equal(t, string(h.stored(t, in).Payload), string(reqs[0].body), "the stored bytes are sent")
	assert.Equal(t, "application/json", reqs[0].header.Get("Content-Type"))

	// Decided: running the activity again (a duplicate run) sends nothing.
	res, err = h.acts.DeliverWebhook(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, workflows.WebhookSucceeded, res.Status)
	assert.Len(t, rc.requests(), 1)
	assert.Contains(t, scrapeMetrics(t, h.metrics), `touchpoint_webhook_deliveries_total{outcome="succeeded"} 1`)
}

func TestDeliverWebhookFailsThenRecovers(t *testing.T) {
	t.Parallel()
	h := newHookHarness(t, webhook.NewClient(webhook.Options{AllowPrivate: true}))
	ep, secret := h.endpoint(t, "https://placeholder.example")
	rc := newHookReceiver(t, secret, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	_, err := h.st.Webhooks.UpdateWebhookEndpoint(context.Background(), ep.AccountID, ep.ID, webhookdb.WebhookEndpointUpdate{URL: &rc.URL})
	require.NoError(t, err)
	in := h.delivery(t, ep)

	_, err = h.acts.DeliverWebhook(context.Background(), in)
	appError(t, err, workflows.ErrTypeWebhookAttempt, true)
	assert.Contains(t, err.Error(), "503 Service Unavailable")
	d := h.stored(t, in)
	assert.Equal(t, webhookdb.DeliveryPending, d.Status)
	assert.Equal(t, 1, d.Attempts)
	assert.EqualValues(t, 503, d.LastStatusCode.Int32)

	res, err := h.acts.DeliverWebhook(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, workflows.WebhookResult{Status: workflows.WebhookSucceeded, Attempts: 2, LastStatusCode: 200}, res)
	reqs := rc.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0].header.Get("webhook-id"), reqs[1].header.Get("webhook-id"), "the same webhook-id on the retry")
	assert.Equal(t, reqs[0].body, reqs[1].body, "and the same body")
	for _, r := range reqs {
		assert.NoError(t, r.verifyErr)
	}
}

func TestDeliverWebhookGoneDisablesTheEndpoint(t *testing.T) {
	t.Parallel()
	h := newHookHarness(t, webhook.NewClient(webhook.Options{AllowPrivate: true}))
	ep, secret := h.endpoint(t, "https://placeholder.example")
	rc := newHookReceiver(t, secret, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) })
	_, err := h.st.Webhooks.UpdateWebhookEndpoint(context.Background(), ep.AccountID, ep.ID, webhookdb.WebhookEndpointUpdate{URL: &rc.URL})
	require.NoError(t, err)
	in, waiting := h.delivery(t, ep), h.delivery(t, ep)

	res, err := h.acts.DeliverWebhook(context.Background(), in)
	require.NoError(t, err, "decided: no retry")
	assert.Equal(t, workflows.WebhookFailed, res.Status)
	assert.Equal(t, 410, res.LastStatusCode)
	got, err := h.st.Webhooks.WebhookEndpoint(context.Background(), ep.AccountID, ep.ID)
	require.NoError(t, err)
	assert.False(t, got.Enabled)

	res, err = h.acts.DeliverWebhook(context.Background(), waiting)
	require.NoError(t, err)
	assert.Equal(t, workflows.WebhookFailed, res.Status, "the endpoint's other deliveries are given up")
	assert.Len(t, rc.requests(), 1, "and not sent")
	assert.Contains(t, scrapeMetrics(t, h.metrics), `touchpoint_webhook_deliveries_total{outcome="gone"} 1`)
}

func TestDeliverWebhookTimesOut(t *testing.T) {
	t.Parallel()
	h := newHookHarness(t, webhook.NewClient(webhook.Options{AllowPrivate: true, Timeout: 300 * time.Millisecond}))
	ep, secret := h.endpoint(t, "https://placeholder.example")
	release := make(chan struct{})
	rc := newHookReceiver(t, secret, func(_ int, w http.ResponseWriter, r *http.Request) {
		select { // hangs until the client gives up (or the test ends)
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	_, err := h.st.Webhooks.UpdateWebhookEndpoint(context.Background(), ep.AccountID, ep.ID, webhookdb.WebhookEndpointUpdate{URL: &rc.URL})
	require.NoError(t, err)
	in := h.delivery(t, ep)

	_, err = h.acts.DeliverWebhook(context.Background(), in)
	appError(t, err, workflows.ErrTypeWebhookAttempt, true)
	d := h.stored(t, in)
	assert.Equal(t, webhookdb.DeliveryPending, d.Status)
	assert.False(t, d.LastStatusCode.Valid)
	assert.Equal(t, "no answer within 300ms", d.LastError.String)
	// The attempt's log says it went unanswered, and how long it waited.
	require.Len(t, d.AttemptLog, 1)
	assert.Zero(t, d.AttemptLog[0].StatusCode)
	assert.Equal(t, "no answer within 300ms", d.AttemptLog[0].Error)
	assert.GreaterOrEqual(t, d.AttemptLog[0].TookMs, int64(300))
}

// TestDeliverWebhookRefusesPrivateAddresses: without AllowPrivate no
// connection is made to a loopback, link-local or private address, even
// through a host name that resolves to one. The refusal happens before
// connecting, so nothing is sent anywhere.
func TestDeliverWebhookRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	var contacted sync.Mutex
	hits := 0
	local := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		contacted.Lock()
		hits++
		contacted.Unlock()
	}))
	t.Cleanup(local.Close)
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "hooks.internal.example" {
			return []netip.Addr{netip.MustParseAddr("10.0.0.1")}, nil
		}
		return nil, errors.New("no such host")
	}
	h := newHookHarness(t, webhook.NewClient(webhook.Options{LookupIP: lookup}))

	tests := []struct{ name, url, want string }{
		{"loopback", "https://127.0.0.1:" + portOf(t, local.URL) + "/hooks", "loopback"},
		{"cloud metadata", "https://169.254.169.254/latest/meta-data", "link-local"},
		{"a name resolving to 10.0.0.1", "https://hooks.internal.example/hooks", "private"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep, _ := h.endpoint(t, tt.url)
			in := h.delivery(t, ep)
			_, err := h.acts.DeliverWebhook(context.Background(), in)
			appError(t, err, workflows.ErrTypeWebhookAttempt, true)
			d := h.stored(t, in)
			assert.Equal(t, "the endpoint's host is not a public address ("+tt.want+"); deliveries to it are refused", d.LastError.String)
			assert.False(t, d.LastStatusCode.Valid)
		})
	}
	contacted.Lock()
	defer contacted.Unlock()
	assert.Zero(t, hits, "the local server was never reached")
}

func TestDeliverWebhookDuringARotation(t *testing.T) {
	t.Parallel()
	h := newHookHarness(t, webhook.NewClient(webhook.Options{AllowPrivate: true}))
	ep, oldSecret := h.endpoint(t, "https://placeholder.example")
	newSecret, err := webhook.NewSecret()
	require.NoError(t, err)
	sealed, err := h.box.Seal(ep.ID, newSecret)
	require.NoError(t, err)
	_, err = h.st.Webhooks.RotateWebhookSecret(context.Background(), ep.AccountID, ep.ID, sealed, 24*time.Hour)
	require.NoError(t, err)

	// A receiver that still has the old secret and one that has the new
	// one both verify the same delivery.
	for _, secret := range []string{oldSecret, newSecret} {
		rc := newHookReceiver(t, secret, nil)
		_, err := h.st.Webhooks.UpdateWebhookEndpoint(context.Background(), ep.AccountID, ep.ID, webhookdb.WebhookEndpointUpdate{URL: &rc.URL})
		require.NoError(t, err)
		_, err = h.acts.DeliverWebhook(context.Background(), h.delivery(t, ep))
		require.NoError(t, err)
		reqs := rc.requests()
		require.Len(t, reqs, 1)
		assert.NoError(t, reqs[0].verifyErr)
		assert.Regexp(t, `^v1,\S+ v1,\S+$`, reqs[0].header.Get("webhook-signature"), "two signatures")
	}
}

func TestDeliverWebhookThatCannotBeSent(t *testing.T) {
	t.Parallel()
	h := newHookHarness(t, webhook.NewClient(webhook.Options{AllowPrivate: true}))
	ctx := context.Background()
	rc := newHookReceiver(t, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", nil)

	// A disabled endpoint: given up unsent. (Disabling gives up the
	// pending deliveries at once; this one was written by a change that
	// raced with the disabling, as the SQL below imitates.)
	ep, _ := h.endpoint(t, rc.URL)
	in := h.delivery(t, ep)
	_, err := h.st.DB().Exec(`UPDATE webhook_endpoints SET enabled = false WHERE id = $1`, ep.ID)
	require.NoError(t, err)
	res, err := h.acts.DeliverWebhook(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, workflows.WebhookFailed, res.Status)
	assert.Equal(t, "endpoint disabled", res.LastError)

	// A deleted endpoint: nothing left to deliver.
	ep, _ = h.endpoint(t, rc.URL)
	in = h.delivery(t, ep)
	require.NoError(t, h.st.Webhooks.DeleteWebhookEndpoint(ctx, ep.AccountID, ep.ID))
	res, err = h.acts.DeliverWebhook(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, workflows.WebhookDeleted, res.Status)
	res, err = h.acts.GiveUpWebhook(ctx, workflows.GiveUpWebhookInput{DeliveryID: in.DeliveryID, Reason: "x"})
	require.NoError(t, err)
	assert.Equal(t, workflows.WebhookDeleted, res.Status)

	// A secret sealed under another key: recorded and retried, unsent.
	other, err := webhook.NewSecretBox(bytes.Repeat([]byte{2}, 32))
	require.NoError(t, err)
	ep, _ = h.endpoint(t, rc.URL)
	in = h.delivery(t, ep)
	h.acts.Secrets = other
	_, err = h.acts.DeliverWebhook(ctx, in)
	appError(t, err, workflows.ErrTypeWebhookAttempt, true)
	assert.Contains(t, h.stored(t, in).LastError.String, "secret could not be read")
	assert.Empty(t, rc.requests(), "nothing was sent")

	// Retries exhausted: given up with the last attempt's error.
	res, err = h.acts.GiveUpWebhook(ctx, workflows.GiveUpWebhookInput{DeliveryID: in.DeliveryID, Reason: "not delivered after retrying for 3 days"})
	require.NoError(t, err)
	assert.Equal(t, workflows.WebhookFailed, res.Status)
	assert.Contains(t, res.LastError, "secret could not be read")
	assert.Contains(t, scrapeMetrics(t, h.metrics), `touchpoint_webhook_deliveries_total{outcome="failed"} 2`)
}

func portOf(t *testing.T, rawURL string) string {
	t.Helper()
	ap, err := netip.ParseAddrPort(rawURL[len("https://"):])
	require.NoError(t, err)
	return strconv.Itoa(int(ap.Port()))
}

func scrapeMetrics(t *testing.T, m *metrics.Set) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return rec.Body.String()
}
