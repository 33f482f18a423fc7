// Package templateapi serves the API's routes of a shop's own templates
// (/templates/…): the list, the effective template of a kind and language
// at each level (event type, account, built-in), its writing and removal,
// a preview rendered as a customer would receive it, and test sends to
// the shop's own address. Package templates checks and renders them; these
// handlers read the request, ask the store and answer. The API mounts them
// on the routes of its route table, behind its authentication and access
// groups, and answers their errors (apiwire.API).
package templateapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"strings"

	"github.com/gorilla/mux"

	"github.com/touchpoint/touchpoint/contact"
	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/templates"
)

// Store is what the handlers read and write of the templates and the
// test sends.
type Store interface {
	TemplateLevels(ctx context.Context, accountID, eventTypeID, kind, lang string) (eventType, account templatedb.Level, err error)
	GetTemplate(ctx context.Context, key templatedb.TemplateKey) (templatedb.Template, error)
	PutTemplate(ctx context.Context, key templatedb.TemplateKey, content []byte, by string) (t templatedb.Template, created bool, err error)
	DeleteTemplate(ctx context.Context, key templatedb.TemplateKey) error
	ListTemplates(ctx context.Context, accountID string, f templatedb.TemplateFilter, p pg.Page) ([]templatedb.Template, *pg.Cursor, error)
	LoadEventTemplate(ctx context.Context, eventID, kind, lang string) (templatedb.EventTemplate, error)
	CreateTestSend(ctx context.Context, t templatedb.TestSend, medium invite.Medium) (templatedb.TestSend, error)
	GetTestSend(ctx context.Context, accountID, id string) (templatedb.TestSend, error)
}

// InviteStore is what a preview with an event's data reads of its invite.
type InviteStore interface {
	LoadInviteContent(ctx context.Context, eventID string) (invitedb.InviteContent, error)
}

// AccountStore is what the sample data reads of the account: its
// branding, and the name of an event type.
type AccountStore interface {
	Account(ctx context.Context, id string) (accountdb.Account, error)
	EventType(ctx context.Context, accountID, id string) (accountdb.EventType, error)
}

// Options are the handlers' dependencies, all required.
type Options struct {
	API       apiwire.API
	Templates Store
	Invites   InviteStore
	Accounts  AccountStore
	// Library checks and renders the templates.
	Library *templates.Library
	// FeedbackLinks and UnsubscribeLinks sign the sample links of a
	// preview or a test.
	FeedbackLinks, UnsubscribeLinks interface{ URL(eventID string) string }
	// SMS reports whether an SMS provider is configured: without one no
	// text message is sent, a test neither.
	SMS bool
}

// Handler serves the routes of the templates. Its methods are the
// handlers of the routes the API mounts.
type Handler struct{ o Options }

// New builds the handlers. It panics without a dependency, which is a
// wiring mistake.
func New(o Options) *Handler {
	if o.API == nil || o.Templates == nil || o.Invites == nil || o.Accounts == nil || o.Library == nil ||
		o.FeedbackLinks == nil || o.UnsubscribeLinks == nil {
		panic("templateapi.New: API, Templates, Invites, Accounts, Library and the link makers are required")
	}
	return &Handler{o: o}
}

// templateJSON is a template as GET, PUT and the list answer it: the
// email fields or the SMS text, and where it comes from.
type templateJSON struct {
	Kind        templates.Kind     `json:"kind"`
	Locale      string             `json:"locale"`
	EventTypeID *string            `json:"eventTypeId"`
	Source      templates.Source   `json:"source"`
	Version     *int               `json:"version"`
	CreatedAt   *apiwire.Timestamp `json:"createdAt"`
	UpdatedAt   *apiwire.Timestamp `json:"updatedAt"`
	Subject     *string            `json:"subject,omitempty"`
	Preheader   *string            `json:"preheader,omitempty"`
	Heading     *string            `json:"heading,omitempty"`
	Body        *string            `json:"body,omitempty"`
	ButtonLabel *string            `json:"buttonLabel,omitempty"`
	Text        *string            `json:"text,omitempty"`
}

// withContent sets the kind's fields from c: every email field (an empty
// preheader as "") or the text.
func (t templateJSON) withContent(c templates.Content) templateJSON {
	if t.Kind.SMS() {
		t.Text = &c.Text
		return t
	}
	t.Subject, t.Preheader, t.Heading, t.Body, t.ButtonLabel = &c.Subject, &c.Preheader, &c.Heading, &c.Body, &c.ButtonLabel
	return t
}

func storedTemplateOut(t templatedb.Template) (templateJSON, error) {
	c, err := templates.DecodeContent(t.Content)
	if err != nil {
		return templateJSON{}, fmt.Errorf("template %s: %w", t.ID, err)
	}
	out := templateJSON{Kind: templates.Kind(t.Kind), Locale: t.Locale, Source: templates.SourceAccount, Version: &t.Version,
		CreatedAt: new(apiwire.Timestamp(t.CreatedAt)), UpdatedAt: new(apiwire.Timestamp(t.UpdatedAt))}
	if t.EventTypeID != "" {
		out.EventTypeID, out.Source = &t.EventTypeID, templates.SourceEventType
	}
	return out.withContent(c), nil
}

// writeStoredTemplate answers t with status.
func (h *Handler) writeStoredTemplate(w http.ResponseWriter, r *http.Request, status int, t templatedb.Template) {
	out, err := storedTemplateOut(t)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, status, out)
}

// templateIn is the body of PUT /templates/{kind}/{locale}: the email
// fields, or text for an SMS (templates.Validate says which apply).
type templateIn struct {
	Subject     string              `json:"subject"`
	Preheader   string              `json:"preheader"`
	Heading     string              `json:"heading"`
	Body        string              `json:"body"`
	ButtonLabel string              `json:"buttonLabel"`
	Text        string              `json:"text"`
	Kind        jsonstrict.ReadOnly `json:"kind"`
	Locale      jsonstrict.ReadOnly `json:"locale"`
	EventTypeID jsonstrict.ReadOnly `json:"eventTypeId"`
	Source      jsonstrict.ReadOnly `json:"source"`
	Version     jsonstrict.ReadOnly `json:"version"`
	CreatedAt   jsonstrict.ReadOnly `json:"createdAt"`
	UpdatedAt   jsonstrict.ReadOnly `json:"updatedAt"`
}

func (in templateIn) content() templates.Content {
	return templates.Content{Subject: in.Subject, Preheader: in.Preheader, Heading: in.Heading, Body: in.Body,
		ButtonLabel: in.ButtonLabel, Text: in.Text}
}

// templateKey reads {kind}, {locale} and ?eventTypeId= of a template's
// path. An unknown kind or language, or a malformed event type id, is
// 404 like any path that names nothing.
func (h *Handler) templateKey(r *http.Request) (templatedb.TemplateKey, error) {
	v := mux.Vars(r)
	kind, ok := templates.ParseKind(v["kind"])
	if !ok {
		return templatedb.TemplateKey{}, apiwire.Errorf(http.StatusNotFound, "no template kind %q; the kinds are %s", v["kind"], kindList())
	}
	if !templates.ValidLanguage(v["locale"]) {
		return templatedb.TemplateKey{}, apiwire.Errorf(http.StatusNotFound, "no template language %q; the languages are %s",
			v["locale"], strings.Join(templates.Languages, ", "))
	}
	q := apiquery.Parse(r, "eventTypeId")
	for _, name := range []string{"limit", "cursor"} { // known to lists only
		if q.Has(name) {
			q.Fail(name, apiquery.UnknownParameter(name, []string{"eventTypeId"}))
		}
	}
	if err := q.Err(); err != nil {
		return templatedb.TemplateKey{}, err
	}
	et := q.Get("eventTypeId")
	if et != "" && !pg.ValidID("ety", et) {
		return templatedb.TemplateKey{}, apiwire.Errorf(http.StatusNotFound, "event type not found")
	}
	return templatedb.TemplateKey{AccountID: h.o.API.AccountID(r), EventTypeID: et, Kind: string(kind), Locale: v["locale"]}, nil
}

func kindList() string {
	names := make([]string, len(templates.Kinds))
	for i, k := range templates.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Get answers the effective template: the event type's (with
// ?eventTypeId=), else the account's, else the built-in one.
func (h *Handler) Get(w http.ResponseWriter, r *http.Request) {
	key, err := h.templateKey(r)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	et, acc, err := h.o.Templates.TemplateLevels(r.Context(), key.AccountID, key.EventTypeID, key.Kind, key.Locale)
	if err != nil {
		h.o.API.Fail(w, r, apiwire.About("event type", "", err))
		return
	}
	chosen, err := templates.Choose(templates.Stored(et), templates.Stored(acc))
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	var t templatedb.Template
	switch chosen.Source {
	case templates.SourceEventType:
		t, err = h.o.Templates.GetTemplate(r.Context(), key)
	case templates.SourceAccount:
		key.EventTypeID = ""
		t, err = h.o.Templates.GetTemplate(r.Context(), key)
	default:
		kind := templates.Kind(key.Kind)
		c, err := h.o.Library.Builtin(kind, key.Locale)
		if err != nil {
			h.o.API.Fail(w, r, err)
			return
		}
		apiwire.WriteJSON(w, http.StatusOK, templateJSON{Kind: kind, Locale: key.Locale, Source: templates.SourceBuiltin}.withContent(c))
		return
	}
	if err != nil { // deleted between the two reads
		h.o.API.Fail(w, r, err)
		return
	}
	h.writeStoredTemplate(w, r, http.StatusOK, t)
}

// Put stores a template at the level of the path: 201 when the
// level had none, else 200, with the new version.
func (h *Handler) Put(w http.ResponseWriter, r *http.Request) {
	key, err := h.templateKey(r)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	var in templateIn
	if err := h.o.API.DecodeJSON(w, r, &in); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	c, err := h.checkTemplate(r, templates.Kind(key.Kind), key.Locale, key.EventTypeID, in.content(), "")
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	content, err := templates.EncodeContent(c)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	t, created, err := h.o.Templates.PutTemplate(r.Context(), key, content, h.o.API.ClientID(r))
	if err != nil {
		h.o.API.Fail(w, r, apiwire.About("event type", "", err))
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	h.writeStoredTemplate(w, r, status, t)
}

// checkTemplate checks a template of the kind as the templates' rules
// demand (templates.Library.Check, with the account's sample data),
// naming its fields with prefix in errors.
func (h *Handler) checkTemplate(r *http.Request, kind templates.Kind, lang, eventTypeID string, in templates.Content, prefix string) (templates.Content, error) {
	var sample templates.Input
	if kind.SMS() {
		var err error
		if sample, err = h.sample(r, lang, eventTypeID); err != nil {
			return in, err
		}
	}
	c, err := h.o.Library.Check(kind, lang, in, sample)
	var errs templates.Errors
	var tooLong *templates.TooLongError
	switch {
	case errors.As(err, &errs):
		fields := make(apiwire.Invalid, len(errs))
		for i, e := range errs {
			fields[i] = apiwire.FieldError{Field: prefix + e.Field, Message: e.Message}
		}
		return c, fields
	case errors.As(err, &tooLong):
		return c, apiwire.Invalid{{Field: prefix + "text", Message: tooLong.Error()}}
	}
	return c, err
}

// sample is the sample data of a preview, a test send or an SMS length
// check: the account's branding, the event type's name, sample links.
func (h *Handler) sample(r *http.Request, lang, eventTypeID string) (templates.Input, error) {
	acc, err := h.o.Accounts.Account(r.Context(), h.o.API.AccountID(r))
	if err != nil {
		return templates.Input{}, err
	}
	name := ""
	if eventTypeID != "" {
		et, err := h.o.Accounts.EventType(r.Context(), h.o.API.AccountID(r), eventTypeID)
		if err != nil {
			return templates.Input{}, apiwire.About("event type", "", err)
		}
		name = et.Name
	}
	return templates.AccountSample(lang, name, acc.Brand(), h.o.FeedbackLinks.URL(templates.SampleEventID),
		h.o.UnsubscribeLinks.URL(templates.SampleEventID)), nil
}

// Delete removes the template of the path's level: 204, after
// which the next level applies.
func (h *Handler) Delete(w http.ResponseWriter, r *http.Request) {
	key, err := h.templateKey(r)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	if err := h.o.Templates.DeleteTemplate(r.Context(), key); err != nil {
		h.o.API.Fail(w, r, apiwire.About("template", "", err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// List lists the account's own templates (never the built-in
// ones), newest first.
func (h *Handler) List(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "kind", "locale", "eventTypeId", "level")
	f := templatedb.TemplateFilter{Kind: q.Get("kind"), Locale: q.Get("locale"), EventTypeID: q.ID("eventTypeId", "ety")}
	if msg := apiwire.OneOf(templates.Kind(f.Kind), templates.Kinds...); f.Kind != "" && msg != "" {
		q.Fail("kind", msg)
	}
	if msg := apiwire.OneOf(f.Locale, templates.Languages...); f.Locale != "" && msg != "" {
		q.Fail("locale", msg)
	}
	switch level := templates.Source(q.Get("level")); level {
	case "":
	case templates.SourceAccount:
		f.AccountOnly = true
	case templates.SourceEventType:
		f.EventTypesOnly = true
	default:
		q.Fail("level", apiwire.OneOf(level, templates.SourceAccount, templates.SourceEventType))
	}
	p := q.Page("tpl")
	if err := q.Err(); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	ts, next, err := h.o.Templates.ListTemplates(r.Context(), h.o.API.AccountID(r), f, p)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	out := make([]templateJSON, len(ts))
	for i, t := range ts {
		if out[i], err = storedTemplateOut(t); err != nil {
			h.o.API.Fail(w, r, err)
			return
		}
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(out, next, func(t templateJSON) templateJSON { return t }))
}

// previewIn is POST /templates/preview.
type previewIn struct {
	Kind        string      `json:"kind" required:"true"`
	Locale      string      `json:"locale" required:"true"`
	EventTypeID string      `json:"eventTypeId"`
	EventID     string      `json:"eventId"`
	Template    *templateIn `json:"template"`
}

// previewJSON is a rendered message: an email's subject, text and HTML,
// or an SMS's text with what it costs; and the template it came from.
type previewJSON struct {
	Subject    string           `json:"subject"`
	Text       string           `json:"text"`
	HTML       string           `json:"html"`
	Segments   *int             `json:"segments,omitempty"`
	Encoding   string           `json:"encoding,omitempty"`
	Characters *int             `json:"characters,omitempty"`
	Source     templates.Source `json:"source"`
	Version    *int             `json:"version"`
}

// sourceRequest is the source of a preview of the template in its request.
const sourceRequest templates.Source = "request"

// Preview renders a template as a customer would receive it: the
// template given, or the effective one; with sample data, or with the
// data of one of the account's events (its links stay samples, so a
// preview never hands out a customer's working link).
func (h *Handler) Preview(w http.ResponseWriter, r *http.Request) {
	var in previewIn
	if err := h.o.API.DecodeJSON(w, r, &in); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	kind, lang, err := kindAndLanguage(in.Kind, in.Locale)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	var errs apiwire.Invalid
	if in.EventTypeID != "" && !pg.ValidID("ety", in.EventTypeID) {
		errs.Check("eventTypeId", "must be an id of the form ety-<uuid>")
	}
	if in.EventID != "" && !pg.ValidID("evt", in.EventID) {
		errs.Check("eventId", "must be an id of the form evt-<uuid>")
	}
	if err := errs.Err(); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	data, eventChosen, err := h.previewData(r, kind, lang, in.EventTypeID, in.EventID)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	var chosen templates.Chosen
	switch {
	case in.Template != nil:
		c, err := h.checkTemplate(r, kind, lang, in.EventTypeID, in.Template.content(), "template.")
		if err != nil {
			h.o.API.Fail(w, r, err)
			return
		}
		chosen = templates.Chosen{Source: sourceRequest, Content: &c}
	case in.EventID != "" && in.EventTypeID == "":
		chosen = eventChosen // what the event's invite would be rendered from
	default:
		et, acc, err := h.o.Templates.TemplateLevels(r.Context(), h.o.API.AccountID(r), in.EventTypeID, string(kind), lang)
		if err != nil {
			h.o.API.Fail(w, r, apiwire.About("event type", "", err))
			return
		}
		if chosen, err = templates.Choose(templates.Stored(et), templates.Stored(acc)); err != nil {
			h.o.API.Fail(w, r, err)
			return
		}
	}
	m, err := h.o.Library.Render(kind, lang, chosen.Content, data)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	if m.Builtin {
		chosen = templates.Chosen{Source: templates.SourceBuiltin}
	}
	out := previewJSON{Subject: m.Subject, Text: m.Text, HTML: m.HTML, Source: chosen.Source}
	if chosen.Version > 0 {
		out.Version = &chosen.Version
	}
	if kind.SMS() {
		out.Segments, out.Encoding, out.Characters = &m.Segments, m.Encoding, new(len([]rune(m.Text)))
	}
	apiwire.WriteJSON(w, http.StatusOK, out)
}

// kindAndLanguage reads a kind and a language of a request body.
func kindAndLanguage(kind, lang string) (templates.Kind, string, error) {
	var errs apiwire.Invalid
	k, ok := templates.ParseKind(kind)
	if !ok {
		errs.Check("kind", apiwire.OneOf(templates.Kind(kind), templates.Kinds...))
	}
	errs.Check("locale", apiwire.OneOf(lang, templates.Languages...))
	return k, lang, errs.Err()
}

// previewData is the data a preview renders: sample data, or the data of
// the account's event eventID (another account's is 404), then also the
// template in force for that event.
func (h *Handler) previewData(r *http.Request, kind templates.Kind, lang, eventTypeID, eventID string) (templates.Input, templates.Chosen, error) {
	in, err := h.sample(r, lang, eventTypeID)
	if err != nil || eventID == "" {
		return in, templates.Chosen{}, err
	}
	c, err := h.o.Invites.LoadInviteContent(r.Context(), eventID)
	if err == nil && c.AccountID != h.o.API.AccountID(r) {
		err = pg.ErrNotFound
	}
	if err != nil {
		return templates.Input{}, templates.Chosen{}, apiwire.About("event", "", err)
	}
	et, err := h.o.Templates.LoadEventTemplate(r.Context(), eventID, string(kind), lang)
	if err != nil {
		return templates.Input{}, templates.Chosen{}, apiwire.About("event", "", err)
	}
	chosen, err := templates.Choose(templates.Stored(et.ForEventType), templates.Stored(et.ForAccount))
	if err != nil {
		return templates.Input{}, templates.Chosen{}, fmt.Errorf("event %s: %w", eventID, err)
	}
	in.FirstName, in.OrderReference, in.EventType, in.Products = c.FirstName, et.OrderReference, et.EventType, nil
	for _, p := range c.Products {
		in.Products = append(in.Products, templates.Product{Name: p.Name, ImageURL: p.ImageURL, URL: p.URL})
	}
	return in, chosen, nil
}

// testSendIn is POST /templates/test-send.
type testSendIn struct {
	Kind        string `json:"kind" required:"true"`
	Locale      string `json:"locale" required:"true"`
	To          string `json:"to" required:"true"`
	EventTypeID string `json:"eventTypeId"`
}

// testSendJSON is a test send as the API shows it.
type testSendJSON struct {
	ID          string             `json:"id"`
	Kind        templates.Kind     `json:"kind"`
	Locale      string             `json:"locale"`
	EventTypeID *string            `json:"eventTypeId"`
	To          string             `json:"to"` // masked
	Status      string             `json:"status"`
	Source      templates.Source   `json:"source,omitempty"`
	Version     *int               `json:"version"`
	Error       *string            `json:"error"`
	CreatedAt   apiwire.Timestamp  `json:"createdAt"`
	FinishedAt  *apiwire.Timestamp `json:"finishedAt"`
}

func testSendOut(t templatedb.TestSend) testSendJSON {
	out := testSendJSON{ID: t.ID, Kind: templates.Kind(t.Kind), Locale: t.Locale, To: t.MaskedAddress, Status: t.Status,
		Source: templates.Source(t.TemplateSource), CreatedAt: apiwire.Timestamp(t.CreatedAt)}
	if t.EventTypeID != "" {
		out.EventTypeID = &t.EventTypeID
	}
	if t.TemplateVersion > 0 {
		out.Version = &t.TemplateVersion
	}
	if t.Error != "" {
		out.Error = &t.Error
	}
	if t.FinishedAt != nil {
		out.FinishedAt = new(apiwire.Timestamp(*t.FinishedAt))
	}
	return out
}

// TestSend orders one test of the effective template, sent to the shop's
// own address (or number, for an SMS kind) with sample data: 202 with the
// test send, pending until the worker has sent it (GET
// /templates/test-sends/{id}). An address on the account's suppression
// list is refused (422); each test counts against the day's test sends,
// the daily cap of sends to its address and the account's daily send
// quota (429 when used up).
func (h *Handler) TestSend(w http.ResponseWriter, r *http.Request) {
	var in testSendIn
	if err := h.o.API.DecodeJSON(w, r, &in); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	kind, lang, err := kindAndLanguage(in.Kind, in.Locale)
	var errs apiwire.Invalid
	errors.As(err, &errs)
	to, masked, msg := testAddress(kind, in.To)
	if kind != "" {
		errs.Check("to", msg)
	}
	if in.EventTypeID != "" && !pg.ValidID("ety", in.EventTypeID) {
		errs.Check("eventTypeId", "must be an id of the form ety-<uuid>")
	}
	if kind.SMS() && !h.o.SMS && len(errs) == 0 {
		errs.Check("kind", "no SMS provider is configured, so no text message can be sent")
	}
	if err := errs.Err(); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	t, err := h.o.Templates.CreateTestSend(r.Context(), templatedb.TestSend{AccountID: h.o.API.AccountID(r), EventTypeID: in.EventTypeID,
		Kind: string(kind), Locale: lang, Address: to, MaskedAddress: masked, CreatedBy: h.o.API.ClientID(r)}, kind.Medium())
	if sup := (*suppressiondb.SuppressedError)(nil); errors.As(err, &sup) {
		err = &apiwire.Unprocessable{Field: "to", Message: fmt.Sprintf("suppressed: the address is on this account's suppression list (%s), "+
			"so no test is sent to it", sup.Reason)}
	}
	if err != nil {
		h.o.API.Fail(w, r, apiwire.About("event type", "", err))
		return
	}
	w.Header().Set("Location", "/templates/test-sends/"+t.ID)
	apiwire.WriteJSON(w, http.StatusAccepted, testSendOut(t))
}

// testAddress checks the address of a test send: an email address for an
// email kind, a mobile number in E.164 for an SMS kind. It returns the
// address to send to, its masked form, and what is wrong ("" if nothing).
func testAddress(kind templates.Kind, raw string) (to, masked, problem string) {
	a := strings.TrimSpace(raw)
	if kind.SMS() {
		n, err := sms.NormalizeMobile(a, "")
		if err != nil || !strings.HasPrefix(a, "+") {
			return "", "", "must be a mobile number in E.164, such as +4915112345678"
		}
		return n, contact.Mask(n), ""
	}
	p, err := mail.ParseAddress(a)
	if err != nil || p.Name != "" || p.Address != a || len(a) > contact.MaxAddress {
		return "", "", "must be an email address, such as shop@example.com"
	}
	return a, contact.Mask(a), ""
}

func (h *Handler) GetTestSend(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "tts", "test send")
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	t, err := h.o.Templates.GetTestSend(r.Context(), h.o.API.AccountID(r), id)
	if err != nil {
		h.o.API.Fail(w, r, apiwire.About("test send", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, testSendOut(t))
}
