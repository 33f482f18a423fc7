package sms_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/freeport"
	"github.com/touchpoint/touchpoint/senderr"
	"github.com/touchpoint/touchpoint/sms"
)

const (
	accountSID = "AC0123456789abcdef0123456789abcdef"
	authToken  = "tok-5e3c9d1f7a2b4c6d8e0f1a2b3c4d5e6f"
	recipient  = "+4915112345678"
)

// received is one request as the fake provider saw it.
type received struct {
	method, path, contentType string
	user, pass                string
	authOK                    bool
	form                      url.Values
}

// provider is a local server speaking the Messages API: it records each
// request and answers with the handler's status and body.
func provider(t *testing.T, status int, body string) (*httptest.Server, <-chan received) {
	t.Helper()
	got := make(chan received, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		err := r.ParseForm()
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		got <- received{method: r.Method, path: r.URL.Path, contentType: r.Header.Get("Content-Type"),
			user: user, pass: pass, authOK: ok, form: r.PostForm}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func newTwilio(t *testing.T, c sms.Config) *sms.Twilio {
	t.Helper()
	if c.AccountSID == "" {
		c.AccountSID = accountSID
	}
	if c.AuthToken == "" {
		c.AuthToken = authToken
	}
	if c.From == "" && c.MessagingServiceSID == "" {
		c.From = "+15005550006"
	}
	tw, err := sms.NewTwilio(c)
	require.NoError(t, err)
	return tw
}

func TestSendSuccess(t *testing.T) {
	t.Parallel()
	srv, got := provider(t, http.StatusCreated,
		`{"sid": "SM1a2b3c4d5e6f708192a3b4c5d6e7f809", "status": "queued", "to": "+4915112345678"}`)
	tw := newTwilio(t, sms.Config{BaseURL: srv.URL, StatusCallbackURL: "https://touchpoint.example/sms/status"})

	sid, err := tw.Send(t.Context(), sms.Message{To: recipient, Body: "Wie war Ihr Einkauf? https://x.example/f"})
	require.NoError(t, err)
	assert.Equal(t, "SM1a2b3c4d5e6f708192a3b4c5d6e7f809", sid)

	r := <-got
	assert.Equal(t, http.MethodPost, r.method)
	assert.Equal(t, "/2010-04-01/Accounts/"+accountSID+"/Messages.json", r.path)
	assert.Equal(t, "application/x-www-form-urlencoded", r.contentType)
	require.True(t, r.authOK, "HTTP Basic credentials")
	assert.Equal(t, accountSID, r.user)
	assert.Equal(t, authToken, r.pass)
	assert.Equal(t, url.Values{
		"To":             {recipient},
		"From":           {"+15005550006"},
		"Body":           {"Wie war Ihr Einkauf? https://x.example/f"},
		"StatusCallback": {"https://touchpoint.example/sms/status"},
	}, r.form)
}

func TestSendFormFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  sms.Config
		msg  sms.Message
		want url.Values
	}{
		{
			name: "messaging service, no callback",
			cfg:  sms.Config{MessagingServiceSID: "MG0123"},
			msg:  sms.Message{To: recipient, Body: "hi"},
			want: url.Values{"To": {recipient}, "Body": {"hi"}, "MessagingServiceSid": {"MG0123"}},
		},
		{
			name: "both senders",
			cfg:  sms.Config{From: "Shop", MessagingServiceSID: "MG0123"},
			msg:  sms.Message{To: recipient, Body: "hi"},
			want: url.Values{"To": {recipient}, "Body": {"hi"}, "From": {"Shop"}, "MessagingServiceSid": {"MG0123"}},
		},
		{
			name: "the message's callback wins",
			cfg:  sms.Config{From: "+15005550006", StatusCallbackURL: "https://t.example/sms/status"},
			msg:  sms.Message{To: recipient, Body: "hi", StatusCallback: "https://t.example/sms/status?event=evt-1"},
			want: url.Values{"To": {recipient}, "Body": {"hi"}, "From": {"+15005550006"},
				"StatusCallback": {"https://t.example/sms/status?event=evt-1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, got := provider(t, http.StatusCreated, `{"sid": "SM1"}`)
			tt.cfg.BaseURL = srv.URL + "/" // a trailing slash is fine
			tw := newTwilio(t, tt.cfg)
			sid, err := tw.Send(t.Context(), tt.msg)
			require.NoError(t, err)
			assert.Equal(t, "SM1", sid)
			r := <-got
			assert.Equal(t, "/2010-04-01/Accounts/"+accountSID+"/Messages.json", r.path)
			assert.Equal(t, tt.want, r.form)
		})
	}
}

// assertSafe checks that an error text carries neither the number nor the
// auth token.
func assertSafe(t *testing.T, err error) {
	t.Helper()
	text := err.Error()
	assert.NotContains(t, text, authToken)
	assert.NotContains(t, text, strings.TrimPrefix(recipient, "+"))
	assert.NotContains(t, text, "15112345678")
}

func TestSendAnswerErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		status    int
		body      string
		kind      senderr.Kind
		recipient senderr.Recipient
		code      int
		text      string // in the error text
	}{
		{
			name:   "invalid number",
			status: 400,
			body: `{"code": 21211, "message": "The 'To' number +4915112345678 is not a valid phone number.",
				"more_info": "https://www.twilio.com/docs/errors/21211", "status": 400}`,
			kind: senderr.Permanent, recipient: senderr.RecipientRefused, code: 21211,
			text: "sms: HTTP 400, error 21211: The 'To' number ***5678 is not a valid phone number.",
		},
		{
			name:   "not a mobile number, echoed without the plus",
			status: 400,
			body:   `{"code": 21614, "message": "'To' number 4915112345678 is not a valid mobile number", "status": 400}`,
			kind:   senderr.Permanent, recipient: senderr.RecipientRefused, code: 21614, text: "***5678",
		},
		{
			name:   "unreachable",
			status: 400,
			body:   `{"code": 21612, "message": "The 'To' phone number: +49 151 12345678, is not currently reachable", "status": 400}`,
			kind:   senderr.Permanent, recipient: senderr.RecipientRefused, code: 21612, text: "***5678",
		},
		{
			name:   "region not enabled",
			status: 400,
			body:   `{"code": 21408, "message": "Permission to send an SMS has not been enabled for the region indicated by the 'To' number: +4915112345678.", "status": 400}`,
			kind:   senderr.Permanent, code: 21408, // the account's permissions, not the number
		},
		{
			name:   "unsubscribed",
			status: 400,
			body:   `{"code": 21610, "message": "Attempt to send to unsubscribed recipient", "status": 400}`,
			kind:   senderr.Permanent, recipient: senderr.RecipientOptedOut, code: 21610,
		},
		{
			name:   "body too long",
			status: 400,
			body:   `{"code": 21617, "message": "The concatenated message body exceeds the 1600 character limit.", "status": 400}`,
			kind:   senderr.Permanent, code: 21617,
		},
		{
			name:   "bad credentials",
			status: 401,
			body:   `{"code": 20003, "message": "Authenticate", "status": 401}`,
			kind:   senderr.Permanent, code: 20003, text: "sms: HTTP 401, error 20003: Authenticate",
		},
		{
			name:   "other 4xx without a body",
			status: 404,
			kind:   senderr.Permanent, text: "sms: HTTP 404",
		},
		{
			name:   "too many requests",
			status: 429,
			body:   `{"code": 20429, "message": "Too Many Requests", "status": 429}`,
			kind:   senderr.Transient, code: 20429,
		},
		{
			name:   "server error",
			status: 500,
			body:   `{"code": 20500, "message": "Internal Server Error", "status": 500}`,
			kind:   senderr.Transient, code: 20500,
		},
		{
			name:   "a proxy's page",
			status: 503,
			body:   `<html><body>Service Unavailable</body></html>`,
			kind:   senderr.Transient, text: "sms: HTTP 503",
		},
		{
			name:   "the auth token echoed",
			status: 400,
			body:   `{"code": 20001, "message": "bad token ` + authToken + `", "status": 400}`,
			kind:   senderr.Permanent, code: 20001, text: "bad token ***",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := provider(t, tt.status, tt.body)
			tw := newTwilio(t, sms.Config{BaseURL: srv.URL})
			sid, err := tw.Send(t.Context(), sms.Message{To: recipient, Body: "hi"})
			require.Error(t, err)
			assert.Empty(t, sid)
			assert.Equal(t, tt.kind, senderr.KindOf(err), "kind")
			assert.Equal(t, tt.recipient, senderr.RecipientOf(err), "what it says of the number")
			var se *sms.Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.status, se.Status)
			assert.Equal(t, tt.code, se.Code)
			if tt.text != "" {
				assert.Contains(t, err.Error(), tt.text)
			}
			assertSafe(t, err)
		})
	}
}

func TestSendRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	elsewhere, got := provider(t, http.StatusCreated, `{"sid": "SM-elsewhere"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	tw := newTwilio(t, sms.Config{BaseURL: srv.URL})

	_, err := tw.Send(t.Context(), sms.Message{To: recipient, Body: "hi"})
	require.Error(t, err)
	assert.Equal(t, senderr.Permanent, senderr.KindOf(err))
	assert.Equal(t, senderr.RecipientNotAtFault, senderr.RecipientOf(err))
	assert.Contains(t, err.Error(), "HTTP 307")
	assert.Empty(t, got, "the redirect was followed")
}

func TestSendAcceptedWithoutReadableSID(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body string }{
		{"empty body", ""},
		{"not JSON", "<ok/>"},
		// Beyond the bound on what is read, the JSON never ends.
		{"too long", `{"status": "queued", "x": "` + strings.Repeat("a", 1<<20) + `", "sid": "SM1"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := provider(t, http.StatusCreated, tt.body)
			tw := newTwilio(t, sms.Config{BaseURL: srv.URL})
			sid, err := tw.Send(t.Context(), sms.Message{To: recipient, Body: "hi"})
			require.NoError(t, err, "a 201 is an accepted message")
			assert.Empty(t, sid)
		})
	}
}

func TestSendSlowAnswerIsUncertain(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm() // the whole request arrived
		select {          // and no answer comes in time
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	tw := newTwilio(t, sms.Config{BaseURL: srv.URL, Timeout: 500 * time.Millisecond})

	_, err := tw.Send(t.Context(), sms.Message{To: recipient, Body: "hi"})
	require.Error(t, err)
	assert.Equal(t, senderr.Uncertain, senderr.KindOf(err), err.Error())
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "request sent, no answer")
	assertSafe(t, err)
}

func TestSendCallerCancelledAfterSendingIsUncertain(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		close(arrived)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	tw := newTwilio(t, sms.Config{BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-arrived
		cancel()
	}()

	_, err := tw.Send(ctx, sms.Message{To: recipient, Body: "hi"})
	require.Error(t, err)
	assert.Equal(t, senderr.Uncertain, senderr.KindOf(err), err.Error())
	assert.ErrorIs(t, err, context.Canceled)
}

func TestSendConnectionDroppedAfterRequestIsUncertain(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		_ = conn.Close()
	}))
	t.Cleanup(srv.Close)
	tw := newTwilio(t, sms.Config{BaseURL: srv.URL})

	_, err := tw.Send(t.Context(), sms.Message{To: recipient, Body: "hi"})
	require.Error(t, err)
	assert.Equal(t, senderr.Uncertain, senderr.KindOf(err), err.Error())
	assert.Equal(t, senderr.RecipientNotAtFault, senderr.RecipientOf(err))
	assertSafe(t, err)
}

func TestSendNotListeningIsTransient(t *testing.T) {
	t.Parallel()
	addrs, err := freeport.Addrs(1) // nobody listens there
	require.NoError(t, err)
	addr := addrs[0]
	tw := newTwilio(t, sms.Config{BaseURL: "http://" + addr})

	_, err = tw.Send(t.Context(), sms.Message{To: recipient, Body: "hi"})
	require.Error(t, err)
	assert.Equal(t, senderr.Transient, senderr.KindOf(err), err.Error())
	assert.Contains(t, err.Error(), "request not sent")
	var oe *net.OpError
	assert.ErrorAs(t, err, &oe, "the transport error is kept")
	assertSafe(t, err)
}

func TestSendLookupFailureIsTransient(t *testing.T) {
	t.Parallel()
	// A dialer that fails as a failed DNS lookup does, without a lookup.
	dialer := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network,
			Err: &net.DNSError{Err: "no such host", Name: "api.sms.invalid", IsNotFound: true}}
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer}}
	tw := newTwilio(t, sms.Config{BaseURL: "https://api.sms.invalid", HTTPClient: client})

	_, err := tw.Send(t.Context(), sms.Message{To: recipient, Body: "hi"})
	require.Error(t, err)
	assert.Equal(t, senderr.Transient, senderr.KindOf(err), err.Error())
	var de *net.DNSError
	assert.ErrorAs(t, err, &de)
	assert.Nil(t, client.CheckRedirect, "the caller's client is left as it was")
}

func TestSendCallerCancelledBeforeSendingIsTransient(t *testing.T) {
	t.Parallel()
	srv, got := provider(t, http.StatusCreated, `{"sid": "SM1"}`)
	tw := newTwilio(t, sms.Config{BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()

	_, err := tw.Send(ctx, sms.Message{To: recipient, Body: "hi"})
	require.Error(t, err)
	assert.Equal(t, senderr.Transient, senderr.KindOf(err))
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Empty(t, got)
}

func TestSendRefusesEmptyMessages(t *testing.T) {
	t.Parallel()
	srv, got := provider(t, http.StatusCreated, `{"sid": "SM1"}`)
	tw := newTwilio(t, sms.Config{BaseURL: srv.URL})
	for _, m := range []sms.Message{
		{To: "", Body: "hi"},
		{To: recipient, Body: ""},
		{To: recipient, Body: "hi", StatusCallback: "/relative"},
	} {
		_, err := tw.Send(t.Context(), m)
		require.Error(t, err)
		assert.Equal(t, senderr.Permanent, senderr.KindOf(err))
		assert.Equal(t, senderr.RecipientNotAtFault, senderr.RecipientOf(err))
	}
	assert.Empty(t, got)
}

func TestNewTwilioChecksConfig(t *testing.T) {
	t.Parallel()
	valid := sms.Config{AccountSID: accountSID, AuthToken: authToken, From: "+15005550006"}
	tests := []struct {
		name   string
		change func(*sms.Config)
		want   string // in the error; "" for none
	}{
		{"valid, default URL", func(*sms.Config) {}, ""},
		{"messaging service only", func(c *sms.Config) { c.From, c.MessagingServiceSID = "", "MG1" }, ""},
		{"no account", func(c *sms.Config) { c.AccountSID = "" }, "account SID"},
		{"no token", func(c *sms.Config) { c.AuthToken = "" }, "auth token"},
		{"no sender", func(c *sms.Config) { c.From = "" }, "sender"},
		{"relative URL", func(c *sms.Config) { c.BaseURL = "api.twilio.com" }, "base URL"},
		{"credentials in URL", func(c *sms.Config) { c.BaseURL = "https://u:p@api.twilio.com" }, "base URL"},
		{"other scheme", func(c *sms.Config) { c.BaseURL = "ftp://api.twilio.com" }, "base URL"},
		{"bad callback", func(c *sms.Config) { c.StatusCallbackURL = "/sms/status" }, "callback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid
			tt.change(&c)
			tw, err := sms.NewTwilio(c)
			if tt.want == "" {
				require.NoError(t, err)
				assert.NotNil(t, tw)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), authToken)
		})
	}
}
