package webhook_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/webhook"
)

// The example published with the Standard Webhooks specification's
// reference libraries (their TestWebhookSign and its ports).
const (
	specSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specMsgID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTimestamp = 1614265330
	specPayload   = `{"test": 2432232314}`
	specSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignSpecificationExample(t *testing.T) {
	t.Parallel()
	got, err := webhook.Sign(specMsgID, time.Unix(specTimestamp, 0), []byte(specPayload), specSecret)
	require.NoError(t, err)
	assert.Equal(t, specSignature, got)

	// Only the instant counts, not the zone it is written in.
	got, err = webhook.Sign(specMsgID, time.Unix(specTimestamp, 0).In(time.FixedZone("x", 5*3600)), []byte(specPayload), specSecret)
	require.NoError(t, err)
	assert.Equal(t, specSignature, got)
}

// headers are the three headers a receiver verifies.
func headers(id string, ts time.Time, sig string) http.Header {
	h := http.Header{}
	h.Set(webhook.HeaderID, id)
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(webhook.HeaderSignature, sig)
	return h
}

// verify checks a signature with the reference Go library, which shares no
// code with ours.
func verify(t *testing.T, secret string, body []byte, h http.Header) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	return wh.Verify(body, h)
}

func TestSignVerifiedByReferenceLibrary(t *testing.T) {
	t.Parallel()
	current, err := webhook.NewSecret()
	require.NoError(t, err)
	previous, err := webhook.NewSecret()
	require.NoError(t, err)
	unrelated, err := webhook.NewSecret()
	require.NoError(t, err)
	body := []byte(`{"type":"invite.sent","timestamp":"2026-11-22T06:00:00.000Z","data":{"eventId":"evt-1"}}`)
	now := time.Now()

	tests := []struct {
		name     string
		signWith []string
		verifier string
		body     []byte
		id       string
		ok       bool
	}{
		{"one secret", []string{current}, current, body, "msg-1", true},
		{"rotation: the new secret verifies", []string{current, previous}, current, body, "msg-1", true},
		{"rotation: the old secret verifies", []string{current, previous}, previous, body, "msg-1", true},
		{"another secret does not verify", []string{current, previous}, unrelated, body, "msg-1", false},
		{"a changed body does not verify", []string{current}, current, append([]byte(nil), body[:len(body)-1]...), "msg-1", false},
		{"a changed id does not verify", []string{current}, current, body, "msg-2", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sig, err := webhook.Sign("msg-1", now, body, tt.signWith...)
			require.NoError(t, err)
			assert.Len(t, strings.Split(sig, " "), len(tt.signWith), "one entry per secret")
			err = verify(t, tt.verifier, tt.body, headers(tt.id, now, sig))
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, standardwebhooks.ErrNoMatchingSignature)
			}
		})
	}
}

func TestSignRotationEntriesInOrder(t *testing.T) {
	t.Parallel()
	other, err := webhook.NewSecret()
	require.NoError(t, err)
	ts := time.Unix(specTimestamp, 0)
	both, err := webhook.Sign(specMsgID, ts, []byte(specPayload), specSecret, other)
	require.NoError(t, err)
	second, err := webhook.Sign(specMsgID, ts, []byte(specPayload), other)
	require.NoError(t, err)
	assert.Equal(t, specSignature+" "+second, both)
}

func TestSignRejects(t *testing.T) {
	t.Parallel()
	ts := time.Unix(specTimestamp, 0)
	tests := []struct {
		name    string
		id      string
		secrets []string
		want    string
	}{
		{"no secret", "msg-1", nil, "no secret"},
		{"empty secret", "msg-1", []string{""}, "secret 1"},
		{"bad second secret", "msg-1", []string{specSecret, "whsec_short"}, "secret 2"},
		{"empty id", "", []string{specSecret}, "empty message id"},
		{"id with a dot", "msg.1", []string{specSecret}, "without '.'"},
		{"id with a space", "msg 1", []string{specSecret}, "printable ASCII"},
		{"id with a newline", "msg-1\r\nx-injected: 1", []string{specSecret}, "printable ASCII"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sig, err := webhook.Sign(tt.id, ts, []byte(specPayload), tt.secrets...)
			require.ErrorContains(t, err, tt.want)
			assert.Empty(t, sig)
		})
	}
}

func BenchmarkSign(b *testing.B) {
	body := []byte(strings.Repeat("x", 1024))
	ts := time.Unix(specTimestamp, 0)
	for b.Loop() {
		if _, err := webhook.Sign(specMsgID, ts, body, specSecret); err != nil {
			b.Fatal(err)
		}
	}
}
