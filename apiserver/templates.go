package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/touchpoint/touchpoint/contact"
	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/templates"
)

// templateAPI is the routes of the shop's templates, their previews and test sends.
type templateAPI struct{ *server }

// The shop's own templates (package templates checks and renders them;
// these handlers read the request, ask the store and answer).

// templateJSON is a template as GET, PUT and the list answer it: the
// email fields or the SMS text, and where it comes from.
type templateJSON struct {
	Kind        templates.Kind   `json:"kind"`
	Locale      string           `json:"locale"`
	EventTypeID *string          `json:"eventTypeId"`
	Source      templates.Source `json:"source"`
	Version     *int             `json:"version"`
	CreatedAt   *timestamp       `json:"createdAt"`
	UpdatedAt   *timestamp       `json:"updatedAt"`
	Subject     *string          `json:"subject,omitempty"`
	Preheader   *string          `json:"preheader,omitempty"`
	Heading     *string          `json:"heading,omitempty"`
	Body        *string          `json:"body,omitempty"`
	ButtonLabel *string          `json:"buttonLabel,omitempty"`
	Text        *string          `json:"text,omitempty"`
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
		CreatedAt: new(timestamp(t.CreatedAt)), UpdatedAt: new(timestamp(t.UpdatedAt))}
	if t.EventTypeID != "" {
		out.EventTypeID, out.Source = &t.EventTypeID, templates.SourceEventType
	}
	return out.withContent(c), nil
}

// writeStoredTemplate answers t with status.
func (s *server) writeStoredTemplate(w http.ResponseWriter, r *http.Request, status int, t templatedb.Template) {
	out, err := storedTemplateOut(t)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, status, out)
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
func templateKey(r *http.Request) (templatedb.TemplateKey, error) {
	v := mux.Vars(r)
	kind, ok := templates.ParseKind(v["kind"])
	if !ok {
		return templatedb.TemplateKey{}, newError(http.StatusNotFound, "no template kind %q; the kinds are %s", v["kind"], kindList())
	}
	if !templates.ValidLanguage(v["locale"]) {
		return templatedb.TemplateKey{}, newError(http.StatusNotFound, "no template language %q; the languages are %s",
			v["locale"], strings.Join(templates.Languages, ", "))
	}
	q := parseQuery(r, "eventTypeId")
	for _, name := range []string{"limit", "cursor"} { // known to lists only
		if q.Has(name) {
			q.Fail(name, apiquery.UnknownParameter(name, []string{"eventTypeId"}))
		}
	}
	if err := q.Err(); err != nil {
		return templatedb.TemplateKey{}, err
	}
	et := q.Get("eventTypeId")
	if et != "" && !store.ValidID("ety", et) {
		return templatedb.TemplateKey{}, newError(http.StatusNotFound, "event type not found")
	}
	return templatedb.TemplateKey{AccountID: accountID(r), EventTypeID: et, Kind: string(kind), Locale: v["locale"]}, nil
}

func kindList() string {
	names := make([]string, len(templates.Kinds))
	for i, k := range templates.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// getTemplate answers the effective template: the event type's (with
// ?eventTypeId=), else the account's, else the built-in one.
func (s templateAPI) getTemplate(w http.ResponseWriter, r *http.Request) {
	key, err := templateKey(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	et, acc, err := s.store.Templates.TemplateLevels(r.Context(), key.AccountID, key.EventTypeID, key.Kind, key.Locale)
	if err != nil {
		s.fail(w, r, about("event type", "", err))
		return
	}
	chosen, err := templates.Choose(templates.Stored(et), templates.Stored(acc))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var t templatedb.Template
	switch chosen.Source {
	case templates.SourceEventType:
		t, err = s.store.Templates.GetTemplate(r.Context(), key)
	case templates.SourceAccount:
		key.EventTypeID = ""
		t, err = s.store.Templates.GetTemplate(r.Context(), key)
	default:
		kind := templates.Kind(key.Kind)
		c, err := s.templates.Builtin(kind, key.Locale)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, templateJSON{Kind: kind, Locale: key.Locale, Source: templates.SourceBuiltin}.withContent(c))
		return
	}
	if err != nil { // deleted between the two reads
		s.fail(w, r, err)
		return
	}
	s.writeStoredTemplate(w, r, http.StatusOK, t)
}

// putTemplate stores a template at the level of the path: 201 when the
// level had none, else 200, with the new version.
func (s templateAPI) putTemplate(w http.ResponseWriter, r *http.Request) {
	key, err := templateKey(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var in templateIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	c, err := s.checkTemplate(r, templates.Kind(key.Kind), key.Locale, key.EventTypeID, in.content(), "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	content, err := templates.EncodeContent(c)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	t, created, err := s.store.Templates.PutTemplate(r.Context(), key, content, clientID(r))
	if err != nil {
		s.fail(w, r, about("event type", "", err))
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	s.writeStoredTemplate(w, r, status, t)
}

// checkTemplate checks a template of the kind as the templates' rules
// demand (templates.Library.Check, with the account's sample data),
// naming its fields with prefix in errors.
func (s templateAPI) checkTemplate(r *http.Request, kind templates.Kind, lang, eventTypeID string, in templates.Content, prefix string) (templates.Content, error) {
	var sample templates.Input
	if kind.SMS() {
		var err error
		if sample, err = s.sample(r, lang, eventTypeID); err != nil {
			return in, err
		}
	}
	c, err := s.templates.Check(kind, lang, in, sample)
	var errs templates.Errors
	var tooLong *templates.TooLongError
	switch {
	case errors.As(err, &errs):
		fields := make([]fieldError, len(errs))
		for i, e := range errs {
			fields[i] = fieldError{Field: prefix + e.Field, Message: e.Message}
		}
		return c, invalid(fields...)
	case errors.As(err, &tooLong):
		return c, invalid(fieldError{Field: prefix + "text", Message: tooLong.Error()})
	}
	return c, err
}

// sample is the sample data of a preview, a test send or an SMS length
// check: the account's branding, the event type's name, sample links.
func (s templateAPI) sample(r *http.Request, lang, eventTypeID string) (templates.Input, error) {
	acc, err := s.accounts.Account(r.Context(), accountID(r))
	if err != nil {
		return templates.Input{}, err
	}
	name := ""
	if eventTypeID != "" {
		et, err := s.accounts.EventType(r.Context(), accountID(r), eventTypeID)
		if err != nil {
			return templates.Input{}, about("event type", "", err)
		}
		name = et.Name
	}
	in := templates.Sample(lang, name)
	in.Brand = acc.Brand()
	in.FeedbackURL = s.feedbackLinks.URL(templates.SampleEventID)
	in.UnsubscribeURL = s.unsubscribeLinks.URL(templates.SampleEventID)
	return in, nil
}

// deleteTemplate removes the template of the path's level: 204, after
// which the next level applies.
func (s templateAPI) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	key, err := templateKey(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.store.Templates.DeleteTemplate(r.Context(), key); err != nil {
		s.fail(w, r, about("template", "", err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listTemplates lists the account's own templates (never the built-in
// ones), newest first.
func (s templateAPI) listTemplates(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r, "kind", "locale", "eventTypeId", "level")
	f := templatedb.TemplateFilter{Kind: q.Get("kind"), Locale: q.Get("locale"), EventTypeID: q.id("eventTypeId", "ety")}
	if msg := oneOf(templates.Kind(f.Kind), templates.Kinds...); f.Kind != "" && msg != "" {
		q.Fail("kind", msg)
	}
	if msg := oneOf(f.Locale, templates.Languages...); f.Locale != "" && msg != "" {
		q.Fail("locale", msg)
	}
	switch level := templates.Source(q.Get("level")); level {
	case "":
	case templates.SourceAccount:
		f.AccountOnly = true
	case templates.SourceEventType:
		f.EventTypesOnly = true
	default:
		q.Fail("level", oneOf(level, templates.SourceAccount, templates.SourceEventType))
	}
	p := q.Page("tpl")
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	ts, next, err := s.store.Templates.ListTemplates(r.Context(), accountID(r), f, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]templateJSON, len(ts))
	for i, t := range ts {
		if out[i], err = storedTemplateOut(t); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, newList(out, next, func(t templateJSON) templateJSON { return t }))
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

// previewTemplate renders a template as a customer would receive it: the
// template given, or the effective one; with sample data, or with the
// data of one of the account's events (its links stay samples, so a
// preview never hands out a customer's working link).
func (s templateAPI) previewTemplate(w http.ResponseWriter, r *http.Request) {
	var in previewIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	kind, lang, err := kindAndLanguage(in.Kind, in.Locale)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var errs fieldErrors
	if in.EventTypeID != "" && !store.ValidID("ety", in.EventTypeID) {
		errs.check("eventTypeId", "must be an id of the form ety-<uuid>")
	}
	if in.EventID != "" && !store.ValidID("evt", in.EventID) {
		errs.check("eventId", "must be an id of the form evt-<uuid>")
	}
	if err := errs.err(); err != nil {
		s.fail(w, r, err)
		return
	}
	data, eventChosen, err := s.previewData(r, kind, lang, in.EventTypeID, in.EventID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var chosen templates.Chosen
	switch {
	case in.Template != nil:
		c, err := s.checkTemplate(r, kind, lang, in.EventTypeID, in.Template.content(), "template.")
		if err != nil {
			s.fail(w, r, err)
			return
		}
		chosen = templates.Chosen{Source: sourceRequest, Content: &c}
	case in.EventID != "" && in.EventTypeID == "":
		chosen = eventChosen // what the event's invite would be rendered from
	default:
		et, acc, err := s.store.Templates.TemplateLevels(r.Context(), accountID(r), in.EventTypeID, string(kind), lang)
		if err != nil {
			s.fail(w, r, about("event type", "", err))
			return
		}
		if chosen, err = templates.Choose(templates.Stored(et), templates.Stored(acc)); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	m, err := s.templates.Render(kind, lang, chosen.Content, data)
	if err != nil {
		s.fail(w, r, err)
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
	writeJSON(w, http.StatusOK, out)
}

// kindAndLanguage reads a kind and a language of a request body.
func kindAndLanguage(kind, lang string) (templates.Kind, string, error) {
	var errs fieldErrors
	k, ok := templates.ParseKind(kind)
	if !ok {
		errs.check("kind", oneOf(templates.Kind(kind), templates.Kinds...))
	}
	errs.check("locale", oneOf(lang, templates.Languages...))
	return k, lang, errs.err()
}

// previewData is the data a preview renders: sample data, or the data of
// the account's event eventID (another account's is 404), then also the
// template in force for that event.
func (s templateAPI) previewData(r *http.Request, kind templates.Kind, lang, eventTypeID, eventID string) (templates.Input, templates.Chosen, error) {
	in, err := s.sample(r, lang, eventTypeID)
	if err != nil || eventID == "" {
		return in, templates.Chosen{}, err
	}
	c, err := s.invites.LoadInviteContent(r.Context(), eventID)
	if err == nil && c.AccountID != accountID(r) {
		err = store.ErrNotFound
	}
	if err != nil {
		return templates.Input{}, templates.Chosen{}, about("event", "", err)
	}
	et, err := s.store.Templates.LoadEventTemplate(r.Context(), eventID, string(kind), lang)
	if err != nil {
		return templates.Input{}, templates.Chosen{}, about("event", "", err)
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
	ID          string           `json:"id"`
	Kind        templates.Kind   `json:"kind"`
	Locale      string           `json:"locale"`
	EventTypeID *string          `json:"eventTypeId"`
	To          string           `json:"to"` // masked
	Status      string           `json:"status"`
	Source      templates.Source `json:"source,omitempty"`
	Version     *int             `json:"version"`
	Error       *string          `json:"error"`
	CreatedAt   timestamp        `json:"createdAt"`
	FinishedAt  *timestamp       `json:"finishedAt"`
}

func testSendOut(t templatedb.TestSend) testSendJSON {
	out := testSendJSON{ID: t.ID, Kind: templates.Kind(t.Kind), Locale: t.Locale, To: t.MaskedAddress, Status: t.Status,
		Source: templates.Source(t.TemplateSource), CreatedAt: timestamp(t.CreatedAt)}
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
		out.FinishedAt = new(timestamp(*t.FinishedAt))
	}
	return out
}

// testSend orders one test of the effective template, sent to the shop's
// own address (or number, for an SMS kind) with sample data: 202 with the
// test send, pending until the worker has sent it (GET
// /templates/test-sends/{id}). An address on the account's suppression
// list is refused (422); each test counts against the day's test sends,
// the daily cap of sends to its address and the account's daily send
// quota (429 when used up).
func (s templateAPI) testSend(w http.ResponseWriter, r *http.Request) {
	var in testSendIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	kind, lang, err := kindAndLanguage(in.Kind, in.Locale)
	var errs fieldErrors
	if ae := (*apiError)(nil); errors.As(err, &ae) {
		errs = ae.fields
	}
	to, masked, msg := testAddress(kind, in.To)
	if kind != "" {
		errs.check("to", msg)
	}
	if in.EventTypeID != "" && !store.ValidID("ety", in.EventTypeID) {
		errs.check("eventTypeId", "must be an id of the form ety-<uuid>")
	}
	if kind.SMS() && s.sms == nil && len(errs) == 0 {
		errs.check("kind", "no SMS provider is configured, so no text message can be sent")
	}
	if err := errs.err(); err != nil {
		s.fail(w, r, err)
		return
	}
	p := infoFrom(r.Context()).principal
	t, err := s.store.Templates.CreateTestSend(r.Context(), templatedb.TestSend{AccountID: p.AccountID, EventTypeID: in.EventTypeID,
		Kind: string(kind), Locale: lang, Address: to, MaskedAddress: masked, CreatedBy: p.ClientID}, kind.Medium())
	if sup := (*suppressiondb.SuppressedError)(nil); errors.As(err, &sup) {
		err = unprocessable("to", fmt.Sprintf("suppressed: the address is on this account's suppression list (%s), "+
			"so no test is sent to it", sup.Reason))
	}
	if err != nil {
		s.fail(w, r, about("event type", "", err))
		return
	}
	w.Header().Set("Location", "/templates/test-sends/"+t.ID)
	writeJSON(w, http.StatusAccepted, testSendOut(t))
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
	if err != nil || p.Name != "" || p.Address != a || len(a) > maxAddress {
		return "", "", "must be an email address, such as shop@example.com"
	}
	return a, contact.Mask(a), ""
}

func (s templateAPI) getTestSend(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "tts", "test send")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	t, err := s.store.Templates.GetTestSend(r.Context(), accountID(r), id)
	if err != nil {
		s.fail(w, r, about("test send", "", err))
		return
	}
	writeJSON(w, http.StatusOK, testSendOut(t))
}

// retryAtMidnight is the Retry-After of a daily limit: the seconds to the
// next UTC midnight.
func retryAtMidnight(now time.Time) string {
	next := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	return fmt.Sprint(int(next.Sub(now).Seconds()) + 1)
}
