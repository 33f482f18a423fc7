package sms_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/sms"
)

func TestStatusCallbackFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base     string
		reminder bool
		want     string
	}{
		{"https://api.example.com/sms/status", false, "https://api.example.com/sms/status?event=evt-1&message=invite"},
		{"https://api.example.com/sms/status", true, "https://api.example.com/sms/status?event=evt-1&message=reminder"},
		{"https://hooks.example.com/tp/sms/status?key=k", false, "https://hooks.example.com/tp/sms/status?event=evt-1&key=k&message=invite"},
	}
	for _, tt := range tests {
		got, err := sms.StatusCallbackFor(tt.base, "evt-1", tt.reminder)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
		u, err := url.Parse(got)
		require.NoError(t, err)
		event, reminder, err := sms.CallbackSubject(u.Query())
		require.NoError(t, err)
		assert.Equal(t, "evt-1", event)
		assert.Equal(t, tt.reminder, reminder)
	}
	_, err := sms.StatusCallbackFor("/sms/status", "evt-1", false)
	assert.Error(t, err, "a relative URL")
}

func TestCallbackSubject(t *testing.T) {
	t.Parallel()
	event, reminder, err := sms.CallbackSubject(url.Values{})
	require.NoError(t, err, "a URL without a subject")
	assert.Empty(t, event)
	assert.False(t, reminder)
	_, _, err = sms.CallbackSubject(url.Values{"event": {"evt-1"}, "message": {"postcard"}})
	assert.Error(t, err)
}
