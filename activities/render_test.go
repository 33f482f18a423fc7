package activities_test

import (
	"mime"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/workflows"
)

// TestSendRendersTheTemplateInForce: each send renders the template in
// force when it goes out — the event type's, the account's or the
// built-in one, in the event's language — and its attempt names it.
func TestSendRendersTheTemplateInForce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{})
	accKey := templatedb.TemplateKey{AccountID: a.AccountID, Kind: string(templates.KindInvite), Locale: "de"}
	etKey := accKey
	etKey.EventTypeID = a.EventTypeID
	put := func(k templatedb.TemplateKey, subject string) {
		_, _, err := h.st.Templates.PutTemplate(ctx, k, encoded(t, templates.Content{Subject: subject, Heading: "Hallo {{firstName}},",
			Body: "Ihre Bestellung {{orderReference}} ({{eventType}}).", ButtonLabel: "Bewerten"}), "cli-test")
		require.NoError(t, err)
	}
	send := func(firstName string) (string, *invitedb.AttemptTemplate, string) {
		t.Helper()
		id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Email: email, FirstName: firstName, Locale: "de_AT",
			Products: []eventfixture.Product{{Name: "Zelt"}}})
		st, err := h.acts.Send(ctx, workflows.EventInput{EventID: id, Kind: invite.KindInvite})
		require.NoError(t, err)
		require.Equal(t, invite.Sent, st.Status)
		msgs := h.smtp.Messages()
		m, err := msgs[len(msgs)-1].Parse()
		require.NoError(t, err)
		subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
		require.NoError(t, err)
		text, _ := parts(t, m.Header.Get("Content-Type"), m.Body)
		attempts, err := h.st.Invites.EventAttempts(ctx, id)
		require.NoError(t, err)
		require.Len(t, attempts, 1)
		return subject, attempts[0].Template, text
	}

	subject, tpl, _ := send("Jana")
	assert.Equal(t, "Wie war Ihre Bestellung bei "+eventfixtureShop(t, h, a)+"?", subject)
	assert.Equal(t, &invitedb.AttemptTemplate{Source: string(templates.SourceBuiltin)}, tpl)

	put(accKey, "Konto v1")
	put(accKey, "Konto v2")
	subject, tpl, text := send("")
	assert.Equal(t, "Konto v2", subject)
	assert.Equal(t, &invitedb.AttemptTemplate{Source: string(templates.SourceAccount), Version: new(2)}, tpl)
	assert.Contains(t, strings.ReplaceAll(text, "\r\n", "\n"), "Grüß Gott,\n\nIhre Bestellung ", "no name: the neutral greeting of the event's locale (de_AT)")

	put(etKey, "Ereignistyp")
	subject, tpl, _ = send("Jana")
	assert.Equal(t, "Ereignistyp", subject)
	assert.Equal(t, &invitedb.AttemptTemplate{Source: string(templates.SourceEventType), Version: new(1)}, tpl)

	// The earlier attempts still name what they were rendered from.
	require.NoError(t, h.st.Templates.DeleteTemplate(ctx, etKey))
	subject, tpl, _ = send("Jana")
	assert.Equal(t, "Konto v2", subject)
	assert.Equal(t, string(templates.SourceAccount), tpl.Source)
}

// encoded is c as the store keeps it.
func encoded(t *testing.T, c templates.Content) []byte {
	t.Helper()
	b, err := templates.EncodeContent(c)
	require.NoError(t, err)
	return b
}

func eventfixtureShop(t *testing.T, h *harness, a *eventfixture.Account) string {
	t.Helper()
	acc, err := h.st.Accounts.Account(t.Context(), a.AccountID)
	require.NoError(t, err)
	return acc.Brand().DisplayName
}

// TestSendTemplateTest: a test goes to the shop's address, marked as a
// test in its subject and a header, rendered from the template in force
// with sample data; the outcome is recorded, the address forgotten, and
// a repeated run sends nothing more.
func TestSendTemplateTest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := t.Context()
	a := eventfixture.NewAccount(t, h.db, eventfixture.Setting{})
	_, _, err := h.st.Templates.PutTemplate(ctx, templatedb.TemplateKey{AccountID: a.AccountID, EventTypeID: a.EventTypeID,
		Kind: string(templates.KindReminder), Locale: "fr"},
		encoded(t, templates.Content{Subject: "Votre {{productName}}, {{firstName}} ?", Heading: "Bonjour {{firstName}},", Body: "Un avis sur {{eventType}} ?",
			ButtonLabel: "Noter"}), "cli-test")
	require.NoError(t, err)
	ts, err := h.st.Templates.CreateTestSend(ctx, templatedb.TestSend{AccountID: a.AccountID, EventTypeID: a.EventTypeID, Kind: string(templates.KindReminder),
		Locale: "fr", Address: "owner@shop.example", MaskedAddress: "o***@shop.example", CreatedBy: "cli-test"}, invite.Email)
	require.NoError(t, err)

	res, err := h.acts.SendTemplateTest(ctx, workflows.TestSendInput{TestSendID: ts.ID, AccountID: a.AccountID})
	require.NoError(t, err)
	assert.Equal(t, workflows.TestSendResult{Status: templatedb.TestSendSent}, res)
	msgs := h.smtp.Messages()
	require.Len(t, msgs, 1)
	assert.Equal(t, []string{"owner@shop.example"}, msgs[0].To)
	m, err := msgs[0].Parse()
	require.NoError(t, err)
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	require.NoError(t, err)
	assert.Equal(t, "[Test] Votre Merino hiking socks, Camille ?", subject)
	assert.Equal(t, "template test", m.Header.Get("X-Touchpoint-Test"))
	text, _ := parts(t, m.Header.Get("Content-Type"), m.Body)
	assert.Contains(t, text, "event="+templates.SampleEventID, "the feedback link leads to no customer's page")
	// The one-click unsubscribe works: it names the test and carries its
	// address, sealed, for the address is forgotten.
	unsub, err := url.Parse(strings.Trim(m.Header.Get("List-Unsubscribe"), "<>"))
	require.NoError(t, err)
	id, ok := h.unsub.Verify(unsub.Query())
	require.True(t, ok, "a signed unsubscribe link")
	assert.Equal(t, ts.ID, id)
	to, ok := h.unsub.Unseal(unsub.Query(), id)
	assert.True(t, ok)
	assert.Equal(t, "owner@shop.example", to)
	assert.NotContains(t, m.Header.Get("List-Unsubscribe"), "owner")
	assert.Contains(t, text, unsub.Query().Get(signedlink.ParamSealed), "the footer's link is the same")

	done, err := h.st.Templates.GetTestSend(ctx, a.AccountID, ts.ID)
	require.NoError(t, err)
	assert.Equal(t, templatedb.TestSendSent, done.Status)
	assert.Empty(t, done.Address, "the address is forgotten")
	assert.Equal(t, "eventType", done.TemplateSource)
	assert.Equal(t, 1, done.TemplateVersion)

	_, err = h.acts.SendTemplateTest(ctx, workflows.TestSendInput{TestSendID: ts.ID, AccountID: a.AccountID})
	require.NoError(t, err)
	assert.Len(t, h.smtp.Messages(), 1, "sent once")

	// A refusal is recorded as the test's failure, not retried.
	ts, err = h.st.Templates.CreateTestSend(ctx, templatedb.TestSend{AccountID: a.AccountID, Kind: string(templates.KindInvite), Locale: "en",
		Address: "nobody@shop.example", MaskedAddress: "n***@shop.example", CreatedBy: "cli-test"}, invite.Email)
	require.NoError(t, err)
	h.smtp.FailRCPT(1, 550)
	res, err = h.acts.SendTemplateTest(ctx, workflows.TestSendInput{TestSendID: ts.ID, AccountID: a.AccountID})
	require.NoError(t, err)
	assert.Equal(t, templatedb.TestSendFailed, res.Status)
	assert.Contains(t, res.Error, "550")
	assert.NotContains(t, res.Error, "nobody@shop.example", "no address in Temporal")

	// An address suppressed after the test was ordered gets nothing.
	sent := len(h.smtp.Messages())
	ts, err = h.st.Templates.CreateTestSend(ctx, templatedb.TestSend{AccountID: a.AccountID, Kind: string(templates.KindInvite), Locale: "en",
		Address: "Later@Shop.example", MaskedAddress: "L***@shop.example", CreatedBy: "cli-test"}, invite.Email)
	require.NoError(t, err)
	_, _, err = h.st.Suppressions.AddSuppression(ctx, a.AccountID, "later@shop.example", invite.Email, invite.Complained, "")
	require.NoError(t, err)
	res, err = h.acts.SendTemplateTest(ctx, workflows.TestSendInput{TestSendID: ts.ID, AccountID: a.AccountID})
	require.NoError(t, err)
	assert.Equal(t, templatedb.TestSendFailed, res.Status)
	assert.Equal(t, "the address is on the suppression list (complained)", res.Error)
	assert.Len(t, h.smtp.Messages(), sent, "nothing more was sent")
}
