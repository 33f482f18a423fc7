package console

import (
	"context"
	"errors"
	htmltemplate "html/template"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/touchpoint/touchpoint/console/view"
	"github.com/touchpoint/touchpoint/contact"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/templates"
)

// templatePages are the pages of the shop's templates: the index, the editor, its preview and test send.
type templatePages struct{ *Handler }

// The shop's templates: what a customer reads in an invite or a reminder,
// per kind, language and event type. What a template may hold, which one
// applies and how it renders are package templates' rules; the editor
// shows the placeholders, a live preview of the real layout at 360 and
// 1280 px, the version history, and sends a test to the person's own
// address.

// templateLevel reads the page's kind, language and event type
// (?eventTypeId=, or the form's eventTypeId); ok is false when the path
// names no template.
func templateLevel(r *http.Request, p Person) (templatedb.TemplateKey, bool) {
	kind, ok := templates.ParseKind(r.PathValue("kind"))
	if !ok || !templates.ValidLanguage(r.PathValue("locale")) {
		return templatedb.TemplateKey{}, false
	}
	et := r.URL.Query().Get("eventTypeId")
	if r.Method == http.MethodPost {
		et = r.PostForm.Get("eventTypeId")
	}
	if et != "" && !store.ValidID("ety", et) {
		return templatedb.TemplateKey{}, false
	}
	return templatedb.TemplateKey{AccountID: p.AccountID, EventTypeID: et, Kind: string(kind), Locale: r.PathValue("locale")}, true
}

type templatesView struct {
	EventTypes  []accountdb.EventType
	EventTypeID string
	Kinds       []templates.Kind
	Languages   []string
	// Stored says which (kind, language) have a template of the shop at
	// the chosen level: "invite/de" → its version.
	Stored map[string]int
}

func (h templatePages) templatesIndex(w http.ResponseWriter, r *http.Request, p Person) {
	ets, _, err := h.opts.Accounts.ListEventTypes(r.Context(), p.AccountID, accountdb.EventTypeFilter{}, store.Page{Limit: 100})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v := templatesView{EventTypes: ets, EventTypeID: r.URL.Query().Get("eventTypeId"), Kinds: templates.Kinds,
		Languages: templates.Languages, Stored: map[string]int{}}
	f := templatedb.TemplateFilter{AccountOnly: true}
	if v.EventTypeID != "" {
		if !store.ValidID("ety", v.EventTypeID) {
			h.notFound(w, r)
			return
		}
		f = templatedb.TemplateFilter{EventTypeID: v.EventTypeID}
	}
	ts, _, err := h.opts.TemplateStore.ListTemplates(r.Context(), p.AccountID, f, store.Page{Limit: 100})
	if err != nil {
		h.fail(w, r, notFound(err))
		return
	}
	for _, t := range ts {
		v.Stored[t.Kind+"/"+t.Locale] = t.Version
	}
	h.render(w, r, http.StatusOK, "templates", "templates_title", "templates", v)
}

type templateView struct {
	Key           templatedb.TemplateKey
	EventTypeName string
	SMS           bool
	Source        templates.Source // where the template in force comes from
	Version       int
	Content       templates.Content // as the form shows it
	Errors        fieldErrors
	Placeholders  []string
	PreviewURL    string
	Versions      []versionRow
	// Own: the level of the page has a template of the shop's, which
	// may be deleted (the next level applies again).
	Own              bool
	CanEdit, CanTest bool
	TestTo           string // the person's address, masked
	TestError        string
	Drafted          bool // the form shows a draft, not what is stored
}

// versionRow is a stored version, its content and who stored it.
type versionRow struct {
	templatedb.TemplateVersion
	Content templates.Content
	By      string
}

// pageTemplate is loadTemplate at the level the page's path names; a path
// that names none is answered not found.
func (h templatePages) pageTemplate(w http.ResponseWriter, r *http.Request, p Person) (templatedb.TemplateKey, templateView, bool) {
	key, ok := templateLevel(r, p)
	if !ok {
		h.notFound(w, r)
		return key, templateView{}, false
	}
	v, ok := h.loadTemplate(w, r, p, key)
	return key, v, ok
}

// loadTemplate reads the template in force at the key's level, its
// versions and what the editor needs around it.
func (h templatePages) loadTemplate(w http.ResponseWriter, r *http.Request, p Person, key templatedb.TemplateKey) (templateView, bool) {
	ctx := r.Context()
	kind := templates.Kind(key.Kind)
	v := templateView{Key: key, SMS: kind.SMS(), Placeholders: templates.Placeholders,
		CanEdit: h.opts.Allows(p.Role, EditTemplates), CanTest: h.opts.Allows(p.Role, SendTest) && !kind.SMS(),
		TestTo: contact.Mask(p.Email)}
	if key.EventTypeID != "" {
		et, err := h.opts.Accounts.EventType(ctx, p.AccountID, key.EventTypeID)
		if err != nil {
			h.fail(w, r, notFound(err))
			return v, false
		}
		v.EventTypeName = et.Name
	}
	etLevel, accLevel, err := h.opts.TemplateStore.TemplateLevels(ctx, p.AccountID, key.EventTypeID, key.Kind, key.Locale)
	if err != nil {
		h.fail(w, r, notFound(err))
		return v, false
	}
	chosen, err := templates.Choose(templates.Stored(etLevel), templates.Stored(accLevel))
	if err != nil {
		h.fail(w, r, err)
		return v, false
	}
	v.Source, v.Version = chosen.Source, chosen.Version
	v.Own = (key.EventTypeID != "" && etLevel.Version != 0) || (key.EventTypeID == "" && accLevel.Version != 0)
	if chosen.Content != nil {
		v.Content = *chosen.Content
	} else if v.Content, err = h.opts.Templates.Builtin(kind, key.Locale); err != nil {
		h.fail(w, r, err)
		return v, false
	}
	versions, err := h.opts.TemplateStore.TemplateVersions(ctx, key, 20)
	if err != nil {
		h.fail(w, r, err)
		return v, false
	}
	actors := make([]string, len(versions))
	for i, x := range versions {
		actors[i] = x.CreatedBy
	}
	names := h.actorNames(r, p, actors)
	for _, x := range versions {
		c, err := templates.DecodeContent(x.Content)
		if err != nil {
			h.fail(w, r, err)
			return v, false
		}
		v.Versions = append(v.Versions, versionRow{TemplateVersion: x, Content: c, By: names[x.CreatedBy]})
	}
	v.PreviewURL = previewURL(key, nil)
	return v, true
}

// previewURL is the address of the preview frame: of the template in
// force, or of a draft.
func previewURL(key templatedb.TemplateKey, draft *templates.Content) string {
	q := url.Values{}
	if key.EventTypeID != "" {
		q.Set("eventTypeId", key.EventTypeID)
	}
	if draft != nil {
		q.Set("draft", "1")
		for name, val := range contentFields(*draft) {
			q.Set(name, val)
		}
	}
	u := strings.TrimSuffix(Prefix, "/") + "/templates/" + key.Kind + "/" + key.Locale + "/preview"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// contentFields are a template's fields by their form names.
func contentFields(c templates.Content) map[string]string {
	return map[string]string{"subject": c.Subject, "preheader": c.Preheader, "heading": c.Heading, "body": c.Body,
		"buttonLabel": c.ButtonLabel, "text": c.Text}
}

// contentOf reads a template's fields from a form or a query.
func contentOf(v url.Values) templates.Content {
	return templates.Content{Subject: v.Get("subject"), Preheader: v.Get("preheader"), Heading: v.Get("heading"),
		Body: v.Get("body"), ButtonLabel: v.Get("buttonLabel"), Text: v.Get("text")}
}

func (h templatePages) templateEditor(w http.ResponseWriter, r *http.Request, p Person) {
	_, v, ok := h.pageTemplate(w, r, p)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, "template", "template_title", "templates", v)
}

// sample is the sample data a preview, a test and an SMS's length check
// render with: the account's branding, the event type's name, sample
// links that look real and lead nowhere.
func (h templatePages) sample(ctx context.Context, p Person, lang, eventTypeName string) (templates.Input, error) {
	acc, err := h.opts.Accounts.Account(ctx, p.AccountID)
	if err != nil {
		return templates.Input{}, err
	}
	return templates.AccountSample(lang, eventTypeName, acc.Brand(), h.opts.SampleFeedbackURL, h.opts.SampleUnsubscribeURL), nil
}

// saveTemplate stores the form's template at the page's level as a new
// version — or, with the form's "preview" button, shows the draft in the
// preview without storing it.
func (h templatePages) saveTemplate(w http.ResponseWriter, r *http.Request, p Person) {
	key, v, ok := h.pageTemplate(w, r, p)
	if !ok {
		return
	}
	v.Content, v.Drafted = contentOf(r.PostForm), true
	v.PreviewURL = previewURL(key, &v.Content)
	sample, err := h.sample(r.Context(), p, key.Locale, v.EventTypeName)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	c, err := h.opts.Templates.Check(templates.Kind(key.Kind), key.Locale, v.Content, sample)
	var errs templates.Errors
	var tooLong *templates.TooLongError
	t := h.translator(r)
	switch {
	case errors.As(err, &errs):
		for _, e := range errs {
			v.Errors.add(e.Field, t("error_template", "problem", e.Message))
		}
	case errors.As(err, &tooLong):
		v.Errors.add("text", t("error_sms_too_long", "segments", tooLong.Segments))
	case err != nil:
		h.fail(w, r, err)
		return
	}
	if len(v.Errors) > 0 {
		h.render(w, r, http.StatusBadRequest, "template", "template_title", "templates", v)
		return
	}
	if r.PostForm.Get("action") == "preview" {
		v.Content = c
		v.PreviewURL = previewURL(key, &c)
		h.render(w, r, http.StatusOK, "template", "template_title", "templates", v)
		return
	}
	content, err := templates.EncodeContent(c)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if _, _, err := h.opts.TemplateStore.PutTemplate(r.Context(), key, content, p.ID); err != nil {
		h.fail(w, r, notFound(err))
		return
	}
	h.seeOther(w, r, templatePath(key), "template_saved")
}

// templatePath is the editor's path of a key, below the console.
func templatePath(key templatedb.TemplateKey) string {
	path := "/templates/" + key.Kind + "/" + key.Locale
	if key.EventTypeID != "" {
		path += "?eventTypeId=" + key.EventTypeID
	}
	return path
}

// deleteTemplate removes the shop's template at the page's level: the
// next level applies again. Its versions stay on record.
func (h templatePages) deleteTemplate(w http.ResponseWriter, r *http.Request, p Person) {
	key, ok := templateLevel(r, p)
	if !ok {
		h.notFound(w, r)
		return
	}
	if err := h.opts.TemplateStore.DeleteTemplate(r.Context(), key); err != nil && !errors.Is(err, store.ErrNotFound) {
		h.fail(w, r, err)
		return
	}
	h.seeOther(w, r, templatePath(key), "template_deleted")
}

// Headers of the preview frame: the message's own HTML with its inline
// styles, shown only inside the console's own pages, in a sandbox.
const previewCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; frame-ancestors 'self'; base-uri 'none'; " +
	"form-action 'none'; sandbox allow-popups"

// previewTemplate renders the template in force — or the draft in the
// query — as a customer would receive it, with sample data: the mail's
// HTML, or an SMS's text.
func (h templatePages) previewTemplate(w http.ResponseWriter, r *http.Request, p Person) {
	key, ok := templateLevel(r, p)
	if !ok {
		h.notFound(w, r)
		return
	}
	q := r.URL.Query()
	kind := templates.Kind(key.Kind)
	name := ""
	if key.EventTypeID != "" {
		et, err := h.opts.Accounts.EventType(r.Context(), p.AccountID, key.EventTypeID)
		if err != nil {
			h.fail(w, r, notFound(err))
			return
		}
		name = et.Name
	}
	sample, err := h.sample(r.Context(), p, key.Locale, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var content *templates.Content
	if q.Get("draft") != "" {
		// A draft that does not pass shows as the built-in template would:
		// the form beside it names what is wrong.
		if c, err := h.opts.Templates.Check(kind, key.Locale, contentOf(q), sample); err == nil {
			content = &c
		}
	} else {
		etLevel, accLevel, err := h.opts.TemplateStore.TemplateLevels(r.Context(), p.AccountID, key.EventTypeID, key.Kind, key.Locale)
		if err != nil {
			h.fail(w, r, notFound(err))
			return
		}
		chosen, err := templates.Choose(templates.Stored(etLevel), templates.Stored(accLevel))
		if err != nil {
			h.fail(w, r, err)
			return
		}
		content = chosen.Content
	}
	m, err := h.opts.Templates.Render(kind, key.Locale, content, sample)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	body := m.HTML
	if kind.SMS() {
		var b strings.Builder
		if err := smsPreview.Execute(&b, m); err != nil {
			h.fail(w, r, err)
			return
		}
		body = b.String()
	}
	hd := w.Header()
	hd.Set("Content-Type", view.ContentTypeHTML)
	hd.Set(view.HeaderCSP, previewCSP)
	hd.Set(view.HeaderNoSniff, "nosniff")
	hd.Set(view.HeaderCacheControl, view.NoStore)
	hd.Set(view.HeaderReferrerPolicy, "no-referrer")
	_, _ = io.WriteString(w, body)
}

// smsPreview shows a text message as a phone would, with what it costs.
var smsPreview = htmltemplate.Must(htmltemplate.New("sms").Parse(`<!DOCTYPE html>
<html lang="{{.Locale}}"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>SMS</title>
<body style="margin:0;padding:24px 16px;background:#f2f2f7;font-family:system-ui,sans-serif">
<p style="max-width:80%;margin:0;padding:10px 14px;border-radius:18px;background:#e5e5ea;color:#111;white-space:pre-wrap;overflow-wrap:anywhere">{{.Text}}</p>
<p style="color:#555;font-size:13px">{{.Segments}} × {{.Encoding}}</p>
</body></html>`))

// testSend sends the template in force at the page's level to the
// person's own address, with sample data: a test goes nowhere else.
func (h templatePages) testSend(w http.ResponseWriter, r *http.Request, p Person) {
	key, ok := templateLevel(r, p)
	kind := templates.Kind(key.Kind)
	if !ok || kind.SMS() {
		h.notFound(w, r)
		return
	}
	_, err := h.opts.TemplateStore.CreateTestSend(r.Context(), templatedb.TestSend{AccountID: p.AccountID, EventTypeID: key.EventTypeID,
		Kind: key.Kind, Locale: key.Locale, Address: p.Email, MaskedAddress: contact.Mask(p.Email), CreatedBy: p.ID}, kind.Medium())
	var sup *suppressiondb.SuppressedError
	var quota *accountdb.QuotaError
	t := h.translator(r)
	var refused string
	switch {
	case errors.As(err, &sup):
		refused = t("error_test_suppressed")
	case errors.As(err, &quota):
		refused = t("error_test_quota")
	case err != nil:
		h.fail(w, r, notFound(err))
		return
	}
	if refused != "" {
		v, ok := h.loadTemplate(w, r, p, key)
		if !ok {
			return
		}
		v.TestError = refused
		h.render(w, r, http.StatusUnprocessableEntity, "template", "template_title", "templates", v)
		return
	}
	h.seeOther(w, r, templatePath(key), "test_sent")
}
