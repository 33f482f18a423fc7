package bench

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/internal/testclock"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/webhook"
)

// TestBenchKeepsItsTokenFresh runs bench's client against the real issuer
// and API, whose tokens here live one second from their last use: a run
// that waits longer than that between two calls (a baseline, a drain)
// still gets its answers, with a new token got before the old one lapsed,
// or after the API refused it.
func TestBenchKeepsItsTokenFresh(t *testing.T) {
	t.Parallel()
	const idle = time.Second
	// One clock for the issuer, the API and bench, moved by hand: the
	// tokens lapse when the test says so, not after a real wait.
	clock := testclock.New(time.Now())
	ctx := t.Context()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st := storeset.New(testdb.New(t), "P7D")
	acc, ch, err := st.Accounts.CreateAccount(ctx, "Bench")
	require.NoError(t, err)
	const key = "bench-token-test-secret-key-0123456789abcdef"
	secret, hash := authserver.NewClientSecret(secretkey.Derive(key, secretkey.ClientSecret))
	client, err := st.Auth.CreateClient(ctx, acc.ID, "bench", auth.GroupFull, hash)
	require.NoError(t, err)

	apiSrv, authSrv := httptest.NewUnstartedServer(nil), httptest.NewUnstartedServer(nil)
	apiURL, authURL := "http://"+apiSrv.Listener.Addr().String(), "http://"+authSrv.Listener.Addr().String()
	issuer, err := authserver.New(ctx, authserver.Options{Store: st.Auth, Issuer: authURL, Audience: apiURL, SecretKey: key,
		IdleTimeout: idle, Logger: quiet, Now: clock.Now})
	require.NoError(t, err)
	authSrv.Config.Handler = issuer
	authSrv.Start()
	t.Cleanup(authSrv.Close)
	verifier, err := auth.New(auth.Options{Store: st.Auth, Issuers: []auth.Issuer{{URL: authURL}}, BuiltInIssuer: authURL,
		Audience: apiURL, IdleTimeout: idle, FlushInterval: 100 * time.Millisecond, DiscoveryRetry: 10 * time.Millisecond, Logger: quiet,
		Now: clock.Now})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- verifier.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		assert.NoError(t, <-done)
	})
	fb, err := signedlink.New(apiURL+"/feedback", secretkey.Derive(key, secretkey.FeedbackLink))
	require.NoError(t, err)
	unsub, err := signedlink.New(apiURL+"/unsubscribe", secretkey.Derive(key, secretkey.Unsubscribe))
	require.NoError(t, err)
	secrets, err := webhook.NewSecretBox(secretkey.Derive(key, secretkey.WebhookSecret))
	require.NoError(t, err)
	pubKeys, err := publication.NewKeys(st.Reviews, secretkey.Derive(key, secretkey.PublicationKey), nil)
	require.NoError(t, err)
	apiSrv.Config.Handler = apiserver.New(apiserver.Options{Events: st.Events, TemplateStore: st.Templates, Suppressions: st.Suppressions,
		Reports: st.Reports, Erasure: st, DB: st.DB(), Accounts: st.Accounts, Stats: st.Stats, Webhooks: st.Webhooks, Reviews: st.Reviews, Invites: st.Invites, Auth: verifier, Logger: quiet,
		FeedbackLinks: fb, UnsubscribeLinks: unsub, WebhookSecrets: secrets, PublicationKeys: pubKeys})
	apiSrv.Start()
	t.Cleanup(apiSrv.Close)

	api, err := newBenchAPI(ctx, Target{BaseURL: apiURL, AuthURL: authURL, ClientID: client.ClientID, ClientSecret: secret,
		ChannelID: ch.ID}, 2)
	require.NoError(t, err)
	api.tokens.mu.Lock()
	api.tokens.now = clock.Now
	api.tokens.mu.Unlock()
	_, err = api.immediateEventType(ctx, "bench-x", "")
	require.NoError(t, err)
	first := api.tokens.token
	require.NotEmpty(t, first)
	assert.Equal(t, idle, api.tokens.idle, "the lifetime the issuer gives (expires_in)")

	// Idle past the token's lifetime, bench gets a new one before it calls.
	clock.Advance(2 * idle)
	_, err = api.listEvents(ctx, "bench-x")
	require.NoError(t, err)
	second := api.tokens.token
	assert.NotEqual(t, first, second, "a new token")
	res := rawGet(t, apiURL+"/events", first)
	assert.Equal(t, http.StatusUnauthorized, res, "the first token lapsed: the API refuses it")

	// A token bench holds for fresh but the API refuses: bench gets a new
	// one and asks again, once. (Set by hand: the lapsed first one.)
	api.tokens.mu.Lock()
	api.tokens.token, api.tokens.lastUse = first, api.tokens.now()
	api.tokens.mu.Unlock()
	require.Equal(t, http.StatusAccepted, api.post(ctx, benchBodies("bench-x", ch.ID, "fresh", 1)[0]), "the event, after a 401")
	assert.NotEqual(t, first, api.tokens.token)
}

// rawGet sends GET url with token and returns the status.
func rawGet(t *testing.T, url, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}
