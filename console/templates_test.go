package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/templates"
)

// TestTemplateEditor: a template is edited per kind, language and event
// type with the placeholders listed; a save is a new version that the
// history shows with the person who made it; a template the rules refuse
// is named at its field with the draft kept; a viewer may only read; an
// event type of another account is 404.
func TestTemplateEditor(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	path := "/console/templates/invite/de"

	index := s.get(t, viewerA, "/console/templates")
	require.Equal(t, http.StatusOK, index.status)
	assert.NotEmpty(t, index.elements(func(n *htmlNode) bool { return n.Data == "a" && attr(n, "href") == path }))

	p := s.get(t, editorA, path)
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, text(p.elements(func(n *htmlNode) bool { return attr(n, "class") == "placeholders" })[0]),
		"{{firstName}} {{shopName}} {{productName}} {{orderReference}} {{eventType}}")
	assert.NotEmpty(t, attr(p.byID("subject"), "value"), "the built-in template, as a shop would write it")
	frames := p.tagged("iframe")
	require.Len(t, frames, 2, "a preview at 360 and at 1280 px")
	assert.NotEmpty(t, attr(frames[0], "title"))

	form := url.Values{"subject": {"Wie war {{productName}}?"}, "heading": {"Hallo {{firstName}}"},
		"body": {"Danke für Ihre Bestellung {{orderReference}}."}, "buttonLabel": {"Bewerten"}}
	res := s.post(t, editorA, path, form)
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	key := templatedb.TemplateKey{AccountID: s.a.AccountID, Kind: string(templates.KindInvite), Locale: "de"}
	got, err := s.st.Templates.GetTemplate(context.Background(), key)
	require.NoError(t, err)
	content, err := templates.DecodeContent(got.Content)
	require.NoError(t, err)
	assert.Equal(t, "Hallo {{firstName}}", content.Heading)
	p = s.get(t, viewerA, path)
	assert.Contains(t, text(p.byID("versions-h").Parent), "version 1 · by editor@shop-a.example")
	assert.Contains(t, text(p.byID("versions-h").Parent), "Hallo {{firstName}}")
	assert.Empty(t, p.elements(func(n *htmlNode) bool {
		return n.Data == "button" && attr(n, "type") == "submit" && strings.Contains(text(n), "Save")
	}),
		"a viewer is offered no save")

	bad := s.post(t, editorA, path, url.Values{"subject": {"Hi {{lastName}}"}, "heading": {"x"}, "body": {"y"}, "buttonLabel": {"z"}})
	assert.Equal(t, http.StatusBadRequest, bad.status)
	assert.NotNil(t, bad.byID("subject-error"))
	assert.Equal(t, "Hi {{lastName}}", attr(bad.byID("subject"), "value"))
	got, _ = s.st.Templates.GetTemplate(context.Background(), key)
	assert.Equal(t, 1, got.Version, "nothing stored")

	// The preview button shows the draft without storing it.
	form.Set("heading", "Entwurf {{firstName}}")
	form.Set("action", "preview")
	draft := s.post(t, editorA, path, form)
	assert.Equal(t, http.StatusOK, draft.status)
	src := attr(draft.tagged("iframe")[0], "src")
	assert.Contains(t, src, "draft=1")
	got, _ = s.st.Templates.GetTemplate(context.Background(), key)
	assert.Equal(t, 1, got.Version)
	frame := s.get(t, editorA, src)
	require.Equal(t, http.StatusOK, frame.status)
	assert.Contains(t, frame.body, "Entwurf Lena", "the draft, with the sample customer")
	assert.Contains(t, frame.header.Get("Content-Security-Policy"), "frame-ancestors 'self'")
	assert.Contains(t, frame.header.Get("Content-Security-Policy"), "sandbox")
	assert.Contains(t, s.get(t, editorA, path+"/preview").body, "Hallo Lena", "the template in force")

	assert.Equal(t, http.StatusForbidden, s.post(t, viewerA, path, form).status)
	assert.Equal(t, http.StatusNotFound, s.get(t, ownerA, path+"?eventTypeId="+s.b.EventTypeID).status)
	assert.Equal(t, http.StatusNotFound, s.post(t, ownerA, path, merge(form, "eventTypeId", s.b.EventTypeID)).status)
	assert.Equal(t, http.StatusNotFound, s.get(t, ownerA, "/console/templates/letter/de").status)

	// An event type's own level, then deleted: the account's applies again.
	etPath := path + "?eventTypeId=" + s.a.EventTypeID
	form.Del("action")
	require.Equal(t, http.StatusSeeOther, s.post(t, editorA, path, merge(form, "eventTypeId", s.a.EventTypeID)).status)
	assert.Contains(t, s.get(t, editorA, etPath).body, "the event type&#39;s template, version 1")
	require.Equal(t, http.StatusSeeOther, s.post(t, editorA, path+"/delete", url.Values{"eventTypeId": {s.a.EventTypeID}}).status)
	assert.Contains(t, s.get(t, editorA, etPath).body, "the account&#39;s template, version 1")
}

// TestTemplateSMSFits: an SMS template that would cost more than two
// messages with a full name and link is refused at its field.
func TestTemplateSMSFits(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	res := s.post(t, editorA, "/console/templates/sms_invite/en", url.Values{"text": {strings.Repeat("Please tell us. ", 30)}})
	assert.Equal(t, http.StatusBadRequest, res.status)
	assert.Contains(t, text(res.byID("text-error")), "text messages")
	assert.Nil(t, s.get(t, editorA, "/console/templates/sms_invite/en").byID("test-h"), "a test goes to the person's address: no SMS")
}

// TestTemplateTestSend: a test goes to the signed-in person's own address
// and nowhere else, and honours the suppression list.
func TestTemplateTestSend(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	path := "/console/templates/invite/en/test"
	res := s.post(t, editorA, path, url.Values{"to": {"someone-else@example.com"}})
	require.Equal(t, http.StatusSeeOther, res.status)
	var sends []struct {
		Address   string `db:"address"`
		CreatedBy string `db:"created_by"`
	}
	require.NoError(t, s.db.Select(&sends, `SELECT address, created_by FROM template_test_sends WHERE account_id = $1`, s.a.AccountID))
	require.Len(t, sends, 1)
	assert.Equal(t, "editor@shop-a.example", sends[0].Address, "the person's own address, whatever the form says")
	assert.Equal(t, editorA, sends[0].CreatedBy)

	_, _, err := s.st.Suppressions.AddSuppression(context.Background(), s.a.AccountID, "editor@shop-a.example", invite.Email, invite.Unsubscribed, "")
	require.NoError(t, err)
	res = s.post(t, editorA, path, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Contains(t, text(res.byID("test-h").Parent), "suppression list")
	assert.Equal(t, http.StatusForbidden, s.post(t, viewerA, path, nil).status)
	assert.Equal(t, http.StatusNotFound, s.post(t, editorA, "/console/templates/sms_invite/en/test", nil).status)
}
