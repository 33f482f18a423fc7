package opaque_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/internal/opaque"
)

func TestNewTokensAreWellFormedAndDiffer(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		tok := opaque.New()
		assert.True(t, opaque.WellFormed(tok), tok)
		assert.False(t, seen[tok], "a token came twice")
		seen[tok] = true
	}
}

func TestWellFormed(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM":  true, // RFC 7636's code challenge
		"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c":   false,
		"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cMM": false,
		"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM":  false, // base64, not base64url
		"": false,
	} {
		assert.Equal(t, want, opaque.WellFormed(s), "%q", s)
	}
}

func TestHashIsSHA256(t *testing.T) {
	t.Parallel()
	// SHA-256 of "abc" (FIPS 180-2, appendix B.1).
	assert.Equal(t, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", hex.EncodeToString(opaque.Hash("abc")))
	h := sha256.Sum256([]byte("x"))
	assert.Equal(t, h[:], opaque.Hash("x"))
}
