package webhook_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/webhook"
)

func TestSecretBox(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, 32)
	box, err := webhook.NewSecretBox(key)
	require.NoError(t, err)
	secret, err := webhook.NewSecret()
	require.NoError(t, err)

	sealed, err := box.Seal("whk-a", secret)
	require.NoError(t, err)
	assert.NotContains(t, string(sealed), secret[len(webhook.SecretPrefix):], "the secret is not stored in the clear")
	again, err := box.Seal("whk-a", secret)
	require.NoError(t, err)
	assert.NotEqual(t, sealed, again, "every seal has its own nonce")

	got, err := box.Open("whk-a", sealed)
	require.NoError(t, err)
	assert.Equal(t, secret, got)

	other, err := webhook.NewSecretBox(bytes.Repeat([]byte{8}, 32))
	require.NoError(t, err)
	damaged := append([]byte(nil), sealed...)
	damaged[len(damaged)-1] ^= 1
	tests := []struct {
		name       string
		box        *webhook.SecretBox
		endpointID string
		sealed     []byte
	}{
		{"another endpoint's row", box, "whk-b", sealed},
		{"another key", other, "whk-a", sealed},
		{"damaged", box, "whk-a", damaged},
		{"too short", box, "whk-a", sealed[:10]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.box.Open(tt.endpointID, tt.sealed)
			assert.ErrorIs(t, err, webhook.ErrSealedSecret)
		})
	}

	_, err = webhook.NewSecretBox(key[:16])
	assert.Error(t, err, "a key of another size")
}
