package webhook_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/webhook"
)

func TestNewSecret(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 20 {
		s, err := webhook.NewSecret()
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(s, "whsec_"), s)
		raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		require.NoError(t, err, "standard base64 after the prefix")
		assert.Len(t, raw, 32)
		key, err := webhook.ParseSecret(s)
		require.NoError(t, err)
		assert.Equal(t, raw, key)
		assert.False(t, seen[s], "secrets repeat")
		seen[s] = true
	}
}

func TestParseSecret(t *testing.T) {
	t.Parallel()
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	tests := []struct {
		name    string
		secret  string
		wantLen int // 0: an error is expected
	}{
		{"specification example (24 bytes)", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 24},
		{"32 bytes", "whsec_" + b64(32), 32},
		{"64 bytes", "whsec_" + b64(64), 64},
		{"no prefix", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 0},
		{"other prefix", "whsk_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 0},
		{"empty", "", 0},
		{"prefix only", "whsec_", 0},
		{"not base64", "whsec_not base64 at all!", 0},
		{"url-safe base64", "whsec_" + strings.Repeat("-_", 16), 0},
		{"too short", "whsec_" + b64(23), 0},
		{"too long", "whsec_" + b64(65), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			key, err := webhook.ParseSecret(tt.secret)
			if tt.wantLen == 0 {
				require.ErrorIs(t, err, webhook.ErrInvalidSecret)
				return
			}
			require.NoError(t, err)
			assert.Len(t, key, tt.wantLen)
		})
	}
}
