package sms_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/sms"
)

// TestLoadSetup: no provider by default; a full configuration gives the
// sender's settings and its callbacks' keys, the callback on the API's
// base URL unless set; a half-made one is an error naming the variable,
// without the auth token in it.
func TestLoadSetup(t *testing.T) {
	t.Parallel()
	get := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	_, ok, err := sms.LoadSetup(get(nil), "https://api.example.com/")
	require.NoError(t, err)
	assert.False(t, ok, "no provider by default")

	minimal := map[string]string{"TOUCHPOINT_SMS_ACCOUNT_SID": "AC0123", "TOUCHPOINT_SMS_AUTH_TOKEN": "token",
		"TOUCHPOINT_SMS_MESSAGING_SERVICE_SID": "MG0123"}
	s, ok, err := sms.LoadSetup(get(minimal), "https://api.example.com/")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "https://api.twilio.com", s.Config.BaseURL)
	assert.Equal(t, sms.CallbackKeys{AuthToken: "token", StatusURL: "https://api.example.com/sms/status",
		InboundURL: "https://api.example.com/sms/inbound"}, s.Callbacks, "the callbacks default to the base URL's")

	full := map[string]string{
		"TOUCHPOINT_SMS_URL":                   "http://127.0.0.1:4010",
		"TOUCHPOINT_SMS_ACCOUNT_SID":           "AC0123",
		"TOUCHPOINT_SMS_AUTH_TOKEN":            "sms-auth-token-value",
		"TOUCHPOINT_SMS_FROM":                  "+15005550006",
		"TOUCHPOINT_SMS_MESSAGING_SERVICE_SID": "MG0123",
		"TOUCHPOINT_SMS_STATUS_CALLBACK_URL":   "https://hooks.example.com/touchpoint/sms/status",
	}
	s, ok, err = sms.LoadSetup(get(full), "https://api.example.com")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, sms.Config{BaseURL: "http://127.0.0.1:4010", AccountSID: "AC0123", AuthToken: "sms-auth-token-value",
		From: "+15005550006", MessagingServiceSID: "MG0123", StatusCallbackURL: "https://hooks.example.com/touchpoint/sms/status"}, s.Config)
	assert.Equal(t, "https://hooks.example.com/touchpoint/sms/status", s.Callbacks.StatusURL)
	assert.NoError(t, sms.Settings().Check(get(full)))

	for name, tc := range map[string]struct {
		drop       []string
		set        map[string]string
		configured bool
		want       string // in the error; "" for none
	}{
		"a number only":             {drop: []string{"TOUCHPOINT_SMS_MESSAGING_SERVICE_SID"}, configured: true},
		"a messaging service only":  {drop: []string{"TOUCHPOINT_SMS_FROM"}, configured: true},
		"no sender":                 {drop: []string{"TOUCHPOINT_SMS_FROM", "TOUCHPOINT_SMS_MESSAGING_SERVICE_SID"}, want: "TOUCHPOINT_SMS_FROM"},
		"no token":                  {drop: []string{"TOUCHPOINT_SMS_AUTH_TOKEN"}, want: "TOUCHPOINT_SMS_AUTH_TOKEN"},
		"no account":                {drop: []string{"TOUCHPOINT_SMS_ACCOUNT_SID"}, want: "TOUCHPOINT_SMS_ACCOUNT_SID"},
		"a relative URL":            {set: map[string]string{"TOUCHPOINT_SMS_URL": "api.twilio.com"}, want: "TOUCHPOINT_SMS_URL"},
		"credentials in the URL":    {set: map[string]string{"TOUCHPOINT_SMS_URL": "https://u:p@api.twilio.com"}, want: "TOUCHPOINT_SMS_URL"},
		"a relative callback":       {set: map[string]string{"TOUCHPOINT_SMS_STATUS_CALLBACK_URL": "/sms/status"}, want: "TOUCHPOINT_SMS_STATUS_CALLBACK_URL"},
		"an unused sender is wrong": {drop: []string{"TOUCHPOINT_SMS_ACCOUNT_SID", "TOUCHPOINT_SMS_AUTH_TOKEN", "TOUCHPOINT_SMS_MESSAGING_SERVICE_SID"}, want: "TOUCHPOINT_SMS_AUTH_TOKEN"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kv := map[string]string{}
			for k, v := range full {
				kv[k] = v
			}
			for _, k := range tc.drop {
				delete(kv, k)
			}
			for k, v := range tc.set {
				kv[k] = v
			}
			_, ok, err := sms.LoadSetup(get(kv), "https://api.example.com")
			assert.Equal(t, tc.configured, ok)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "sms-auth-token-value")
			assert.Error(t, sms.Settings().Check(get(kv)), "the configuration's check says the same")
		})
	}
}
