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
