package signedlink_test

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/signedlink"
)

var key = []byte("0123456789abcdef0123456789abcdef")

func TestLinks(t *testing.T) {
	t.Parallel()
	l, err := signedlink.New("https://shop.example/feedback?utm_source=invite", key)
	require.NoError(t, err)

	const id = "evt-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b"
	link := l.URL(id)
	u, err := url.Parse(link)
	require.NoError(t, err)
	assert.Equal(t, "shop.example", u.Host)
	assert.Equal(t, "/feedback", u.Path)
	assert.Equal(t, "invite", u.Query().Get("utm_source"), "the base URL's query is kept")
	assert.Equal(t, link, l.URL(id), "links are stable")
	assert.NotContains(t, u.Query().Get("sig"), "=", "no padding")

	got, ok := l.Verify(u.Query())
	assert.True(t, ok)
	assert.Equal(t, id, got)

	tampered := u.Query()
	tampered.Set("event", "evt-00000000-0000-4000-8000-000000000000")
	_, ok = l.Verify(tampered)
	assert.False(t, ok, "the signature of one event does not open another")

	other, err := signedlink.New("https://shop.example/feedback", []byte("another key, 32 bytes long......"))
	require.NoError(t, err)
	_, ok = other.Verify(u.Query())
	assert.False(t, ok, "another key does not verify")

	for _, sig := range []string{"", "!!", signedlink.Sign(key, id) + "A", signedlink.Sign(key, id)[1:]} {
		assert.False(t, signedlink.Verify(key, id, sig), "%q", sig)
	}
}

// TestOneSpelling: only the signature as Sign writes it verifies, not the
// other spellings a base64 decoder takes for the same bytes.
func TestOneSpelling(t *testing.T) {
	t.Parallel()
	const id = "evt-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b"
	sig := signedlink.Sign(key, id)
	require.Len(t, sig, 43)
	require.True(t, signedlink.Verify(key, id, sig))
	want, err := base64.RawURLEncoding.DecodeString(sig)
	require.NoError(t, err)
	for name, other := range map[string]string{
		"last character, an unused bit changed": sig[:42] + lowBitChanged(sig[42]),
		"line feed inside":                      sig[:20] + "\n" + sig[20:],
		"carriage return at the end":            sig + "\r",
		"line break at the end":                 sig + "\r\n",
	} {
		got, err := base64.RawURLEncoding.DecodeString(other)
		require.NoError(t, err, name)
		require.Equal(t, want, got, "%s: a lenient decoder reads the same bytes", name)
		assert.False(t, signedlink.Verify(key, id, other), "%s: %q", name, other)
	}
	for name, other := range map[string]string{
		"padding":           sig + "=",
		"standard alphabet": sig[:42] + "+",
		"space":             sig[:10] + " " + sig[10:],
		"lower case":        strings.ToLower(sig),
	} {
		assert.False(t, signedlink.Verify(key, id, other), "%s: %q", name, other)
	}
}

// lowBitChanged is c, the last character of a 32-byte value in base64url
// (4 bits of data, 2 unused), with its lowest unused bit flipped.
func lowBitChanged(c byte) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	return string(alphabet[strings.IndexByte(alphabet, c)^1])
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"", "/feedback", "ftp://x/feedback", "https://"} {
		_, err := signedlink.New(base, key)
		assert.Error(t, err, base)
	}
	_, err := signedlink.New("https://x/feedback", []byte("short"))
	assert.Error(t, err)
}

// TestSealedValue: a link carries a value sealed for its ID, which opens
// with that ID and key only, and is not readable in the link.
func TestSealedValue(t *testing.T) {
	t.Parallel()
	l, err := signedlink.New("https://shop.example/unsubscribe", key)
	require.NoError(t, err)
	const id, other = "tts-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b", "tts-00000000-0000-4000-8000-000000000000"
	link, err := l.SealedURL(id, "owner@shop.example")
	require.NoError(t, err)
	assert.NotContains(t, link, "owner", "the value is not readable in the link")
	u, err := url.Parse(link)
	require.NoError(t, err)

	got, ok := l.Verify(u.Query())
	require.True(t, ok, "a sealed link is a signed link")
	require.Equal(t, id, got)
	value, ok := l.Unseal(u.Query(), id)
	assert.True(t, ok)
	assert.Equal(t, "owner@shop.example", value)

	_, ok = l.Unseal(u.Query(), other)
	assert.False(t, ok, "it opens for its own ID only")
	again, err := signedlink.New("https://shop.example/unsubscribe", []byte("another key, 32 bytes long......"))
	require.NoError(t, err)
	_, ok = again.Unseal(u.Query(), id)
	assert.False(t, ok, "another key does not open it")
	for name, v := range map[string]string{"none": "", "not base64": "!!", "cut": u.Query().Get(signedlink.ParamSealed)[:20]} {
		q := u.Query()
		q.Set(signedlink.ParamSealed, v)
		_, ok := l.Unseal(q, id)
		assert.False(t, ok, name)
	}
	_, ok = l.Unseal(url.Values{}, id)
	assert.False(t, ok, "a plain link carries nothing")
}
