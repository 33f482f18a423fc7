package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/sms"
)

func TestSMSWiring(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(string) string { return "" })
	require.NoError(t, err)
	sender, tmpl, err := smsSender(cfg)
	require.NoError(t, err)
	assert.True(t, sender == nil, "no provider: a nil interface, so the worker knows it has none")
	assert.Nil(t, tmpl)
	assert.Nil(t, smsCallbacks(cfg))

	cfg, err = config.Load(func(k string) string {
		return map[string]string{"TOUCHPOINT_BASE_URL": "https://api.example.com", "TOUCHPOINT_SMS_ACCOUNT_SID": "AC0123",
			"TOUCHPOINT_SMS_AUTH_TOKEN": "token", "TOUCHPOINT_SMS_MESSAGING_SERVICE_SID": "MG0123"}[k]
	})
	require.NoError(t, err)
	sender, tmpl, err = smsSender(cfg)
	require.NoError(t, err)
	assert.NotNil(t, sender)
	assert.NotNil(t, tmpl)
	assert.Equal(t, &sms.CallbackKeys{AuthToken: "token", StatusURL: "https://api.example.com/sms/status",
		InboundURL: "https://api.example.com/sms/inbound"}, smsCallbacks(cfg))
}
