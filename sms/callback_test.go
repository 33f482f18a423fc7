package sms_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/sms"
)

func TestParseStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		form    url.Values
		want    sms.Status
		final   bool
		wantErr string
	}{
		{
			name: "delivered",
			form: url.Values{"MessageSid": {"SM1"}, "SmsSid": {"SM1"}, "MessageStatus": {"delivered"},
				"SmsStatus": {"delivered"}, "To": {"+4915112345678"}, "From": {"+15005550006"},
				"AccountSid": {"AC1"}, "ApiVersion": {"2010-04-01"}},
			want:  sms.Status{MessageSID: "SM1", Status: sms.StatusDelivered, To: "+4915112345678"},
			final: true,
		},
		{
			name: "undelivered with a code",
			form: url.Values{"MessageSid": {"SM2"}, "MessageStatus": {"undelivered"}, "ErrorCode": {"30005"}, "To": {"+4915112345678"}},
			want: sms.Status{MessageSID: "SM2", Status: sms.StatusUndelivered, ErrorCode: 30005, To: "+4915112345678"}, final: true,
		},
		{
			name: "sent, not final",
			form: url.Values{"MessageSid": {"SM3"}, "MessageStatus": {"sent"}},
			want: sms.Status{MessageSID: "SM3", Status: sms.StatusSent},
		},
		{
			name: "the older names only, in upper case",
			form: url.Values{"SmsSid": {"SM4"}, "SmsStatus": {"FAILED"}, "ErrorCode": {" 30008 "}},
			want: sms.Status{MessageSID: "SM4", Status: sms.StatusFailed, ErrorCode: 30008}, final: true,
		},
		{name: "no sid", form: url.Values{"MessageStatus": {"sent"}}, wantErr: "MessageSid"},
		{name: "no status", form: url.Values{"MessageSid": {"SM5"}}, wantErr: "MessageStatus"},
		{name: "bad code", form: url.Values{"MessageSid": {"SM6"}, "MessageStatus": {"failed"}, "ErrorCode": {"x1"}}, wantErr: "ErrorCode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := sms.ParseStatus(tt.form)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, s)
			assert.Equal(t, tt.final, s.Final())
		})
	}
}

func TestParseInbound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		form          url.Values
		optOut, optIn bool
		wantErr       bool
	}{
		{name: "stop", form: url.Values{"MessageSid": {"SM1"}, "From": {"+4915112345678"}, "To": {"+15005550006"}, "Body": {"Stop"}}, optOut: true},
		{name: "the service says stop", form: url.Values{"MessageSid": {"SM2"}, "From": {"+4915112345678"}, "Body": {"Bitte keine SMS mehr"}, "OptOutType": {"STOP"}}, optOut: true},
		{name: "start", form: url.Values{"MessageSid": {"SM3"}, "From": {"+4915112345678"}, "Body": {"start"}}, optIn: true},
		{name: "the service says start", form: url.Values{"MessageSid": {"SM3"}, "From": {"+4915112345678"}, "Body": {"go"}, "OptOutType": {"START"}}, optIn: true},
		{name: "a reply", form: url.Values{"MessageSid": {"SM4"}, "From": {"+4915112345678"}, "Body": {"Danke, alles super"}}},
		{name: "help is neither", form: url.Values{"MessageSid": {"SM5"}, "From": {"+4915112345678"}, "Body": {"HELP"}, "OptOutType": {"HELP"}}},
		{name: "no sid", form: url.Values{"From": {"+4915112345678"}, "Body": {"STOP"}}, wantErr: true},
		{name: "no sender", form: url.Values{"MessageSid": {"SM6"}, "Body": {"STOP"}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := sms.ParseInbound(tt.form)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.form.Get("From"), m.From)
			assert.Equal(t, tt.form.Get("Body"), m.Body)
			assert.Equal(t, tt.optOut, m.OptOut(), "opt-out")
			assert.Equal(t, tt.optIn, m.OptIn(), "opt-in")
		})
	}
}

func TestOptKeywords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body          string
		optOut, optIn bool
	}{
		{"STOP", true, false},
		{"stop", true, false},
		{"Stop", true, false},
		{"  STOP  ", true, false},
		{"Stop.", true, false},
		{"STOP!!", true, false},
		{"\"stop\"", true, false},
		{"\u200bStop\n", true, false},
		{"stop 👍", true, false},
		{"STOPALL", true, false},
		{"Unsubscribe", true, false},
		{"cancel", true, false},
		{"END", true, false},
		{"quit", true, false},
		{"stop please", false, false},
		{"please stop", false, false},
		{"STOPP", false, false},
		{"ST OP", false, false},
		{"", false, false},
		{"...", false, false},
		{"START", false, true},
		{"yes", false, true},
		{"Unstop", false, true},
		{"Yes!", false, true},
		{"yes please", false, false},
		{"HELP", false, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.optOut, sms.IsOptOut(tt.body), "opt-out %q", tt.body)
		assert.Equal(t, tt.optIn, sms.IsOptIn(tt.body), "opt-in %q", tt.body)
	}
}
