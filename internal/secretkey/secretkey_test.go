package secretkey_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/secretkey"
)

func TestDerive(t *testing.T) {
	t.Parallel()
	const master = "0123456789abcdef0123456789abcdef"
	a := secretkey.Derive(master, secretkey.ClientSecret)
	require.Len(t, a, 32)
	assert.Equal(t, a, secretkey.Derive(master, secretkey.ClientSecret), "deterministic")
	assert.NotEqual(t, a, secretkey.Derive(master, secretkey.SigningKeySeal), "purposes are separated")
	assert.NotEqual(t, a, secretkey.Derive(master, secretkey.FeedbackLink))
	assert.NotEqual(t, a, secretkey.Derive(master+"x", secretkey.ClientSecret), "depends on the master")
}

// A sealed value opens only under its key and its label, and only intact.
func TestBox(t *testing.T) {
	t.Parallel()
	box, err := secretkey.NewBox(secretkey.Derive("master", secretkey.WebhookSecret))
	require.NoError(t, err)
	sealed, err := box.Seal([]byte("private"), []byte("row-1"))
	require.NoError(t, err)
	again, err := box.Seal([]byte("private"), []byte("row-1"))
	require.NoError(t, err)
	assert.NotEqual(t, sealed, again, "a fresh nonce each time")

	plain, err := box.Open(sealed, []byte("row-1"))
	require.NoError(t, err)
	assert.Equal(t, "private", string(plain))

	other, err := secretkey.NewBox(secretkey.Derive("another master", secretkey.WebhookSecret))
	require.NoError(t, err)
	tampered := append([]byte(nil), sealed...)
	tampered[len(tampered)-1] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"another row":    func() ([]byte, error) { return box.Open(sealed, []byte("row-2")) },
		"another key":    func() ([]byte, error) { return other.Open(sealed, []byte("row-1")) },
		"a changed byte": func() ([]byte, error) { return box.Open(tampered, []byte("row-1")) },
		"too short":      func() ([]byte, error) { return box.Open(sealed[:10], []byte("row-1")) },
		"nothing at all": func() ([]byte, error) { return box.Open(nil, []byte("row-1")) },
	} {
		_, err := open()
		assert.ErrorIs(t, err, secretkey.ErrSealed, name)
	}
	_, err = secretkey.NewBox([]byte("short"))
	assert.Error(t, err)
}
