package sealedjwk_test

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/sealedjwk"
	"github.com/touchpoint/touchpoint/internal/secretkey"
)

func newBox(t *testing.T, master string) *secretkey.Box {
	t.Helper()
	box, err := secretkey.NewBox(secretkey.Derive(master, secretkey.SigningKeySeal))
	require.NoError(t, err)
	return box
}

func rowLabel(kid string) []byte { return []byte("acc-1/" + kid) }

// thumbprint computes RFC 7638's thumbprint by hand: SHA-256 over the
// required members in lexicographic order, without whitespace.
func thumbprint(t *testing.T, pub crypto.PublicKey) string {
	t.Helper()
	b64 := base64.RawURLEncoding.EncodeToString
	var canonical string
	switch k := pub.(type) {
	case ed25519.PublicKey:
		canonical = `{"crv":"Ed25519","kty":"OKP","x":"` + b64(k) + `"}`
	case *rsa.PublicKey:
		canonical = `{"e":"` + b64(big.NewInt(int64(k.E)).Bytes()) + `","kty":"RSA","n":"` + b64(k.N.Bytes()) + `"}`
	default:
		t.Fatalf("no thumbprint rule for %T", pub)
	}
	sum := sha256.Sum256([]byte(canonical))
	return b64(sum[:])
}

// The algorithms the issuer (RS256) and the publication keys (EdDSA) use.
func testKeys(t *testing.T) map[string]crypto.Signer {
	t.Helper()
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	rs, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return map[string]crypto.Signer{string(jose.EdDSA): ed, string(jose.RS256): rs}
}

// A made key is named by its thumbprint, publishes only its public half,
// seals its private half for the label of its kid, and the signer opened
// from it signs what the published JWK verifies.
func TestMakeAndSignRoundTrip(t *testing.T) {
	t.Parallel()
	box := newBox(t, "master secret")
	for alg, priv := range testKeys(t) {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			var labelled []string
			key, err := sealedjwk.Make(box, priv, alg, func(kid string) []byte {
				labelled = append(labelled, kid)
				return rowLabel(kid)
			})
			require.NoError(t, err)
			assert.Equal(t, thumbprint(t, priv.Public()), key.KID, "kid is the RFC 7638 thumbprint")
			assert.Equal(t, []string{key.KID}, labelled, "sealed for the label of its own kid")

			var members map[string]any
			require.NoError(t, json.Unmarshal([]byte(key.PublicJWK), &members))
			assert.Equal(t, key.KID, members["kid"])
			assert.Equal(t, alg, members["alg"])
			assert.Equal(t, "sig", members["use"])
			for _, private := range []string{"d", "p", "q", "dp", "dq", "qi"} {
				assert.NotContains(t, members, private, "the public JWK carries no private member")
			}
			var pub jose.JSONWebKey
			require.NoError(t, pub.UnmarshalJSON([]byte(key.PublicJWK)))
			assert.True(t, pub.IsPublic())
			assert.Equal(t, priv.Public(), pub.Key)

			der, err := box.Open(key.Sealed, rowLabel(key.KID))
			require.NoError(t, err)
			opened, err := x509.ParsePKCS8PrivateKey(der)
			require.NoError(t, err, "the private half is PKCS #8")
			// Equal compares the key itself: the precomputed CRT values
			// may differ in their leading zero bytes.
			assert.True(t, priv.(interface{ Equal(crypto.PrivateKey) bool }).Equal(opened), "the opened key is the sealed one")

			signer, err := sealedjwk.Signer(box, key.Sealed, rowLabel(key.KID), alg, key.KID, nil)
			require.NoError(t, err)
			jws, err := signer.Sign([]byte("claims"))
			require.NoError(t, err)
			compact, err := jws.CompactSerialize()
			require.NoError(t, err)
			parsed, err := jose.ParseSignedCompact(compact, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)})
			require.NoError(t, err)
			require.Len(t, parsed.Signatures, 1)
			assert.Equal(t, key.KID, parsed.Signatures[0].Header.KeyID, "the signer names the key")
			payload, err := parsed.Verify(pub)
			require.NoError(t, err, "the published key verifies the signature")
			assert.Equal(t, "claims", string(payload))
		})
	}
}

// Each key is sealed afresh: two keys never share a kid or a ciphertext.
func TestMakeNamesEachKey(t *testing.T) {
	t.Parallel()
	box := newBox(t, "master secret")
	_, a, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	_, b, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	ka, err := sealedjwk.Make(box, a, string(jose.EdDSA), rowLabel)
	require.NoError(t, err)
	kb, err := sealedjwk.Make(box, b, string(jose.EdDSA), rowLabel)
	require.NoError(t, err)
	again, err := sealedjwk.Make(box, a, string(jose.EdDSA), rowLabel)
	require.NoError(t, err)
	assert.NotEqual(t, ka.KID, kb.KID)
	assert.Equal(t, ka.KID, again.KID, "the kid depends on the key alone")
	assert.NotEqual(t, ka.Sealed, again.Sealed, "a fresh nonce each time")
}

// A sealed key opens only under the key it was sealed with, for the row
// it was sealed for, and only intact.
func TestSignerRefuses(t *testing.T) {
	t.Parallel()
	box := newBox(t, "master secret")
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	alg := string(jose.EdDSA)
	key, err := sealedjwk.Make(box, priv, alg, rowLabel)
	require.NoError(t, err)

	tampered := append([]byte(nil), key.Sealed...)
	tampered[len(tampered)/2] ^= 0x01
	for name, tc := range map[string]struct {
		box    *secretkey.Box
		sealed []byte
		label  []byte
	}{
		"another master secret": {newBox(t, "another master secret"), key.Sealed, rowLabel(key.KID)},
		"another purpose's key": {func() *secretkey.Box {
			b, err := secretkey.NewBox(secretkey.Derive("master secret", secretkey.WebhookSecret))
			require.NoError(t, err)
			return b
		}(), key.Sealed, rowLabel(key.KID)},
		"another row":        {box, key.Sealed, []byte("acc-2/" + key.KID)},
		"another kid":        {box, key.Sealed, rowLabel("other-kid")},
		"a changed byte":     {box, tampered, rowLabel(key.KID)},
		"cut short":          {box, key.Sealed[:len(key.Sealed)-1], rowLabel(key.KID)},
		"nothing sealed":     {box, nil, rowLabel(key.KID)},
		"only the nonce":     {box, key.Sealed[:12], rowLabel(key.KID)},
		"bytes never sealed": {box, make([]byte, len(key.Sealed)), rowLabel(key.KID)},
	} {
		signer, err := sealedjwk.Signer(tc.box, tc.sealed, tc.label, alg, key.KID, nil)
		assert.ErrorIs(t, err, secretkey.ErrSealed, name)
		assert.Nil(t, signer, name)
	}
}

// What opens but is not a PKCS #8 key, or a key for another algorithm,
// makes no signer.
func TestSignerRefusesWhatIsNoKey(t *testing.T) {
	t.Parallel()
	box := newBox(t, "master secret")
	notAKey, err := box.Seal([]byte("not a key"), rowLabel("kid"))
	require.NoError(t, err)
	_, err = sealedjwk.Signer(box, notAKey, rowLabel("kid"), string(jose.EdDSA), "kid", nil)
	assert.ErrorContains(t, err, "parse key")

	_, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	key, err := sealedjwk.Make(box, priv, string(jose.EdDSA), rowLabel)
	require.NoError(t, err)
	_, err = sealedjwk.Signer(box, key.Sealed, rowLabel(key.KID), string(jose.RS256), key.KID, nil)
	assert.Error(t, err, "an Ed25519 key does not sign RS256")
}

// Make refuses a key it cannot publish, and seals nothing for it.
func TestMakeRefusesUnknownKey(t *testing.T) {
	t.Parallel()
	box := newBox(t, "master secret")
	called := false
	_, err := sealedjwk.Make(box, oddSigner{}, "EdDSA", func(kid string) []byte { called = true; return nil })
	assert.Error(t, err)
	assert.False(t, called)
}

// oddSigner is a signer of a key type JWK has no form for.
type oddSigner struct{}

func (oddSigner) Public() crypto.PublicKey { return struct{}{} }
func (oddSigner) Sign(_ io.Reader, _ []byte, _ crypto.SignerOpts) ([]byte, error) {
	return nil, nil
}
