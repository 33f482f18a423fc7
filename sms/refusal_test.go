package sms_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/senderr"
	"github.com/touchpoint/touchpoint/sms"
)

func TestStatusRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status            string
		code              int
		optedOut, refusal bool
	}{
		{sms.StatusFailed, 21610, true, false},
		{sms.StatusUndelivered, 21610, true, false},
		{sms.StatusFailed, 21211, false, true},
		{sms.StatusFailed, 21614, false, true},
		{sms.StatusUndelivered, 30005, false, true},
		{sms.StatusUndelivered, 30006, false, true},
		{sms.StatusFailed, sms.CodeRegionNotPermitted, false, false},
		{sms.StatusUndelivered, 30003, false, false}, // switched off
		{sms.StatusUndelivered, 30007, false, false}, // filtered
		{sms.StatusUndelivered, 0, false, false},
		{sms.StatusDelivered, 0, false, false},
		{sms.StatusSent, 21610, false, false}, // only a failed message says so
	}
	for _, tt := range tests {
		s := sms.Status{MessageSID: "SM1", Status: tt.status, ErrorCode: tt.code}
		assert.Equal(t, tt.optedOut, s.OptedOut(), "%s %d: opted out", tt.status, tt.code)
		assert.Equal(t, tt.refusal, s.NumberRefused(), "%s %d: number refused", tt.status, tt.code)
	}
}

// A region the account may not send to is the account's fault, not the
// number's: the send is refused for good, the number is not.
func TestRegionNotPermitted(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]senderr.Recipient{sms.CodeRegionNotPermitted: senderr.RecipientNotAtFault, 21211: senderr.RecipientRefused} {
		srv, _ := provider(t, 400, fmt.Sprintf(`{"code": %d, "message": "refused", "status": 400}`, code))
		_, err := newTwilio(t, sms.Config{BaseURL: srv.URL}).Send(t.Context(), sms.Message{To: recipient, Body: "hi"})
		err = fmt.Errorf("send: %w", err)
		assert.Equal(t, senderr.Permanent, senderr.KindOf(err), "code %d", code)
		assert.Equal(t, want, senderr.RecipientOf(err), "code %d", code)
	}
}
