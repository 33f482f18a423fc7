package activities_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/workflows"
)

const (
	accountSID = "AC00000000000000000000000000000001"
	authToken  = "sms-test-auth-token"
	sender     = "+15005550006"
	// mobile is the customer's number in E.164; the events give it in
	// national form, read in the locale's country.
	mobile         = "+4915112345678"
	nationalMobile = "0151 1234 5678"
	statusURL      = "https://touchpoint.example/sms/status"
)

// answer is how the provider answers one request, after reading it whole.
type answer struct {
	status int
	body   string
	// hold: no answer comes until the client gives up.
	hold bool
	// hangUp: the connection is closed without an answer.
	hangUp bool
	// before runs between reading the request and answering it.
	before func()
}

// twilioAPI is a local server speaking the Twilio Messages API: every
// message POSTed is recorded, then answered with the next scripted answer
// or, when none is left, 201 with a new message SID.
type twilioAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	answers []answer
	got     []url.Values
}

func newTwilioAPI(t *testing.T, answers ...answer) *twilioAPI {
	t.Helper()
	api := &twilioAPI{answers: answers}
	release := make(chan struct{})
	api.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if r.Method != http.MethodPost || r.URL.Path != "/2010-04-01/Accounts/"+accountSID+"/Messages.json" ||
			!ok || user != accountSID || pass != authToken {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"code": 20404, "message": "The requested resource was not found", "status": 404}`)
			return
		}
		if err := r.ParseForm(); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		api.mu.Lock()
		api.got = append(api.got, r.PostForm)
		n := len(api.got)
		a := answer{status: http.StatusCreated, body: fmt.Sprintf(`{"sid": "SM%032d", "status": "queued"}`, n)}
		if len(api.answers) > 0 {
			a, api.answers = api.answers[0], api.answers[1:]
		}
		api.mu.Unlock()
		if a.before != nil {
			a.before()
		}
		switch {
		case a.hold:
			select {
			case <-r.Context().Done():
			case <-release:
			}
		case a.hangUp:
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(a.status)
			fmt.Fprint(w, a.body)
		}
	}))
	t.Cleanup(func() { close(release); api.srv.Close() })
	return api
}

// requests returns the messages the provider has been sent.
func (api *twilioAPI) requests() []url.Values {
	api.mu.Lock()
	defer api.mu.Unlock()
	return append([]url.Values(nil), api.got...)
}

// withProvider returns a copy of h's activities that send SMS through api,
// giving up on an answer after timeout.
func (h *harness) withProvider(t *testing.T, api *twilioAPI, timeout time.Duration) *activities.Activities {
	t.Helper()
	tw, err := sms.NewTwilio(sms.Config{BaseURL: api.srv.URL, AccountSID: accountSID, AuthToken: authToken, From: sender, Timeout: timeout})
	require.NoError(t, err)
	sender, err := activities.NewTwilioSMS(tw, statusURL)
	require.NoError(t, err)
	acts := *h.acts
	acts.SMS = sender
	return &acts
}

// noNumber asserts that a text bound for Temporal or the API does not
// carry the customer's number.
func noNumber(t *testing.T, text string) {
	t.Helper()
	assert.NotContains(t, text, "15112345678")
	assert.NotContains(t, text, "151 1234 5678")
}

func TestSMSInviteThroughTheProvider(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	api := newTwilioAPI(t)
	acts := h.withProvider(t, api, 5*time.Second)
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{Medium: invite.SMS})
	_, err := h.st.Accounts.UpdateBranding(t.Context(), a.AccountID, accountdb.BrandingUpdate{DisplayName: new("Nordlicht Outdoor")})
	require.NoError(t, err)
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Locale: "de", FirstName: "Jane", Mobile: nationalMobile})

	st, err := acts.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindInvite})
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, st.Status)
	assert.Equal(t, invite.SMS, st.Medium)
	assert.Equal(t, 1, st.Attempts)
	assert.Empty(t, h.smtp.Messages(), "no email")

	got := api.requests()
	require.Len(t, got, 1)
	assert.Equal(t, mobile, got[0].Get("To"), "the national number in E.164, read in the locale's country")
	assert.Equal(t, sender, got[0].Get("From"))
	assert.Equal(t, statusURL+"?event="+id+"&message=invite", got[0].Get("StatusCallback"))
	want, err := h.acts.SMSTemplates.Render("de", templates.SMSData{ShopName: "Nordlicht Outdoor", FirstName: "Jane",
		FeedbackURL: h.links.URL(id)})
	require.NoError(t, err)
	body := got[0].Get("Body")
	assert.Equal(t, want.Text, body, "the locale's SMS template, naming the shop")
	assert.True(t, strings.HasPrefix(body, "Nordlicht Outdoor: Hallo Jane,"), body)
	link := regexp.MustCompile(`https://touchpoint\.example/feedback\?\S+`).FindString(body)
	u, err := url.Parse(link)
	require.NoError(t, err)
	event, ok := h.links.Verify(u.Query())
	assert.True(t, ok, "the link in the text is signed: %s", link)
	assert.Equal(t, id, event)
	encoding, segments := sms.Segments(body)
	assert.Equal(t, sms.EncodingGSM7, encoding)
	assert.LessOrEqual(t, segments, 2)

	// Temporal runs the activity again (a lost completion): nothing is sent.
	again, err := acts.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindInvite})
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, again.Status)
	assert.Len(t, api.requests(), 1)
}

// The provider's answers, as the invite records them: a refusal of the
// number suppresses it for the account (bounced, or unsubscribed for a
// customer who replied STOP); a region the account may not send to is
// the account's to fix and suppresses nothing; 429 and 5xx are tried
// again and then succeed.
func TestSMSProviderAnswers(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tests := []struct {
		name     string
		answer   answer
		want     string // status/reason after the first attempt
		errType  string
		suppress invite.SuppressionReason // "" for none
		inError  string
	}{
		{
			name: "invalid number",
			answer: answer{status: 400, body: `{"code": 21211, "message": "The 'To' number ` + mobile + ` is not a valid phone number.",
				"more_info": "https://www.twilio.com/docs/errors/21211", "status": 400}`},
			want: "failed/rejected", errType: workflows.ErrTypeRejected, suppress: invite.Bounced, inError: "error 21211",
		},
		{
			name:   "not a mobile",
			answer: answer{status: 400, body: `{"code": 21614, "message": "'To' number is not a valid mobile number", "status": 400}`},
			want:   "failed/rejected", errType: workflows.ErrTypeRejected, suppress: invite.Bounced, inError: "error 21614",
		},
		{
			name:   "unsubscribed",
			answer: answer{status: 400, body: `{"code": 21610, "message": "Attempt to send to unsubscribed recipient", "status": 400}`},
			want:   "failed/rejected", errType: workflows.ErrTypeRejected, suppress: invite.Unsubscribed, inError: "error 21610",
		},
		{
			name: "region not permitted",
			answer: answer{status: 400, body: `{"code": 21408, "message": "Permission to send an SMS has not been enabled for the region indicated by the 'To' number: ` +
				mobile + `", "status": 400}`},
			want: "failed/rejected", errType: workflows.ErrTypeRejected, inError: "error 21408",
		},
		{
			name:   "bad credentials",
			answer: answer{status: 401, body: `{"code": 20003, "message": "Authenticate", "status": 401}`},
			want:   "failed/rejected", errType: workflows.ErrTypeRejected, inError: "HTTP 401",
		},
		{
			name:   "too many requests",
			answer: answer{status: 429, body: `{"code": 20429, "message": "Too Many Requests", "status": 429}`},
			want:   "scheduled/", errType: workflows.ErrTypeTransient, inError: "HTTP 429",
		},
		{
			name:   "server error",
			answer: answer{status: 500, body: `{"code": 20500, "message": "Internal Server Error", "status": 500}`},
			want:   "scheduled/", errType: workflows.ErrTypeTransient, inError: "HTTP 500",
		},
		{
			name:   "a proxy's page",
			answer: answer{status: 503, body: `<html>Service Unavailable</html>`},
			want:   "scheduled/", errType: workflows.ErrTypeTransient, inError: "HTTP 503",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newTwilioAPI(t, tt.answer)
			acts := h.withProvider(t, api, 5*time.Second)
			a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{Medium: invite.SMS})
			id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Locale: "de", Mobile: nationalMobile})

			_, err := acts.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindInvite})
			transient := tt.errType == workflows.ErrTypeTransient
			appError(t, err, tt.errType, transient)
			noNumber(t, err.Error())
			st := h.state(t, id)
			assert.Equal(t, tt.want, string(st.Status)+"/"+string(st.Reason))
			assert.Contains(t, st.LastError, tt.inError)
			noNumber(t, st.LastError)
			assert.Equal(t, 1, st.Attempts)

			sup, err := h.st.Suppressions.Suppression(t.Context(), a.AccountID, mobile)
			if tt.suppress == "" {
				assert.ErrorIs(t, err, store.ErrNotFound, "the number is not suppressed")
			} else {
				require.NoError(t, err, "the number is suppressed")
				assert.Equal(t, tt.suppress, sup.Reason)
				assert.Equal(t, invite.SMS, sup.Medium)
			}

			// The workflow tries again: a transient failure is sent now, a
			// permanent one stays failed.
			st, err = acts.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindInvite})
			if transient {
				require.NoError(t, err)
				assert.Equal(t, invite.Sent, st.Status)
				assert.Equal(t, 2, st.Attempts)
				assert.Len(t, api.requests(), 2)
				return
			}
			appError(t, err, tt.errType, false)
			assert.Equal(t, invite.Failed, st.Status, "a failed invite is left as it is")
			assert.Len(t, api.requests(), 1)
		})
	}
}

// A send whose outcome is unknown — no answer in time, or the connection
// cut after the provider read the message — ends delivery_uncertain, and
// no attempt ever sends it again.
func TestSMSUnknownOutcomeIsNeverSentTwice(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for name, a := range map[string]answer{
		"slow answer": {hold: true},
		"cut off":     {hangUp: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			api := newTwilioAPI(t, a)
			acts := h.withProvider(t, api, 300*time.Millisecond)
			account := eventfixture.NewAccount(t, h.db, eventfixture.Setting{Medium: invite.SMS})
			id := account.Event(t, eventfixture.Event{Status: invite.Scheduled, Locale: "de", Mobile: nationalMobile})

			_, err := acts.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindInvite})
			appError(t, err, workflows.ErrTypeUncertain, false)
			st := h.state(t, id)
			assert.Equal(t, "failed/delivery_uncertain", string(st.Status)+"/"+string(st.Reason))
			noNumber(t, st.LastError)
			_, err = h.st.Suppressions.Suppression(t.Context(), account.AccountID, mobile)
			assert.ErrorIs(t, err, store.ErrNotFound)

			// Temporal, or ops with a reset, run the step again.
			_, err = acts.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindInvite})
			appError(t, err, workflows.ErrTypeUncertain, false)
			assert.Len(t, api.requests(), 1, "sent once")
		})
	}
}

// The worker dies after the provider accepted the message and before the
// invite recorded it (here: its database goes away at that moment). The
// invite is left sending; the next attempt, on another worker, finds the
// mark and fails it as delivery_uncertain without sending again.
func TestSMSAcceptedButNotRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{Medium: invite.SMS})
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Locale: "de", Mobile: nationalMobile})

	// The first worker's own pool, so the test's goes on working.
	db, err := sqlx.Open("postgres", testdb.URL(t, h.db))
	require.NoError(t, err)
	api := newTwilioAPI(t, answer{status: http.StatusCreated, body: `{"sid": "SM1", "status": "queued"}`, before: func() { db.Close() }})
	dying := h.withProvider(t, api, 5*time.Second)
	second := storeset.New(db, "P7D")
	dying.TemplateStore, dying.Suppressions, dying.Invites = second.Templates, second.Suppressions, second.Invites

	_, err = dying.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindInvite})
	appError(t, err, workflows.ErrTypeSentUnrecorded, false)
	assert.Equal(t, invite.Sending, h.state(t, id).Status, "the mark of the send is all that is left")

	next := h.withProvider(t, api, 5*time.Second)
	_, err = next.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindInvite})
	appError(t, err, workflows.ErrTypeUncertain, false)
	st := h.state(t, id)
	assert.Equal(t, "failed/delivery_uncertain", string(st.Status)+"/"+string(st.Reason))
	assert.Len(t, api.requests(), 1, "never sent a second time")
}

func TestSMSReminder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	api := newTwilioAPI(t)
	acts := h.withProvider(t, api, 5*time.Second)
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{Medium: invite.SMS, MinDays: 30})
	_, err := h.st.Accounts.UpdateBranding(t.Context(), a.AccountID, accountdb.BrandingUpdate{DisplayName: new("Nordlicht Outdoor")})
	require.NoError(t, err)
	id := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: time.Now().Add(-72 * time.Hour), Locale: "fr",
		FirstName: "Zoé", Mobile: "06 12 34 56 78"})
	_, err = h.st.Invites.MarkScheduled(t.Context(), invite.KindReminder, id, time.Now())
	require.NoError(t, err)

	rem, err := acts.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindReminder})
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, rem.Status)
	got := api.requests()
	require.Len(t, got, 1)
	assert.Equal(t, "+33612345678", got[0].Get("To"))
	assert.Equal(t, statusURL+"?event="+id+"&message=reminder", got[0].Get("StatusCallback"))
	want, err := h.acts.SMSTemplates.Render("fr", templates.SMSData{ShopName: "Nordlicht Outdoor", FirstName: "Zoé",
		FeedbackURL: h.links.URL(id), Reminder: true})
	require.NoError(t, err)
	assert.Equal(t, want.Text, got[0].Get("Body"), "the reminder's text")
	assert.Contains(t, got[0].Get("Body"), h.links.URL(id), "the same feedback link")
	assert.Empty(t, h.smtp.Messages())

	again, err := acts.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindReminder})
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, again.Status)
	assert.Len(t, api.requests(), 1, "a repeated attempt sends nothing")

	// The customer replied STOP since the invite: the reminder is skipped
	// and the number suppressed.
	stopped := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: time.Now(), Locale: "de", Mobile: "0151 99999999"})
	_, err = h.st.Invites.MarkScheduled(t.Context(), invite.KindReminder, stopped, time.Now())
	require.NoError(t, err)
	refusing := h.withProvider(t, newTwilioAPI(t, answer{status: 400,
		body: `{"code": 21610, "message": "Attempt to send to unsubscribed recipient", "status": 400}`}), 5*time.Second)
	rem, err = refusing.Send(t.Context(), workflows.EventInput{EventID: stopped, Kind: invite.KindReminder})
	require.NoError(t, err)
	assert.Equal(t, "skipped/rejected", string(rem.Status)+"/"+string(rem.Reason))
	sup, err := h.st.Suppressions.Suppression(t.Context(), a.AccountID, "+4915199999999")
	require.NoError(t, err)
	assert.Equal(t, invite.Unsubscribed, sup.Reason)
}

// minDaysBetweenInvites holds for SMS by the number, however the client
// wrote it; the suppression list and a number that is no mobile stop an
// invite before the provider is asked.
func TestSMSDecidedBeforeTheProvider(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	api := newTwilioAPI(t)
	acts := h.withProvider(t, api, 5*time.Second)
	send := func(a *eventfixture.Account, e eventfixture.Event) string {
		t.Helper()
		e.Status = invite.Scheduled
		st, err := acts.Send(t.Context(), workflows.EventInput{EventID: a.Event(t, e), Kind: invite.KindInvite})
		require.NoError(t, err)
		return string(st.Status) + "/" + string(st.Reason)
	}

	throttled := eventfixture.NewAccount(t, h.db, eventfixture.Setting{Medium: invite.SMS, MinDays: 30})
	assert.Equal(t, "sent/", send(throttled, eventfixture.Event{Locale: "de", Mobile: nationalMobile}))
	assert.Equal(t, "skipped/recently_invited", send(throttled, eventfixture.Event{Mobile: "+49 151 1234 5678", Email: "other@example.com"}),
		"the same number, written internationally, for another email address")
	assert.Equal(t, "sent/", send(throttled, eventfixture.Event{Locale: "de", Mobile: "0151 99999999"}), "another number")
	assert.Len(t, api.requests(), 2)

	suppressed := eventfixture.NewAccount(t, h.db, eventfixture.Setting{Medium: invite.SMS})
	_, _, err := h.st.Suppressions.AddSuppression(t.Context(), suppressed.AccountID, mobile, invite.SMS, invite.Manual, "")
	require.NoError(t, err)
	assert.Equal(t, "skipped/suppressed", send(suppressed, eventfixture.Event{Locale: "de", Mobile: nationalMobile}))
	assert.Equal(t, "skipped/no_address", send(suppressed, eventfixture.Event{Locale: "de", Mobile: "030 12345678"}), "a landline")
	assert.Equal(t, "skipped/no_address", send(suppressed, eventfixture.Event{Mobile: nationalMobile}),
		"a national number without a locale to read it in")
	assert.Len(t, api.requests(), 2, "the provider was not asked")
}
