package apiserver_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
)

// The SMS provider as the test API knows it: its callbacks are signed
// with this token over these public URLs, which are not the test
// server's own.
const (
	testSMSAuthToken  = "apiserver-test-sms-auth-token"
	testSMSStatusURL  = "https://api.touchpoint.test" + sms.StatusPath
	testSMSInboundURL = "https://api.touchpoint.test" + sms.InboundPath
	testMobile        = "+4915112345678"
)

func testSMS() *sms.CallbackKeys {
	return &sms.CallbackKeys{AuthToken: testSMSAuthToken, StatusURL: testSMSStatusURL, InboundURL: testSMSInboundURL}
}

// withoutSMS configures an API without an SMS provider.
func withoutSMS(o *apiserver.Options) { o.SMS = nil }

// callback posts form to the callback at path (with query), signed with
// token over signedURL as the provider signs it.
func (e *env) callback(t testing.TB, path, query string, form url.Values, token, signedURL string) response {
	t.Helper()
	if query != "" {
		path += "?" + query
	}
	return e.do(t, http.MethodPost, path, "", form.Encode(),
		header{"Content-Type", "application/x-www-form-urlencoded"},
		header{sms.SignatureHeader, sms.Signature(token, signedURL, form)})
}

// status posts a delivery report of the message sid, signed as the
// provider signs it, for event id's invite (or reminder).
func (e *env) status(t testing.TB, id string, reminder bool, sid, status string, code int) response {
	t.Helper()
	callback, err := sms.StatusCallbackFor(testSMSStatusURL, id, reminder)
	require.NoError(t, err)
	u, err := url.Parse(callback)
	require.NoError(t, err)
	form := statusForm(sid, status, code)
	return e.callback(t, sms.StatusPath, u.RawQuery, form, testSMSAuthToken, callback)
}

func statusForm(sid, status string, code int) url.Values {
	form := url.Values{"MessageSid": {sid}, "SmsSid": {sid}, "MessageStatus": {status}, "SmsStatus": {status},
		"AccountSid": {"AC0123"}, "From": {"+15005550006"}, "To": {testMobile}, "ApiVersion": {"2010-04-01"}}
	if code != 0 {
		form.Set("ErrorCode", strconv.Itoa(code))
	}
	return form
}

// textedEvent makes an account whose setting sends by SMS, with one event
// whose invite was texted to testMobile, and returns the account, the
// event and a full token of the account.
func textedEvent(t *testing.T, e *env) (*eventfixture.Account, string, string) {
	t.Helper()
	a := eventfixture.NewAccount(t, e.store.DB(), eventfixture.Setting{Medium: invite.SMS})
	return a, sendText(t, e, a), e.tokenFor(t, a.AccountID, auth.GroupFull)
}

// sendText sends (as the worker records it) an SMS invite of a new event of a
// to testMobile.
func sendText(t *testing.T, e *env, a *eventfixture.Account) string {
	t.Helper()
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Mobile: "0151 12345678", Locale: "de"})
	c, err := e.store.Invites.ClaimSend(t.Context(), invite.KindInvite, id, invitedb.ClaimOptions{SMSEnabled: true, Mobile: testMobile})
	require.NoError(t, err)
	require.True(t, c.Send)
	_, err = e.store.Invites.FinishSend(t.Context(), invite.KindInvite, id, invite.SendResult{SentAt: time.Now()})
	require.NoError(t, err)
	return id
}

func (e *env) invite(t *testing.T, token, id string) map[string]any {
	t.Helper()
	r := e.do(t, http.MethodGet, "/events/"+id, token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.object(t)["invite"].(map[string]any)
}

func TestSMSStatusCallback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, id, token := textedEvent(t, e)
	assert.Nil(t, e.invite(t, token, id)["delivery"], "no report yet")

	r := e.status(t, id, false, "SM1", sms.StatusSent, 0)
	require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
	assert.Empty(t, r.body)
	d := e.invite(t, token, id)["delivery"].(map[string]any)
	assert.Equal(t, "sent", d["status"])
	assert.Nil(t, d["errorCode"])
	assert.Regexp(t, timestampRE, d["updatedAt"])

	require.Equal(t, http.StatusNoContent, e.status(t, id, false, "SM1", sms.StatusDelivered, 0).status)
	assert.Equal(t, "delivered", e.invite(t, token, id)["delivery"].(map[string]any)["status"])

	// The reminder's message, undelivered to an unknown handset: the
	// number is suppressed for the account as bounced.
	_, err := e.store.DB().Exec(`UPDATE events SET reminder_status = 'sent', reminder_sent_at = now() WHERE id = $1`, id)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, e.status(t, id, true, "SM2", sms.StatusUndelivered, 30005).status)
	inv := e.invite(t, token, id)
	assert.Equal(t, "delivered", inv["delivery"].(map[string]any)["status"])
	rd := inv["reminder"].(map[string]any)["delivery"].(map[string]any)
	assert.Equal(t, "undelivered", rd["status"])
	assert.EqualValues(t, 30005, rd["errorCode"])
	sup, err := e.store.Suppressions.Suppression(t.Context(), a.AccountID, testMobile)
	require.NoError(t, err)
	assert.Equal(t, invite.Bounced, sup.Reason)
	assert.Equal(t, invite.SMS, sup.Medium)

	// A report for an event that is gone is taken and dropped.
	require.Equal(t, http.StatusNoContent, e.status(t, store.NewID("evt"), false, "SM3", sms.StatusDelivered, 0).status)
}

// A messaging service reports a STOP of the recipient on the message
// rather than at send time: the number is suppressed as unsubscribed.
func TestSMSStatusOptedOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, id, token := textedEvent(t, e)
	require.Equal(t, http.StatusNoContent, e.status(t, id, false, "SM1", sms.StatusFailed, 21610).status)
	d := e.invite(t, token, id)["delivery"].(map[string]any)
	assert.Equal(t, "failed", d["status"])
	assert.EqualValues(t, 21610, d["errorCode"])
	sup, err := e.store.Suppressions.Suppression(t.Context(), a.AccountID, testMobile)
	require.NoError(t, err)
	assert.Equal(t, invite.Unsubscribed, sup.Reason)
}

func TestSMSCallbacksRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, id, token := textedEvent(t, e)
	callback, err := sms.StatusCallbackFor(testSMSStatusURL, id, false)
	require.NoError(t, err)
	query := strings.SplitN(callback, "?", 2)[1]
	form := statusForm("SM1", sms.StatusDelivered, 0)
	other, err := sms.StatusCallbackFor(testSMSStatusURL, store.NewID("evt"), false)
	require.NoError(t, err)

	for name, tc := range map[string]struct {
		path, query   string
		form          url.Values
		token, signed string
		headers       []header
		status        int
	}{
		"another token":            {sms.StatusPath, query, form, "not the auth token", callback, nil, http.StatusForbidden},
		"the URL the server sees":  {sms.StatusPath, query, form, testSMSAuthToken, e.srv.URL + sms.StatusPath + "?" + query, nil, http.StatusForbidden},
		"another event's query":    {sms.StatusPath, query, form, testSMSAuthToken, other, nil, http.StatusForbidden},
		"no query":                 {sms.StatusPath, "", form, testSMSAuthToken, callback, nil, http.StatusForbidden},
		"the inbound URL":          {sms.StatusPath, query, form, testSMSAuthToken, testSMSInboundURL + "?" + query, nil, http.StatusForbidden},
		"a status signed for here": {sms.InboundPath, "", url.Values{"MessageSid": {"SM1"}, "From": {testMobile}, "Body": {"STOP"}}, testSMSAuthToken, testSMSStatusURL, nil, http.StatusForbidden},
		"no signature": {sms.StatusPath, query, form, testSMSAuthToken, callback,
			[]header{{sms.SignatureHeader, ""}}, http.StatusForbidden},
		"JSON": {sms.StatusPath, query, form, testSMSAuthToken, callback,
			[]header{{"Content-Type", "application/json"}}, http.StatusUnsupportedMediaType},
		"no message SID, signed":   {sms.StatusPath, query, url.Values{"MessageStatus": {"delivered"}}, testSMSAuthToken, callback, nil, http.StatusBadRequest},
		"an unknown kind, signed":  {sms.StatusPath, "event=" + id + "&message=postcard", form, testSMSAuthToken, testSMSStatusURL + "?event=" + id + "&message=postcard", nil, http.StatusBadRequest},
		"an inbound without From":  {sms.InboundPath, "", url.Values{"MessageSid": {"SM1"}, "Body": {"STOP"}}, testSMSAuthToken, testSMSInboundURL, nil, http.StatusBadRequest},
		"too large":                {sms.StatusPath, query, url.Values{"MessageSid": {"SM1"}, "Body": {strings.Repeat("x", 65<<10)}}, testSMSAuthToken, callback, nil, http.StatusRequestEntityTooLarge},
		"a method other than POST": {sms.StatusPath, query, form, testSMSAuthToken, callback, []header{{"X-Method", http.MethodGet}}, http.StatusMethodNotAllowed},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := tc.path
			if tc.query != "" {
				path += "?" + tc.query
			}
			method := http.MethodPost
			headers := []header{{"Content-Type", "application/x-www-form-urlencoded"}, {sms.SignatureHeader, sms.Signature(tc.token, tc.signed, tc.form)}}
			for _, h := range tc.headers {
				if h.name == "X-Method" {
					method = h.value
					continue
				}
				headers = append(headers, h)
			}
			r := e.do(t, method, path, "", tc.form.Encode(), headers...)
			requireProblem(t, r, tc.status)
		})
	}
	assert.Nil(t, e.invite(t, token, id)["delivery"], "nothing was recorded")

	// Without a provider no callback can be verified.
	bare := newEnv(t, withoutSMS)
	r := bare.callback(t, sms.StatusPath, query, form, testSMSAuthToken, callback)
	requireProblem(t, r, http.StatusForbidden)
	assert.Contains(t, r.object(t)["detail"], "no SMS provider")
	r = bare.callback(t, sms.InboundPath, "", url.Values{"MessageSid": {"SM1"}, "From": {testMobile}, "Body": {"STOP"}}, testSMSAuthToken, testSMSInboundURL)
	requireProblem(t, r, http.StatusForbidden)
}

// The provider signs with or without the default port, as it was given
// the URL; both verify.
func TestSMSStatusSignedWithThePort(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, id, token := textedEvent(t, e)
	callback, err := sms.StatusCallbackFor(testSMSStatusURL, id, false)
	require.NoError(t, err)
	query := strings.SplitN(callback, "?", 2)[1]
	withPort := strings.Replace(callback, "api.touchpoint.test", "api.touchpoint.test:443", 1)
	r := e.callback(t, sms.StatusPath, query, statusForm("SM1", sms.StatusDelivered, 0), testSMSAuthToken, withPort)
	require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
	assert.Equal(t, "delivered", e.invite(t, token, id)["delivery"].(map[string]any)["status"])
}

func TestSMSInboundStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	inbound := func(form url.Values) response {
		t.Helper()
		return e.callback(t, sms.InboundPath, "", form, testSMSAuthToken, testSMSInboundURL)
	}
	message := func(from, body string) url.Values {
		return url.Values{"MessageSid": {"SM" + strings.Repeat("0", 32)}, "AccountSid": {"AC0123"}, "From": {from},
			"To": {"+15005550006"}, "Body": {body}, "NumMedia": {"0"}, "ApiVersion": {"2010-04-01"}}
	}
	texted, _, _ := textedEvent(t, e)
	also, _, _ := textedEvent(t, e)
	untexted := eventfixture.NewAccount(t, e.store.DB(), eventfixture.Setting{})
	untexted.Event(t, eventfixture.Event{Status: invite.Sent, Mobile: testMobile})
	suppressed := func(a *eventfixture.Account) bool {
		t.Helper()
		_, err := e.store.Suppressions.Suppression(t.Context(), a.AccountID, testMobile)
		if err == nil {
			return true
		}
		require.ErrorIs(t, err, store.ErrNotFound)
		return false
	}

	for _, body := range []string{"Thanks, all good!", "stop please", "HELP"} {
		r := inbound(message(testMobile, body))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.False(t, suppressed(texted), "%q is no opt-out", body)
	}
	r := inbound(message(testMobile, "Stop"))
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "text/xml; charset=utf-8", r.header.Get("Content-Type"))
	assert.Equal(t, `<?xml version="1.0" encoding="UTF-8"?><Response/>`, string(r.body), "no reply")
	for _, a := range []*eventfixture.Account{texted, also} {
		require.True(t, suppressed(a), "every account that texted the number")
		sup, err := e.store.Suppressions.Suppression(t.Context(), a.AccountID, testMobile)
		require.NoError(t, err)
		assert.Equal(t, invite.Unsubscribed, sup.Reason)
		assert.Equal(t, invite.SMS, sup.Medium)
	}
	assert.False(t, suppressed(untexted), "an account that never texted it")
	assert.Contains(t, e.logs.String(), `"from":"***5678"`, "the number is logged masked")
	assert.NotContains(t, e.logs.String(), "15112345678")

	// A messaging service that recognised the opt-out says so itself;
	// START does not lift a suppression.
	other := eventfixture.NewAccount(t, e.store.DB(), eventfixture.Setting{Medium: invite.SMS})
	id := other.Event(t, eventfixture.Event{Status: invite.Scheduled, Mobile: "+4915199999999"})
	_, err := e.store.Invites.ClaimSend(t.Context(), invite.KindInvite, id, invitedb.ClaimOptions{SMSEnabled: true, Mobile: "+4915199999999"})
	require.NoError(t, err)
	m := message("+4915199999999", "Bitte keine SMS mehr")
	m.Set("OptOutType", "STOP")
	require.Equal(t, http.StatusOK, inbound(m).status)
	_, err = e.store.Suppressions.Suppression(t.Context(), other.AccountID, "+4915199999999")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, inbound(message(testMobile, "START")).status)
	assert.True(t, suppressed(texted), "START lifts nothing; DELETE /suppressions does")
}

func TestPatchMediumSMSWithoutProvider(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withoutSMS)
	path := settingPath(t, e)
	patch := func(body string) response { return e.do(t, http.MethodPatch, path, e.token, body) }

	r := patch(`{"medium":"sms"}`)
	requireProblem(t, r, http.StatusBadRequest, "medium")
	assert.Contains(t, fieldMessage(t, r, "medium"), "no SMS provider is configured")
	assert.Equal(t, "email", e.get(t, path).object(t)["medium"], "nothing changed")

	r = patch(`{"medium":"sms","delay":"P1Y","active":false}`)
	requireProblem(t, r, http.StatusBadRequest, "medium", "delay")
	assert.Equal(t, true, e.get(t, path).object(t)["active"], "a refused patch changes nothing")

	r = patch(`{"medium":"email","active":false}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	r = e.do(t, http.MethodPatch, unknownID(path), e.token, `{"medium":"sms"}`)
	requireProblem(t, r, http.StatusNotFound)

	// With a provider the same patch is fine.
	withProvider := newEnv(t)
	path = settingPath(t, withProvider)
	r = withProvider.do(t, http.MethodPatch, path, withProvider.token, `{"medium":"sms"}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "sms", r.object(t)["medium"])
}
