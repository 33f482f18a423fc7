package signedlink_test

import (
	"net/url"
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

func TestNewRejects(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"", "/feedback", "ftp://x/feedback", "https://"} {
		_, err := signedlink.New(base, key)
		assert.Error(t, err, base)
	}
	_, err := signedlink.New("https://x/feedback", []byte("short"))
	assert.Error(t, err)
}
