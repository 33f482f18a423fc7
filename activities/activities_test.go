package activities_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/internal/testactivities"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/workflows"
)

const email = "jane.doe@example.com"

// harness is the activities wired to a fresh database and a real SMTP server.
type harness struct {
	db    *sqlx.DB
	st    *store.Store
	smtp  *smtptest.Server
	links *signedlink.Links
	unsub *signedlink.Links
	acts  *activities.Activities
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	w := testactivities.New(t)
	return &harness{db: w.DB, st: w.Store, smtp: w.SMTP, links: w.Feedback, unsub: w.Unsubscribe, acts: w.Acts}
}

func (h *harness) state(t *testing.T, id string) invite.State {
	t.Helper()
	st, err := h.st.Invites.LoadInviteState(context.Background(), id)
	require.NoError(t, err)
	return st
}

// scheduledInvite is an event of a new account whose invite to email is
// scheduled.
func (h *harness) scheduledInvite(t *testing.T) string {
	t.Helper()
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{})
	return a.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: email})
}

// sendInvite runs the send activity of the event's invite.
func (h *harness) sendInvite(t *testing.T, id string) (invite.State, error) {
	return h.acts.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindInvite})
}

// appError asserts err is an ApplicationError of the type and retryability.
func appError(t *testing.T, err error, typ string, retryable bool) {
	t.Helper()
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, typ, appErr.Type())
	assert.Equal(t, !retryable, appErr.NonRetryable(), "retryable")
	assert.NotContains(t, strings.ToLower(err.Error()), email, "no address in Temporal")
}

func TestSendInviteSendsExactlyOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{})
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: email, FirstName: "Jane", LastName: "Doe", Locale: "de_DE",
		Products: []eventfixture.Product{{Name: "Wanderschuh <Trail>", ImageURL: "https://cdn.example/shoe.png"}}})
	_, err := h.st.Accounts.UpdateBranding(t.Context(), a.AccountID, accountdb.BrandingUpdate{DisplayName: new("Nordlicht Outdoor"),
		ReplyTo: new("care@nordlicht.example")})
	require.NoError(t, err)

	st, err := h.sendInvite(t, id)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, st.Status)
	assert.Equal(t, 1, st.Attempts)
	require.NotNil(t, st.SentAt)
	assert.Equal(t, st, h.state(t, id))

	msgs := h.smtp.Messages()
	require.Len(t, msgs, 1)
	assert.Equal(t, []string{email}, msgs[0].To)
	m, err := msgs[0].Parse()
	require.NoError(t, err)
	assert.Equal(t, "<"+id+"@touchpoint.example>", m.Header.Get("Message-Id"), "a stable Message-ID from the event ID")
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	require.NoError(t, err)
	assert.Equal(t, "Wie war Ihre Bestellung bei Nordlicht Outdoor?", subject, "the subject names the shop")
	from, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("From"))
	require.NoError(t, err)
	assert.Equal(t, `"Nordlicht Outdoor" <invites@touchpoint.example>`, from, "the shop's name, our address")
	assert.Equal(t, "<care@nordlicht.example>", m.Header.Get("Reply-To"))
	// RFC 8058 one-click unsubscribe, with a link of its own purpose.
	unsubscribe := strings.Trim(m.Header.Get("List-Unsubscribe"), "<>")
	assert.Equal(t, "List-Unsubscribe=One-Click", m.Header.Get("List-Unsubscribe-Post"))
	uu, err := url.Parse(unsubscribe)
	require.NoError(t, err)
	got, ok := h.unsub.Verify(uu.Query())
	assert.True(t, ok, "the unsubscribe link is signed: %s", unsubscribe)
	assert.Equal(t, id, got)
	_, ok = h.links.Verify(uu.Query())
	assert.False(t, ok, "an unsubscribe link is no feedback link")
	text, html := parts(t, m.Header.Get("Content-Type"), m.Body)
	assert.Contains(t, text, unsubscribe, "a visible unsubscribe link in the text part")
	assert.Contains(t, html, strings.ReplaceAll(unsubscribe, "&", "&amp;"), "… and in the HTML part")
	assert.Contains(t, text, "Hallo Jane,")
	assert.Contains(t, html, "Wanderschuh &lt;Trail&gt;")
	link := regexp.MustCompile(`https://touchpoint\.example/feedback\?\S+`).FindString(text)
	u, err := url.Parse(link)
	require.NoError(t, err)
	got, ok = h.links.Verify(u.Query())
	assert.True(t, ok, "the link in the mail is signed: %s", link)
	assert.Equal(t, id, got)

	// Temporal runs the activity again (a lost completion): nothing is sent.
	again, err := h.sendInvite(t, id)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, again.Status)
	assert.Len(t, h.smtp.Messages(), 1)
}

func TestSendInviteAfterACrashMidSend(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{})
	// An earlier attempt marked the invite sending and died.
	id := a.Event(t, eventfixture.Event{Status: invite.Sending, Email: email})

	_, err := h.sendInvite(t, id)
	appError(t, err, workflows.ErrTypeUncertain, false)
	st := h.state(t, id)
	assert.Equal(t, invite.Failed, st.Status)
	assert.Equal(t, invite.DeliveryUncertain, st.Reason)
	assert.Empty(t, h.smtp.Messages(), "not sent a second time")
}

func TestConcurrentSendsToOneAddressSendOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{MinDays: 30})
	ids := []string{
		a.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: email}),
		a.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: strings.ToUpper(email)}),
	}
	states := make([]invite.State, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			st, err := h.acts.Send(context.Background(), workflows.EventInput{EventID: id, Kind: invite.KindInvite})
			assert.NoError(t, err)
			states[i] = st
		})
	}
	wg.Wait()
	assert.Len(t, h.smtp.Messages(), 1)
	var statuses []string
	for _, st := range states {
		statuses = append(statuses, string(st.Status)+"/"+string(st.Reason))
	}
	assert.ElementsMatch(t, []string{"sent/", "skipped/recently_invited"}, statuses)
}

func TestTransientFailureIsRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.scheduledInvite(t)

	h.smtp.FailRCPT(1, 451)
	_, err := h.sendInvite(t, id)
	appError(t, err, workflows.ErrTypeTransient, true)
	st := h.state(t, id)
	assert.Equal(t, invite.Scheduled, st.Status)
	assert.Contains(t, st.LastError, "451")
	assert.NotContains(t, strings.ToLower(st.LastError), email)
	assert.Equal(t, 1, st.Attempts)

	st, err = h.sendInvite(t, id)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, st.Status)
	assert.Equal(t, 2, st.Attempts)
	assert.Len(t, h.smtp.Messages(), 1)
}

func TestSMTPOutageIsTransient(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.scheduledInvite(t)

	h.smtp.Stop()
	_, err := h.sendInvite(t, id)
	appError(t, err, workflows.ErrTypeTransient, true)
	assert.Equal(t, invite.Scheduled, h.state(t, id).Status)

	require.NoError(t, h.smtp.Restart())
	st, err := h.sendInvite(t, id)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, st.Status)
	assert.Len(t, h.smtp.Messages(), 1)
}

func TestPermanentFailureIsNotRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.scheduledInvite(t)

	h.smtp.FailRCPT(1, 550)
	_, err := h.sendInvite(t, id)
	appError(t, err, workflows.ErrTypeRejected, false)
	st := h.state(t, id)
	assert.Equal(t, invite.Failed, st.Status)
	assert.Equal(t, invite.Rejected, st.Reason)
	assert.Contains(t, st.LastError, "550")
	assert.Contains(t, st.LastError, "j***@example.com", "the echoed address is masked")
}

// An address the mail server refused for good is not tried again by the
// account's later invites (skipped, suppressed), whatever its case; a
// refused message, another account or another address is not affected;
// retrying the refused invite lifts the suppression.
func TestRefusedAddressIsSuppressed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{})
	send := func(a *eventfixture.Account, to string) (string, invite.State) {
		id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: to})
		h.sendInvite(t, id)
		return id, h.state(t, id)
	}

	h.smtp.FailRCPT(1, 550)
	refused, st := send(a, email)
	require.Equal(t, invite.Failed, st.Status)
	require.Equal(t, invite.Rejected, st.Reason)

	_, st = send(a, strings.ToUpper(email))
	assert.Equal(t, invite.Skipped, st.Status)
	assert.Equal(t, invite.Suppressed, st.Reason)
	assert.Empty(t, h.smtp.Messages(), "nothing sent to a refused address")

	_, st = send(eventfixture.NewAccount(t, h.db, eventfixture.Setting{}), email)
	assert.Equal(t, invite.Sent, st.Status, "another account's invites go out")

	h.smtp.FailDATA(1, 554)
	_, st = send(a, "other@example.com")
	require.Equal(t, invite.Rejected, st.Reason)
	_, st = send(a, "other@example.com")
	assert.Equal(t, invite.Sent, st.Status, "a refused message does not suppress its address")

	x, err := h.st.Suppressions.Suppression(t.Context(), a.AccountID, email)
	require.NoError(t, err)
	assert.Equal(t, invite.Bounced, x.Reason)
	_, err = h.st.Invites.RetryInvite(t.Context(), a.AccountID, refused)
	require.NoError(t, err)
	_, st = send(a, email)
	assert.Equal(t, invite.Suppressed, st.Reason, "retrying the refused invite does not lift the suppression")
	require.NoError(t, h.st.Suppressions.LiftSuppression(t.Context(), a.AccountID, email, suppressiondb.ActorOperator, true))
	_, st = send(a, email)
	assert.Equal(t, invite.Sent, st.Status, "deleting the suppression does")
}

func TestLostReplyIsUncertain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.scheduledInvite(t)

	h.smtp.HangUpAfterDATA(1)
	_, err := h.sendInvite(t, id)
	appError(t, err, workflows.ErrTypeUncertain, false)
	st := h.state(t, id)
	assert.Equal(t, invite.Failed, st.Status)
	assert.Equal(t, invite.DeliveryUncertain, st.Reason)
}

func TestDecidedAtSendTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	inactive := eventfixture.NewAccount(t, h.db, eventfixture.Setting{})
	deactivated := inactive.Event(t, eventfixture.Event{Status: invite.Scheduled})
	inactive.Set(t, "active", false)
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{})

	for id, want := range map[string]string{
		deactivated: "skipped/setting_inactive",
		a.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: eventfixture.NoEmail}): "skipped/no_address",
		a.Event(t, eventfixture.Event{Status: invite.Cancelled}):                              "cancelled/",
	} {
		st, err := h.sendInvite(t, id)
		require.NoError(t, err)
		assert.Equal(t, want, string(st.Status)+"/"+string(st.Reason))
	}
	assert.Empty(t, h.smtp.Messages())
}

type fakeSMS struct {
	mu   sync.Mutex
	sent []activities.SMS
}

func (f *fakeSMS) SendSMS(_ context.Context, m activities.SMS) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m)
	return "SM-fake", nil
}

func TestSMS(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{Medium: invite.SMS})

	st, err := h.acts.Send(t.Context(), workflows.EventInput{EventID: a.Event(t, eventfixture.Event{Status: invite.Scheduled}), Kind: invite.KindInvite})
	require.NoError(t, err)
	assert.Equal(t, "skipped/no_address", string(st.Status)+"/"+string(st.Reason), "no mobile")

	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Mobile: "+4915112345678"})
	_, err = h.sendInvite(t, id)
	appError(t, err, workflows.ErrTypeNoProvider, false)
	st = h.state(t, id)
	assert.Equal(t, "failed/no_provider", string(st.Status)+"/"+string(st.Reason))
	assert.Equal(t, "no SMS provider configured", st.LastError)

	sms := &fakeSMS{}
	h.acts.SMS = sms
	id = a.Event(t, eventfixture.Event{Status: invite.Scheduled, Mobile: "+4915112345678"})
	st, err = h.sendInvite(t, id)
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, st.Status)
	require.Len(t, sms.sent, 1)
	assert.Equal(t, "+4915112345678", sms.sent[0].To)
	assert.Contains(t, sms.sent[0].Text, h.links.URL(id))
	assert.Empty(t, h.smtp.Messages())
}

// breakingMailer delivers, then takes the database away before the
// delivery can be recorded.
type breakingMailer struct {
	mail.Sender
	db *sqlx.DB
}

func (b breakingMailer) Send(ctx context.Context, m mail.Message) error {
	err := b.Sender.Send(ctx, m)
	b.db.Close()
	return err
}

func TestSentButNotRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	id := h.scheduledInvite(t)

	// A second pool, so the test's own goes on working.
	db, err := sqlx.Open("postgres", testdb.URL(t, h.db))
	require.NoError(t, err)
	broken := *h.acts
	second := storeset.New(db, "P7D")
	broken.TemplateStore, broken.Suppressions, broken.Invites = second.Templates, second.Suppressions, second.Invites
	broken.Mailer = breakingMailer{Sender: h.acts.Mailer, db: db}

	_, err = broken.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindInvite})
	appError(t, err, workflows.ErrTypeSentUnrecorded, false)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	var d workflows.SentUnrecorded
	require.NoError(t, appErr.Details(&d))
	assert.False(t, d.SentAt.IsZero())
	assert.Equal(t, invite.Sending, h.state(t, id).Status)

	// The workflow records it.
	st, err := h.acts.RecordSent(t.Context(), workflows.RecordSentInput{EventID: id, Kind: invite.KindInvite, SentAt: d.SentAt})
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, st.Status)
	assert.Len(t, h.smtp.Messages(), 1)
}

// TestDatabaseSteps runs the steps of an invite with inputs that name no
// kind, as the histories recorded before the kind was part of them do.
func TestDatabaseSteps(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{Delay: "P2D"})
	id := a.Event(t, eventfixture.Event{})

	plan, err := h.acts.LoadPlan(ctx, workflows.EventInput{EventID: id})
	require.NoError(t, err)
	assert.Equal(t, "P2D", plan.Plan.Delay)
	assert.True(t, plan.SettingActive)

	at := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Millisecond)
	st, err := h.acts.MarkScheduled(ctx, workflows.MarkScheduledInput{EventID: id, ScheduledFor: at})
	require.NoError(t, err)
	assert.Equal(t, invite.Scheduled, st.Status)
	assert.True(t, at.Equal(*st.ScheduledFor))

	st, err = h.acts.MarkCancelled(ctx, workflows.EventInput{EventID: id})
	require.NoError(t, err)
	assert.Equal(t, invite.Cancelled, st.Status)
	st, err = h.acts.MarkCancelled(ctx, workflows.EventInput{EventID: id})
	require.NoError(t, err)
	assert.Equal(t, invite.Cancelled, st.Status, "idempotent")

	other := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
	st, err = h.acts.MarkFailed(ctx, workflows.MarkFailedInput{EventID: other, Reason: invite.RetriesExhausted, LastError: "451"})
	require.NoError(t, err)
	assert.Equal(t, "failed/retries_exhausted", string(st.Status)+"/"+string(st.Reason))

	st, err = h.acts.MarkSkipped(ctx, workflows.MarkSkippedInput{EventID: a.Event(t, eventfixture.Event{}), Reason: invite.EventTypeInactive})
	require.NoError(t, err)
	assert.Equal(t, "skipped/event_type_inactive", string(st.Status)+"/"+string(st.Reason))

	_, err = h.acts.LoadPlan(ctx, workflows.EventInput{EventID: store.NewID("evt")})
	appError(t, err, workflows.ErrTypeNotFound, false)
	_, err = h.acts.Send(ctx, workflows.EventInput{EventID: store.NewID("evt"), Kind: invite.KindInvite})
	appError(t, err, workflows.ErrTypeNotFound, false)
}

// TestDatabaseStepsOfAReminder runs the same steps for the reminder of a
// sent invite, which its invite's state does not follow.
func TestDatabaseStepsOfAReminder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	const r = invite.KindReminder
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{})
	a.Set(t, "reminder_delay", "P3D")
	sentAt := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	id := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: sentAt})

	plan, err := h.acts.LoadPlan(ctx, workflows.EventInput{EventID: id, Kind: r})
	require.NoError(t, err)
	assert.Equal(t, "P3D", plan.Plan.Delay)
	assert.True(t, sentAt.Equal(plan.Plan.ReceivedAt), "counted from the invite's send")

	at := sentAt.Add(72 * time.Hour)
	st, err := h.acts.MarkScheduled(ctx, workflows.MarkScheduledInput{EventID: id, Kind: r, ScheduledFor: at})
	require.NoError(t, err)
	assert.Equal(t, invite.Scheduled, st.Status)
	assert.True(t, at.Equal(*st.ScheduledFor))
	st, err = h.acts.MarkSkipped(ctx, workflows.MarkSkippedInput{EventID: id, Kind: r, Reason: invite.Reviewed})
	require.NoError(t, err)
	assert.Equal(t, "skipped/reviewed", string(st.Status)+"/"+string(st.Reason))
	inv := h.state(t, id)
	assert.Equal(t, invite.Sent, inv.Status, "the invite stays sent")
	assert.True(t, sentAt.Equal(*inv.SentAt))

	cancelled := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: sentAt})
	_, err = h.acts.MarkScheduled(ctx, workflows.MarkScheduledInput{EventID: cancelled, Kind: r, ScheduledFor: at})
	require.NoError(t, err)
	st, err = h.acts.MarkCancelled(ctx, workflows.EventInput{EventID: cancelled, Kind: r})
	require.NoError(t, err)
	assert.Equal(t, invite.Cancelled, st.Status)
	assert.Equal(t, invite.Sent, h.state(t, cancelled).Status)

	// A reminder is planned only for a sent invite.
	waiting := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
	plan, err = h.acts.LoadPlan(ctx, workflows.EventInput{EventID: waiting, Kind: r})
	require.NoError(t, err)
	assert.Empty(t, plan.Plan.Delay)
	st, err = h.acts.MarkScheduled(ctx, workflows.MarkScheduledInput{EventID: waiting, Kind: r, ScheduledFor: at})
	require.NoError(t, err)
	assert.Empty(t, st.Status)

	_, err = h.acts.LoadPlan(ctx, workflows.EventInput{EventID: id, Kind: "letter"})
	appError(t, err, workflows.ErrTypeBadInput, false)
	_, err = h.acts.Send(ctx, workflows.EventInput{EventID: id, Kind: "letter"})
	appError(t, err, workflows.ErrTypeBadInput, false)
	assert.Empty(t, h.smtp.Messages())
}

// parts returns the decoded text and HTML parts of a multipart/alternative body.
func parts(t *testing.T, contentType string, body io.Reader) (text, html string) {
	t.Helper()
	_, params, err := mime.ParseMediaType(contentType)
	require.NoError(t, err)
	r := multipart.NewReader(body, params["boundary"])
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return text, html
		}
		require.NoError(t, err)
		var b bytes.Buffer
		_, err = b.ReadFrom(p)
		require.NoError(t, err)
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			html = b.String()
		} else {
			text = b.String()
		}
	}
}

func TestSendReminder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{MinDays: 30})
	id := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: time.Now().Add(-72 * time.Hour), Email: email, FirstName: "Jane"})
	_, err := h.st.Invites.MarkScheduled(t.Context(), invite.KindReminder, id, time.Now())
	require.NoError(t, err)

	rem, err := h.acts.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindReminder})
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, rem.Status, "the throttle does not hold back the invite's own reminder")
	msgs := h.smtp.Messages()
	require.Len(t, msgs, 1)
	m, err := msgs[0].Parse()
	require.NoError(t, err)
	assert.Equal(t, "<"+id+".reminder@touchpoint.example>", m.Header.Get("Message-Id"), "not the invite's Message-ID")
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	require.NoError(t, err)
	assert.Contains(t, strings.ToLower(subject), "reminder")
	assert.NotEmpty(t, m.Header.Get("List-Unsubscribe"))

	again, err := h.acts.Send(t.Context(), workflows.EventInput{EventID: id, Kind: invite.KindReminder})
	require.NoError(t, err)
	assert.Equal(t, invite.Sent, again.Status)
	assert.Len(t, h.smtp.Messages(), 1, "a repeated attempt sends nothing")

	// A review before the reminder's time: nothing is sent.
	reviewed := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: time.Now(), Email: "ann@example.com"})
	_, err = h.st.Invites.MarkScheduled(t.Context(), invite.KindReminder, reviewed, time.Now())
	require.NoError(t, err)
	_, _, err = h.st.Reviews.SaveReview(t.Context(), reviewdb.ReviewInput{EventID: reviewed, Rating: 5, Comment: "great", Locale: "en"})
	require.NoError(t, err)
	rem, err = h.acts.Send(t.Context(), workflows.EventInput{EventID: reviewed, Kind: invite.KindReminder})
	require.NoError(t, err)
	assert.Equal(t, invite.Reminder{Status: invite.Skipped, Reason: invite.Reviewed, ScheduledFor: rem.ScheduledFor}, rem.Reminder())
	assert.Len(t, h.smtp.Messages(), 1)
}
