package webhookstack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"golang.org/x/sync/errgroup"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/pages"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/starter"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/webhook"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

const (
	secretKey = "webhookstack-test-secret-key-0123456789abcdef"
	audience  = "http://api.webhookstack.test"
)

// stack is Touchpoint in one test process: the API (with its issuer, the
// outbox starter and its signals), the invite worker and the webhook
// worker with its starter, on a fresh database and a real Temporal server,
// sending mail to a real SMTP listener and text messages to a local
// server that speaks the SMS provider's API.
type stack struct {
	st       *store.Store
	temporal client.Client
	api      *httptest.Server
	smtp     *smtptest.Server
	texts    *smsProvider
	feedback *signedlink.Links
	metrics  *metrics.Set
	logger   *slog.Logger
	token    string
	account  string
	channel  string
}

// stackOptions tune the webhook side for test speed.
type stackOptions struct {
	// Timeout of one delivery attempt (production: 10 s).
	AttemptTimeout time.Duration
	// Workflow is the delivery workflow's retries.
	Workflow workflows.WebhookOptions
	// NoWebhookStarter leaves the webhook starter out, for a test that
	// runs its own.
	NoWebhookStarter bool
}

func newStack(t *testing.T, opts stackOptions) *stack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))

	db := testdb.New(t)
	s := &stack{st: storeset.New(db, "PT0S"), metrics: metrics.New()}
	ts := testtemporal.Start(t, testtemporal.Options{SearchAttributes: workflows.SearchAttributes()})
	var err error
	s.temporal, err = client.Dial(client.Options{HostPort: ts.Address(), Logger: sdklog.NewStructuredLogger(quiet)})
	require.NoError(t, err)

	// The issuer and the verifier of its tokens.
	issuerSrv := httptest.NewUnstartedServer(nil)
	issuerURL := "http://" + issuerSrv.Listener.Addr().String()
	issuer, err := authserver.New(ctx, authserver.Options{Store: s.st.Auth, Issuer: issuerURL, Audience: audience, SecretKey: secretKey, Logger: quiet})
	require.NoError(t, err)
	issuerSrv.Config.Handler = issuer
	issuerSrv.Start()
	verifier, err := auth.New(auth.Options{Store: s.st.Auth, Issuers: []auth.Issuer{{URL: issuerURL}}, BuiltInIssuer: issuerURL,
		Audience: audience, DiscoveryRetry: 10 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)

	secrets, err := webhook.NewSecretBox(secretkey.Derive(secretKey, secretkey.WebhookSecret))
	require.NoError(t, err)
	s.feedback, err = signedlink.New("https://api.webhookstack.test/feedback", secretkey.Derive(secretKey, secretkey.FeedbackLink))
	require.NoError(t, err)
	unsub, err := signedlink.New("https://api.webhookstack.test"+pages.UnsubscribePath, secretkey.Derive(secretKey, secretkey.Unsubscribe))
	require.NoError(t, err)
	pubKeys, err := publication.NewKeys(s.st.Reviews, secretkey.Derive(secretKey, secretkey.PublicationKey), nil)
	require.NoError(t, err)
	notifier := starter.NewNotifier(s.st.Events, quiet)
	s.api = httptest.NewUnstartedServer(nil)
	apiURL := "http://" + s.api.Listener.Addr().String()
	s.texts = newSMSProvider(t, apiURL+sms.StatusPath)
	api := apiserver.New(apiserver.Options{Events: s.st.Events, TemplateStore: s.st.Templates, Suppressions: s.st.Suppressions,
		Reports: s.st.Reports, Erasure: s.st, DB: s.st.DB(), Accounts: s.st.Accounts, Stats: s.st.Stats, Webhooks: s.st.Webhooks, Reviews: s.st.Reviews, Invites: s.st.Invites, Auth: verifier, Logger: quiet, Workflows: s.temporal, Notify: notifier.Poke,
		FeedbackLinks: s.feedback, UnsubscribeLinks: unsub, WebhookSecrets: secrets, WebhookAllowPrivate: true,
		PublicationKeys: pubKeys,
		SMS:             &sms.CallbackKeys{AuthToken: smsAuthToken, StatusURL: s.texts.statusURL, InboundURL: apiURL + sms.InboundPath}})
	s.api.Config.Handler = api
	s.api.Start()
	s.metrics.WatchWebhooks(s.st.Webhooks.WebhookBacklog)

	// The workers.
	s.smtp = smtptest.Start(t, smtptest.Options{})
	mailer, err := mail.NewSMTP(s.smtp.URL(), "Touchpoint <invites@touchpoint.example>", mail.SMTPOptions{})
	require.NoError(t, err)
	tpl, err := templates.New()
	require.NoError(t, err)
	smsTpl, err := templates.NewSMS()
	require.NoError(t, err)
	invites := worker.New(s.temporal, &activities.Activities{Invites: s.st.Invites, TemplateStore: s.st.Templates, Suppressions: s.st.Suppressions, Accounts: s.st.Accounts, Mailer: mailer, Templates: tpl, Feedback: s.feedback,
		Unsubscribe: unsub, SMS: s.texts.sender(t), SMSTemplates: smsTpl, Logger: quiet},
		worker.Options{Stuck: s.st.Invites, Outbox: s.st.Events, Workflow: workflows.Options{SendInitialInterval: 100 * time.Millisecond}})
	hooks := worker.NewWebhooks(s.temporal, &activities.Webhooks{Store: s.st.Webhooks, Secrets: secrets, Metrics: s.metrics, Logger: logger,
		Client: webhook.NewClient(webhook.Options{AllowPrivate: true, Timeout: opts.AttemptTimeout})}, worker.WebhookOptions{Workflow: opts.Workflow})

	parts := []func(context.Context) error{
		verifier.Run, api.Run, notifier.Run,
		(&starter.Starter{Outbox: s.st.Events, Temporal: s.temporal, Logger: logger, DatabaseURL: testdb.URL(t, db), Tuning: starter.Tuning{Sweep: 100 * time.Millisecond}}).Run,
		func(ctx context.Context) error { return worker.Run(ctx, s.temporal, invites, quiet) },
		func(ctx context.Context) error { return worker.Run(ctx, s.temporal, hooks, quiet) },
	}
	s.logger = logger
	if !opts.NoWebhookStarter {
		parts = append(parts, s.webhookStarter().Run)
	}
	var g errgroup.Group
	for _, p := range parts {
		g.Go(func() error { return p(ctx) })
	}
	t.Cleanup(func() {
		s.api.Close()
		issuerSrv.Close()
		cancel()
		assert.NoError(t, g.Wait())
		s.temporal.Close()
	})
	require.Eventually(t, func() bool { return verifier.Ready() == nil }, 10*time.Second, 10*time.Millisecond)

	acc, ch, err := s.st.Accounts.CreateAccount(ctx, "Acme")
	require.NoError(t, err)
	s.account, s.channel = acc.ID, ch.ID
	secret, hash := authserver.NewClientSecret(secretkey.Derive(secretKey, secretkey.ClientSecret))
	c, err := s.st.Auth.CreateClient(ctx, acc.ID, "test", auth.GroupFull, hash)
	require.NoError(t, err)
	res, err := http.PostForm(issuerURL+authserver.TokenPath, url.Values{"grant_type": {"client_credentials"},
		"client_id": {c.ClientID}, "client_secret": {secret}, "audience": {audience}})
	require.NoError(t, err)
	defer res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&tok))
	require.NotEmpty(t, tok.AccessToken)
	s.token = tok.AccessToken

	// An event type whose invites go out at once.
	s.call(t, http.MethodPost, "/event-types", map[string]any{"name": "checkout"}, http.StatusCreated)
	return s
}

func (s *stack) webhookStarter() *starter.WebhookStarter {
	return &starter.WebhookStarter{Store: s.st.Webhooks, Temporal: s.temporal, Logger: s.logger, Tuning: starter.Tuning{Sweep: 50 * time.Millisecond}}
}

// webhook registers url for events and returns its id and secret; the
// endpoint is deleted when the test ends (before its receiver stops).
func (s *stack) webhook(t testing.TB, url string, events ...string) (id, secret string) {
	t.Helper()
	hook := s.call(t, http.MethodPost, "/webhooks", map[string]any{"url": url, "events": events}, http.StatusCreated)
	id = hook["id"].(string)
	t.Cleanup(func() { s.call(t, http.MethodDelete, "/webhooks/"+id, nil, http.StatusNoContent) })
	return id, hook["secret"].(string)
}

// call sends a JSON request to the API and requires the status; it
// returns the JSON answer (nil for none).
func (s *stack) call(t testing.TB, method, path string, body any, want int) map[string]any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.api.URL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, want, res.StatusCode, "%s %s: %s", method, path, raw)
	if len(raw) == 0 {
		return nil
	}
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return out
}

// event posts an event for email and returns its id.
func (s *stack) event(t testing.TB, email, reference string) string {
	t.Helper()
	ev := s.call(t, http.MethodPost, "/events", map[string]any{
		"customer": map[string]any{"email": email, "firstName": "Jane", "lastName": "Doe", "reference": reference},
		"type":     "checkout", "channel": map[string]any{"id": s.channel},
		"transaction": map[string]any{"reference": "T-" + reference, "date": time.Now().UTC().Format(time.RFC3339)},
		"system":      "shop", "systemVersion": "1"}, http.StatusAccepted)
	return ev["EventRef"].(string)
}

// deliveries lists an endpoint's deliveries through the API, newest first.
func (s *stack) deliveries(t testing.TB, hook string) []map[string]any {
	t.Helper()
	list := s.call(t, http.MethodGet, "/webhooks/"+hook+"/deliveries", nil, http.StatusOK)
	var out []map[string]any
	for _, it := range list["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// receiver is a shop's webhook endpoint on 127.0.0.1 that verifies each
// request with the Standard Webhooks reference library.
type receiver struct {
	*httptest.Server
	verifier *standardwebhooks.Webhook
	mu       sync.Mutex
	got      []received
	// answer answers request n (0-based) after it was recorded; nil: 204.
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

type received struct {
	ID        string // webhook-id
	Signature string
	Type      string
	Data      map[string]any
	Body      string
	VerifyErr error
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got := received{ID: r.Header.Get("webhook-id"), Signature: r.Header.Get("webhook-signature"), Body: string(body)}
		var msg struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if json.Unmarshal(body, &msg) == nil {
			got.Type, got.Data = msg.Type, msg.Data
		}
		rc.mu.Lock()
		if rc.verifier == nil {
			got.VerifyErr = standardwebhooks.ErrNoMatchingSignature
		} else {
			got.VerifyErr = rc.verifier.Verify(body, r.Header)
		}
		n := len(rc.got)
		rc.got = append(rc.got, got)
		answer := rc.answer
		rc.mu.Unlock()
		if answer != nil {
			answer(n, w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// trust makes the receiver verify with secret.
func (rc *receiver) trust(t *testing.T, secret string) {
	t.Helper()
	v, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	rc.mu.Lock()
	rc.verifier = v
	rc.mu.Unlock()
}

func (rc *receiver) respond(f func(n int, w http.ResponseWriter, r *http.Request)) {
	rc.mu.Lock()
	rc.answer = f
	rc.mu.Unlock()
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// ofType are the requests of one event type.
func (rc *receiver) ofType(typ string) []received {
	var out []received
	for _, r := range rc.requests() {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// noPII fails when a body carries what identifies the customer.
func noPII(t assert.TestingT, body string) {
	for _, s := range []string{"jane", "doe", "@example.com"} {
		assert.NotContains(t, strings.ToLower(body), s, "no customer data in a webhook")
	}
}
