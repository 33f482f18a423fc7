package webhookstack_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/sms"
)

const (
	smsAccountSID = "AC00000000000000000000000000000042"
	smsAuthToken  = "webhookstack-sms-auth-token"
)

// smsProvider is a local server speaking the provider's Messages API:
// it keeps every message posted and answers 201 with a new message SID.
type smsProvider struct {
	*httptest.Server
	statusURL string // the API's POST /sms/status, as the provider calls it
	mu        sync.Mutex
	got       []url.Values
}

func newSMSProvider(t *testing.T, statusURL string) *smsProvider {
	t.Helper()
	p := &smsProvider{statusURL: statusURL}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		if r.Method != http.MethodPost || user != smsAccountSID || pass != smsAuthToken || r.ParseForm() != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.got = append(p.got, r.PostForm)
		n := len(p.got)
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"sid": "SM%032d", "status": "queued"}`, n)
	}))
	t.Cleanup(p.Close)
	return p
}

// sender is the worker's SMS sender through this provider.
func (p *smsProvider) sender(t *testing.T) activities.SMSSender {
	t.Helper()
	tw, err := sms.NewTwilio(sms.Config{BaseURL: p.URL, AccountSID: smsAccountSID, AuthToken: smsAuthToken,
		From: "+15005550006", StatusCallbackURL: p.statusURL})
	require.NoError(t, err)
	s, err := activities.NewTwilioSMS(tw, p.statusURL)
	require.NoError(t, err)
	return s
}

// messages are the messages sent so far, as posted.
func (p *smsProvider) messages() []url.Values {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]url.Values(nil), p.got...)
}

// report posts the provider's delivery report of message n (0-based) to
// the callback URL that came with it, signed as the provider signs.
func (p *smsProvider) report(t *testing.T, n int, status string) {
	t.Helper()
	m := p.messages()[n]
	callback := m.Get("StatusCallback")
	form := url.Values{"MessageSid": {fmt.Sprintf("SM%032d", n+1)}, "MessageStatus": {status}, "AccountSid": {smsAccountSID},
		"To": {m.Get("To")}}
	req, err := http.NewRequest(http.MethodPost, callback, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(sms.SignatureHeader, sms.Signature(smsAuthToken, callback, form))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNoContent, res.StatusCode, "the status callback is taken")
}
