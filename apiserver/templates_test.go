package apiserver_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/templatedb"
)

var shopInvite = map[string]any{
	"subject":     "How was your {{productName}}, {{firstName}}?",
	"preheader":   "Order {{orderReference}}",
	"heading":     "Hi {{firstName}},",
	"body":        "thanks for your {{eventType}} at {{shopName}}.\n\nIt takes a minute.",
	"buttonLabel": "Rate it",
}

func TestTemplateLevels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	et := e.create(t, "/event-types", map[string]any{"name": "visit"})["id"].(string)

	// Nothing stored: the built-in template, with its placeholders.
	r := e.get(t, "/templates/invite/de")
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	got := r.object(t)
	assert.Equal(t, map[string]any{"kind": "invite", "locale": "de", "eventTypeId": nil, "source": "builtin", "version": nil,
		"createdAt": nil, "updatedAt": nil, "subject": "Wie war Ihre Bestellung bei {{shopName}}?", "preheader": "",
		"heading": "Hallo {{firstName}},", "body": got["body"], "buttonLabel": "Feedback geben"}, got)
	assert.True(t, strings.HasPrefix(got["body"].(string), "vielen Dank für Ihre Bestellung bei {{shopName}}."), got["body"])
	r = e.get(t, "/templates/sms_reminder/fr?eventTypeId="+et)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "builtin", r.object(t)["source"])
	assert.True(t, strings.HasPrefix(r.object(t)["text"].(string), "Bonjour {{firstName}}, petit rappel"), "%s", r.body)
	assert.NotContains(t, r.object(t), "subject", "an SMS template has only text")

	// The account's template, then a new version of it.
	r = e.do(t, http.MethodPut, "/templates/invite/de", e.token, shopInvite)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	acc := r.object(t)
	assert.Equal(t, "account", acc["source"])
	assert.EqualValues(t, 1, acc["version"])
	assert.Nil(t, acc["eventTypeId"])
	assert.Regexp(t, timestampRE, acc["createdAt"])
	changed := map[string]any{"subject": "Neu", "heading": "Hallo", "body": "Text", "buttonLabel": "Los"}
	r = e.do(t, http.MethodPut, "/templates/invite/de", e.token, changed)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.EqualValues(t, 2, r.object(t)["version"])
	assert.Equal(t, "", r.object(t)["preheader"], "a field left out is empty in the new version")

	// The event type's template wins for that event type only.
	r = e.do(t, http.MethodPut, "/templates/invite/de?eventTypeId="+et, e.token, shopInvite)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	assert.Equal(t, "eventType", r.object(t)["source"])
	assert.Equal(t, et, r.object(t)["eventTypeId"])
	assert.EqualValues(t, 1, r.object(t)["version"])
	assert.Equal(t, "eventType", e.get(t, "/templates/invite/de?eventTypeId="+et).object(t)["source"])
	assert.Equal(t, "Neu", e.get(t, "/templates/invite/de").object(t)["subject"])
	other := e.create(t, "/event-types", map[string]any{"name": "renewal"})["id"].(string)
	assert.Equal(t, "account", e.get(t, "/templates/invite/de?eventTypeId="+other).object(t)["source"])
	assert.Equal(t, "builtin", e.get(t, "/templates/invite/nl?eventTypeId="+et).object(t)["source"], "per language")

	list, next := items(t, e.get(t, "/templates"))
	assert.Len(t, list, 2)
	assert.Nil(t, next)
	list, _ = items(t, e.get(t, "/templates?level=eventType"))
	require.Len(t, list, 1)
	assert.Equal(t, et, list[0]["eventTypeId"])
	list, _ = items(t, e.get(t, "/templates?level=account&kind=invite&locale=de"))
	require.Len(t, list, 1)
	assert.Nil(t, list[0]["eventTypeId"])
	list, _ = items(t, e.get(t, "/templates?eventTypeId="+other))
	assert.Empty(t, list)

	// DELETE goes back one level at a time.
	r = e.do(t, http.MethodDelete, "/templates/invite/de?eventTypeId="+et, e.token, nil)
	require.Equal(t, http.StatusNoContent, r.status, "%s", r.body)
	assert.Empty(t, r.body)
	assert.Equal(t, "account", e.get(t, "/templates/invite/de?eventTypeId="+et).object(t)["source"])
	require.Equal(t, http.StatusNoContent, e.do(t, http.MethodDelete, "/templates/invite/de", e.token, nil).status)
	assert.Equal(t, "builtin", e.get(t, "/templates/invite/de?eventTypeId="+et).object(t)["source"])
	requireProblem(t, e.do(t, http.MethodDelete, "/templates/invite/de", e.token, nil), http.StatusNotFound)

	// A version number is never used twice.
	r = e.do(t, http.MethodPut, "/templates/invite/de", e.token, changed)
	require.Equal(t, http.StatusCreated, r.status)
	assert.EqualValues(t, 3, r.object(t)["version"])
}

func TestTemplateAccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, group := range []string{auth.GroupEvents, auth.GroupReadonly} {
		tok := e.tokenFor(t, e.account, group)
		assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/templates/invite/en", tok, nil).status, group)
		assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/templates", tok, nil).status, group)
		for _, c := range []struct{ method, path string }{
			{http.MethodPut, "/templates/invite/en"},
			{http.MethodDelete, "/templates/invite/en"},
			{http.MethodPost, "/templates/test-send"},
		} {
			requireProblem(t, e.do(t, c.method, c.path, tok, shopInvite), http.StatusForbidden)
		}
	}
	requireProblem(t, e.do(t, http.MethodGet, "/templates/invite/en", "", nil), http.StatusUnauthorized)
}

// TestTemplateTenantIsolation: another account's event type, event or
// test send is not found, whatever the route.
func TestTemplateTenantIsolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, otherTok := e.otherAccount(t)
	r := e.doOn(t, e.srv.URL, http.MethodPost, "/event-types", otherTok, map[string]any{"name": "theirs"})
	require.Equal(t, http.StatusCreated, r.status)
	theirs := r.object(t)["id"].(string)
	q := "?eventTypeId=" + theirs
	requireProblem(t, e.get(t, "/templates/invite/en"+q), http.StatusNotFound)
	requireProblem(t, e.do(t, http.MethodPut, "/templates/invite/en"+q, e.token, shopInvite), http.StatusNotFound)
	requireProblem(t, e.do(t, http.MethodDelete, "/templates/invite/en"+q, e.token, nil), http.StatusNotFound)
	requireProblem(t, e.do(t, http.MethodPost, "/templates/preview", e.token,
		map[string]any{"kind": "invite", "locale": "en", "eventTypeId": theirs}), http.StatusNotFound)
	requireProblem(t, e.do(t, http.MethodPost, "/templates/test-send", e.token,
		map[string]any{"kind": "invite", "locale": "en", "to": "me@shop.example", "eventTypeId": theirs}), http.StatusNotFound)
	list, _ := items(t, e.get(t, "/templates?eventTypeId="+theirs))
	assert.Empty(t, list)

	// Their template and their event do not show.
	r = e.do(t, http.MethodPut, "/templates/invite/en", otherTok, shopInvite)
	require.Equal(t, http.StatusCreated, r.status)
	assert.Equal(t, "builtin", e.get(t, "/templates/invite/en").object(t)["source"])
	r = e.do(t, http.MethodPost, "/events", otherTok, map[string]any{
		"customer": map[string]any{"email": "x@example.com", "firstName": "Secret"}, "type": "theirs",
		"channel": map[string]any{"id": defaultChannel(t, e, otherTok)}, "transaction": map[string]any{"reference": "o", "date": "2026-11-20T10:00:00Z"},
		"system": "s", "systemVersion": "1"})
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	p := requireProblem(t, e.do(t, http.MethodPost, "/templates/preview", e.token,
		map[string]any{"kind": "invite", "locale": "en", "eventId": r.object(t)["EventRef"]}), http.StatusNotFound)
	assert.NotContains(t, p["detail"], "Secret")

	r = e.do(t, http.MethodPost, "/templates/test-send", otherTok, map[string]any{"kind": "invite", "locale": "en", "to": "me@theirs.example"})
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	requireProblem(t, e.get(t, "/templates/test-sends/"+r.object(t)["id"].(string)), http.StatusNotFound)
}

func defaultChannel(t *testing.T, e *env, tok string) string {
	t.Helper()
	list, _ := items(t, e.do(t, http.MethodGet, "/channels", tok, nil))
	require.NotEmpty(t, list)
	return list[0]["id"].(string)
}

// TestTemplateHostileInput tries every route with missing, malformed,
// oversized and hostile input.
func TestTemplateHostileInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range shopInvite {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	put := func(path string, body any) response { return e.do(t, http.MethodPut, path, e.token, body) }

	// Paths that name nothing.
	for _, path := range []string{"/templates/email/en", "/templates/invite/pt", "/templates/invite/de_AT", "/templates/INVITE/en",
		"/templates/invite/en?eventTypeId=ety-1", "/templates/invite/en?eventTypeId=" + strings.Repeat("x", 2000)} {
		requireProblem(t, put(path, shopInvite), http.StatusNotFound)
		requireProblem(t, e.get(t, path), http.StatusNotFound)
	}
	assert.Contains(t, requireProblem(t, e.get(t, "/templates/email/en"), http.StatusNotFound)["detail"], "invite, reminder, sms_invite, sms_reminder")
	requireProblem(t, e.get(t, "/templates/invite/en?event_type_id=x"), http.StatusBadRequest, "event_type_id")
	requireProblem(t, e.get(t, "/templates?kind=email&locale=pt&level=x&limit=0"), http.StatusBadRequest, "kind", "locale", "level", "limit")

	// Bodies.
	for name, tc := range map[string]struct {
		path  string
		body  any
		field string
		want  string
	}{
		"unknown placeholder":   {"/templates/invite/en", with("body", "Dear {{customerEmail}}"), "body", "unknown placeholder {{customerEmail}}"},
		"CR LF in the subject":  {"/templates/invite/en", with("subject", "Hi\r\nBcc: victim@example.com"), "subject", "one line"},
		"control in the button": {"/templates/invite/en", with("buttonLabel", "Go\u0007"), "buttonLabel", "control"},
		"empty heading":         {"/templates/invite/en", with("heading", " "), "heading", "must not be empty"},
		"long body":             {"/templates/invite/en", with("body", strings.Repeat("a", 5001)), "body", "at most 5000"},
		"name not greeting":     {"/templates/reminder/en", with("body", "Thanks {{firstName}} for it"), "body", "greeting"},
		"text in an email":      {"/templates/invite/en", with("text", "hi"), "text", "SMS"},
		"subject in an SMS":     {"/templates/sms_invite/en", map[string]any{"text": "hi", "subject": "S"}, "subject", "only text"},
		"read-only member":      {"/templates/invite/en", with("version", 7), "version", ""},
		"wrong type":            {"/templates/invite/en", with("subject", 7), "subject", ""},
		"unknown member":        {"/templates/invite/en", with("subjekt", "x"), "subjekt", "subject"},
		"SMS beyond two segments": {"/templates/sms_invite/en", map[string]any{"text": strings.Repeat("Lorem ipsum ", 25)},
			"text", "3 segments, at most 2"},
		"SMS turned UCS-2": {"/templates/sms_invite/en", map[string]any{"text": "Hi {{firstName}}, how was it? 🙂 " + strings.Repeat("x", 40)},
			"text", "in UCS-2"},
	} {
		r := put(tc.path, tc.body)
		requireProblem(t, r, http.StatusBadRequest, tc.field)
		assert.Contains(t, fieldMessage(t, r, tc.field), tc.want, name)
	}
	requireProblem(t, put("/templates/invite/en", `{"subject": "a", "subject": "b"}`), http.StatusBadRequest)
	requireProblem(t, put("/templates/invite/en", `{"subject": "a\u0000"}`), http.StatusBadRequest)
	requireProblem(t, put("/templates/invite/en", `{"subject":`), http.StatusBadRequest)
	requireProblem(t, put("/templates/invite/en", `[]`), http.StatusBadRequest)
	requireProblem(t, put("/templates/invite/en", ""), http.StatusBadRequest)
	requireProblem(t, put("/templates/invite/en", `{"body": "`+strings.Repeat("x", 70<<10)+`"}`), http.StatusRequestEntityTooLarge)
	requireProblem(t, e.do(t, http.MethodPut, "/templates/invite/en", e.token, "subject=x", header{"Content-Type", "text/plain"}),
		http.StatusUnsupportedMediaType)
	requireProblem(t, e.do(t, http.MethodPatch, "/templates/invite/en", e.token, shopInvite), http.StatusMethodNotAllowed)
	assert.Equal(t, "builtin", e.get(t, "/templates/invite/en").object(t)["source"], "nothing was stored")

	// Markup is stored as text and shown as text.
	hostile := with("body", `<script>alert(1)</script> & <b>"quotes"</b> ]]>`)
	r := put("/templates/invite/en", hostile)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	assert.Equal(t, hostile["body"], r.object(t)["body"], "as typed")
	pr := e.do(t, http.MethodPost, "/templates/preview", e.token, map[string]any{"kind": "invite", "locale": "en"})
	require.Equal(t, http.StatusOK, pr.status, "%s", pr.body)
	page := pr.object(t)["html"].(string)
	assert.NotContains(t, page, "<script>")
	assert.Contains(t, page, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;&#34;quotes&#34;&lt;/b&gt; ]]&gt;")
	assert.Contains(t, pr.object(t)["text"], `<script>alert(1)</script> & <b>"quotes"</b> ]]>`)
}

func TestTemplatePreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.store.Accounts.UpdateBranding(t.Context(), e.account, accountdb.BrandingUpdate{DisplayName: new("Nordlicht Outdoor")})
	require.NoError(t, err)
	et := e.create(t, "/event-types", map[string]any{"name": "checkout"})["id"].(string)
	preview := func(body map[string]any) map[string]any {
		t.Helper()
		r := e.do(t, http.MethodPost, "/templates/preview", e.token, body)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		return r.object(t)
	}

	// The built-in template with sample data.
	p := preview(map[string]any{"kind": "invite", "locale": "de"})
	assert.Equal(t, "Wie war Ihre Bestellung bei Nordlicht Outdoor?", p["subject"])
	assert.Equal(t, "builtin", p["source"])
	assert.Nil(t, p["version"])
	assert.True(t, strings.HasPrefix(p["text"].(string), "Hallo Lena,\n\n"), p["text"])
	doc, err := html.Parse(strings.NewReader(p["html"].(string)))
	require.NoError(t, err)
	var links []string
	for n := range doc.Descendants() {
		if n.DataAtom == atom.A {
			for _, a := range n.Attr {
				if a.Key == "href" {
					links = append(links, a.Val)
				}
			}
		}
	}
	require.Len(t, links, 2, "the button and the unsubscribe link")
	assert.Contains(t, links[0], "event=evt-00000000-0000-4000-8000-000000000000", "a sample link, no customer's")
	assert.NotContains(t, p, "segments")

	// The template of the request, not stored.
	p = preview(map[string]any{"kind": "invite", "locale": "en", "eventTypeId": et, "template": shopInvite})
	assert.Equal(t, "How was your Merino hiking socks, Emma?", p["subject"])
	assert.Equal(t, "request", p["source"])
	assert.Contains(t, p["text"], "thanks for your checkout at Nordlicht Outdoor.")
	assert.Contains(t, p["html"], "Order ORD-100042")
	assert.Equal(t, "builtin", e.get(t, "/templates/invite/en").object(t)["source"], "a preview stores nothing")
	r := e.do(t, http.MethodPost, "/templates/preview", e.token, map[string]any{"kind": "invite", "locale": "en",
		"template": map[string]any{"subject": "{{email}}"}})
	requireProblem(t, r, http.StatusBadRequest, "template.subject", "template.heading", "template.body", "template.buttonLabel")
	requireProblem(t, e.do(t, http.MethodPost, "/templates/preview", e.token, map[string]any{"kind": "letter", "locale": "xx"}),
		http.StatusBadRequest, "kind", "locale")
	requireProblem(t, e.do(t, http.MethodPost, "/templates/preview", e.token, map[string]any{"kind": "invite"}), http.StatusBadRequest, "locale")
	requireProblem(t, e.do(t, http.MethodPost, "/templates/preview", e.token, map[string]any{"kind": "invite", "locale": "en",
		"eventId": "evt-x", "eventTypeId": "7"}), http.StatusBadRequest, "eventId", "eventTypeId")
	requireProblem(t, e.do(t, http.MethodPost, "/templates/preview", e.token, map[string]any{"kind": "invite", "locale": "en",
		"eventId": "evt-00000000-0000-4000-8000-000000000001"}), http.StatusNotFound)

	// A stored template, with a real event's data.
	require.Equal(t, http.StatusCreated, e.do(t, http.MethodPut, "/templates/invite/en?eventTypeId="+et, e.token, shopInvite).status)
	ev := e.fullEvent("checkout")
	ev["transaction"] = map[string]any{"reference": "A-77", "date": "2026-11-20T10:00:00Z"}
	ref := e.acceptEvent(t, ev)
	p = preview(map[string]any{"kind": "invite", "locale": "en", "eventId": ref})
	assert.Equal(t, "How was your Mug, Ann?", p["subject"])
	assert.Equal(t, "eventType", p["source"])
	assert.EqualValues(t, 1, p["version"])
	assert.Contains(t, p["html"], "Order A-77")
	assert.Contains(t, p["html"], `src="https://shop.example/mug.png"`)
	assert.NotContains(t, p["html"], ref, "the links stay samples: a preview hands out no customer's link")

	// An SMS: its text and what it costs.
	p = preview(map[string]any{"kind": "sms_invite", "locale": "en", "template": map[string]any{"text": "Hi {{firstName}}! Rate {{productName}}:"}})
	assert.True(t, strings.HasPrefix(p["text"].(string), "Nordlicht Outdoor: Hi Emma! Rate Merino hiking socks:\nhttp"), p["text"])
	assert.EqualValues(t, 2, p["segments"])
	assert.Equal(t, "GSM-7", p["encoding"])
	assert.EqualValues(t, len([]rune(p["text"].(string))), p["characters"])
	assert.Equal(t, "", p["subject"])
	assert.Equal(t, "", p["html"])
}

func TestTemplateTestSendRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	send := func(body map[string]any) response {
		return e.do(t, http.MethodPost, "/templates/test-send", e.token, body)
	}
	for name, tc := range map[string]struct {
		body  map[string]any
		field string
	}{
		"no address":       {map[string]any{"kind": "invite", "locale": "en"}, "to"},
		"not an address":   {map[string]any{"kind": "invite", "locale": "en", "to": "Shop <me@shop.example>"}, "to"},
		"a number by mail": {map[string]any{"kind": "reminder", "locale": "en", "to": "+4915112345678"}, "to"},
		"a mail by SMS":    {map[string]any{"kind": "sms_invite", "locale": "en", "to": "me@shop.example"}, "to"},
		"no country":       {map[string]any{"kind": "sms_invite", "locale": "en", "to": "015112345678"}, "to"},
		"unknown kind":     {map[string]any{"kind": "letter", "locale": "en", "to": "me@shop.example"}, "kind"},
		"unknown language": {map[string]any{"kind": "invite", "locale": "pt", "to": "me@shop.example"}, "locale"},
		"bad event type":   {map[string]any{"kind": "invite", "locale": "en", "to": "me@shop.example", "eventTypeId": "checkout"}, "eventTypeId"},
	} {
		t.Run(name, func(t *testing.T) { requireProblem(t, send(tc.body), http.StatusBadRequest, tc.field) })
	}
	noSMS := newEnv(t, withoutSMS)
	r := noSMS.do(t, http.MethodPost, "/templates/test-send", noSMS.token, map[string]any{"kind": "sms_invite", "locale": "en", "to": "+4915112345678"})
	assert.Contains(t, fieldMessage(t, r, "kind"), "no SMS provider")

	r = send(map[string]any{"kind": "invite", "locale": "en", "to": "owner@shop.example"})
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	ts := r.object(t)
	assert.Equal(t, "pending", ts["status"])
	assert.Equal(t, "o***@shop.example", ts["to"], "the address is shown masked")
	assert.Equal(t, "/templates/test-sends/"+ts["id"].(string), r.header.Get("Location"))
	got := e.get(t, r.header.Get("Location"))
	require.Equal(t, http.StatusOK, got.status, "%s", got.body)
	assert.Equal(t, ts, got.object(t))
	requireProblem(t, e.get(t, "/templates/test-sends/tts-00000000-0000-4000-8000-000000000000"), http.StatusNotFound)
	requireProblem(t, e.get(t, "/templates/test-sends/nope"), http.StatusNotFound)

	// At most 20 a day; the 21st says until when.
	for i := 1; i < templatedb.TestSendsPerDay; i++ {
		require.Equal(t, http.StatusAccepted, send(map[string]any{"kind": "sms_invite", "locale": "de", "to": "+4915112345678"}).status, "test %d", i+1)
	}
	r = send(map[string]any{"kind": "invite", "locale": "en", "to": "owner@shop.example"})
	p := requireProblem(t, r, http.StatusTooManyRequests)
	assert.Contains(t, p["detail"], "at most 20 tests")
	wait, err := strconv.Atoi(r.header.Get("Retry-After"))
	require.NoError(t, err)
	assert.True(t, wait > 0 && wait <= 86400, "until the next UTC midnight: %d", wait)
}

// TestTemplateTestSendReachesOnlyWhomAnInviteMay: a test send to an
// address on the suppression list, whatever its case, is 422 naming it
// suppressed; each test counts against the daily cap of sends to its
// address (429 with Retry-After once it is used up); and the one-click
// unsubscribe of a test — the link the worker puts in its mail — puts the
// address on the account's list, by the customer.
func TestTemplateTestSendReachesOnlyWhomAnInviteMay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	send := func(to string) response {
		return e.do(t, http.MethodPost, "/templates/test-send", e.token, map[string]any{"kind": "invite", "locale": "de", "to": to})
	}
	require.Equal(t, http.StatusCreated, e.do(t, http.MethodPost, "/suppressions", e.token,
		map[string]any{"address": "gone@shop.example", "reason": "bounced"}).status)
	r := send("Gone@Shop.example")
	requireProblem(t, r, http.StatusUnprocessableEntity, "to")
	assert.True(t, strings.HasPrefix(fieldMessage(t, r, "to"), "suppressed"), fieldMessage(t, r, "to"))
	assert.Contains(t, fieldMessage(t, r, "to"), "bounced")

	_, err := e.store.Accounts.SetAccountQuotas(t.Context(), e.account, accountdb.QuotaUpdate{RecipientDailyCap: new(2)})
	require.NoError(t, err)
	first := send("owner@shop.example")
	require.Equal(t, http.StatusAccepted, first.status, "%s", first.body)
	require.Equal(t, http.StatusAccepted, send("Owner@Shop.example").status)
	r = send("owner@shop.example")
	p := requireProblem(t, r, http.StatusTooManyRequests)
	assert.Contains(t, p["detail"], "at most 2 messages a day (UTC) to one address")
	wait, err := strconv.Atoi(r.header.Get("Retry-After"))
	require.NoError(t, err)
	assert.True(t, wait > 0 && wait <= 86400, "until the next UTC midnight: %d", wait)
	require.Equal(t, http.StatusAccepted, send("team@shop.example").status, "the cap is per address")

	// The test's unsubscribe link, as the worker makes it.
	id := first.object(t)["id"].(string)
	link, err := e.unsubscribeLinks.SealedURL(id, "owner@shop.example")
	require.NoError(t, err)
	target := pathOf(t, link)
	doc := requireHTML(t, e.page(t, http.MethodGet, target, "", ""), http.StatusOK)
	forms := find(doc, "form", map[string]string{"method": "post"})
	require.Len(t, forms, 1)
	assert.Equal(t, target, attr(forms[0], "action"), "the confirm button posts the same link")
	assert.NotContains(t, text(doc), "owner@shop.example", "the address is masked")
	requireProblem(t, e.get(t, "/suppressions/owner@shop.example/history"), http.StatusNotFound)

	// Another test's ID, or no sealed address: not a link we made.
	other, err := e.unsubscribeLinks.SealedURL(store.NewID("tts"), "owner@shop.example")
	require.NoError(t, err)
	requireHTML(t, e.page(t, http.MethodPost, pathOf(t, other), formType, "List-Unsubscribe=One-Click"), http.StatusNotFound)
	requireHTML(t, e.page(t, http.MethodPost, pathOf(t, e.unsubscribeLinks.URL(id)), formType, "List-Unsubscribe=One-Click"), http.StatusNotFound)
	swapped := strings.Replace(link, "event="+id, "event="+store.NewID("tts"), 1)
	requireHTML(t, e.page(t, http.MethodPost, pathOf(t, swapped), formType, "List-Unsubscribe=One-Click"), http.StatusNotFound)

	requireHTML(t, e.page(t, http.MethodPost, target, formType, "List-Unsubscribe=One-Click"), http.StatusOK)
	history, _ := items(t, e.get(t, "/suppressions/owner@shop.example/history"))
	require.Len(t, history, 1)
	assert.Equal(t, "added", history[0]["action"])
	assert.Equal(t, "unsubscribed", history[0]["reason"])
	assert.Equal(t, "customer", history[0]["by"])
	requireProblem(t, send("owner@shop.example"), http.StatusUnprocessableEntity, "to")
}

// TestTestSendsAnswerOtherMethods: /templates/test-sends/{id} answers
// only GET; another method is 405 with Allow, not the template route
// whose pattern the path also matches.
func TestTestSendsAnswerOtherMethods(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	path := "/templates/test-sends/" + store.NewID("tts")
	for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodPost} {
		r := e.do(t, method, path, e.token, shopInvite)
		requireProblem(t, r, http.StatusMethodNotAllowed)
		assert.Equal(t, "GET", r.header.Get("Allow"), method)
	}
	requireProblem(t, e.do(t, http.MethodPut, "/templates/test-send", e.token, shopInvite), http.StatusMethodNotAllowed)
}
