package templates

import "github.com/touchpoint/touchpoint/brand"

// Library holds the built-in templates of both media, for whoever renders
// any kind of message: the API's preview, the worker's test send.
type Library struct {
	Mail *Set
	SMS  *SMSSet
}

// Load parses the embedded templates of both media.
func Load() (*Library, error) {
	m, err := New()
	if err != nil {
		return nil, err
	}
	s, err := NewSMS()
	if err != nil {
		return nil, err
	}
	return &Library{Mail: m, SMS: s}, nil
}

// Input is what a message of any kind is rendered from.
type Input struct {
	FirstName      string
	Products       []Product
	Brand          brand.Brand
	OrderReference string
	EventType      string
	FeedbackURL    string
	UnsubscribeURL string // emails only
}

// Rendered is a message of any kind: an email's subject, text and HTML,
// or an SMS's text with its encoding and segments.
type Rendered struct {
	Locale   string
	Subject  string // emails only
	Text     string
	HTML     string // emails only
	Encoding string // SMS only
	Segments int    // SMS only
	Builtin  bool
	Fallback error
}

// Render renders a message of the kind in the locale from content (nil:
// the built-in template).
func (l *Library) Render(kind Kind, locale string, content *Content, in Input) (Rendered, error) {
	if kind.SMS() {
		d := smsData(kind, in)
		if content != nil {
			d.Template = content.Text
		}
		m, err := l.SMS.Render(locale, d)
		return Rendered{Locale: m.Locale, Text: m.Text, Encoding: m.Encoding, Segments: m.Segments,
			Builtin: m.Builtin, Fallback: m.Fallback}, err
	}
	m, err := l.Mail.Render(locale, Data{FirstName: in.FirstName, Products: in.Products, FeedbackURL: in.FeedbackURL,
		Brand: in.Brand, UnsubscribeURL: in.UnsubscribeURL, Reminder: kind.Reminder(), OrderReference: in.OrderReference,
		EventType: in.EventType, Template: content})
	return Rendered{Locale: m.Locale, Subject: m.Subject, Text: m.Text, HTML: m.HTML, Builtin: m.Builtin, Fallback: m.Fallback}, err
}

// smsData is what an SMS of the kind is rendered from.
func smsData(kind Kind, in Input) SMSData {
	d := SMSData{ShopName: in.Brand.DisplayName, FirstName: in.FirstName, FeedbackURL: in.FeedbackURL,
		Reminder: kind.Reminder(), OrderReference: in.OrderReference, EventType: in.EventType}
	if len(in.Products) > 0 {
		d.ProductName = in.Products[0].Name
	}
	return d
}

// Check is what a shop's template of the kind must pass to be stored:
// Validate (its Errors name the fields), and for an SMS Fit with the
// sample input (a full-length link; a *TooLongError when the message
// would cost more than MaxSMSSegments). It returns the content as it is
// stored.
func (l *Library) Check(kind Kind, lang string, c Content, sample Input) (Content, error) {
	c, err := Validate(kind, c)
	if err != nil || !kind.SMS() {
		return c, err
	}
	_, err = l.SMS.Fit(lang, c.Text, smsData(kind, sample))
	return c, err
}

// Builtin is the built-in template of the kind in the language, written
// as a shop would write it.
func (l *Library) Builtin(kind Kind, lang string) (Content, error) {
	if kind.SMS() {
		text, err := l.SMS.Builtin(lang, kind.Reminder())
		return Content{Text: text}, err
	}
	return l.Mail.Builtin(lang, kind.Reminder())
}

// SampleEventID is the event the sample links of a preview or a test
// send point to. No event has it: the links are signed and look real,
// and lead to the page for a link whose event is gone.
const SampleEventID = "evt-00000000-0000-4000-8000-000000000000"

// sampleNames are the first names of the sample customer, by language;
// GSM-7 only, so an SMS counts as a real one would.
var sampleNames = map[string]string{"da": "Freja", "de": "Lena", "en": "Emma", "es": "Lucia", "fr": "Camille", "nl": "Sanne"}

// Sample is the sample data of a preview or a test send in a language:
// a customer named in that language, one product, an order reference,
// and the event type's name (eventType, or "checkout" when "").
func Sample(lang, eventType string) Input {
	name, ok := sampleNames[lang]
	if !ok {
		name = sampleNames[DefaultLocale]
	}
	if eventType == "" {
		eventType = "checkout"
	}
	return Input{FirstName: name, Products: []Product{{Name: "Merino hiking socks"}}, OrderReference: "ORD-100042", EventType: eventType}
}

// AccountSample is the sample data a preview, a test and an SMS's length
// check of an account render with: Sample, with the account's branding
// and the sample links (those of SampleEventID), which look real and lead
// nowhere.
func AccountSample(lang, eventType string, b brand.Brand, feedbackURL, unsubscribeURL string) Input {
	in := Sample(lang, eventType)
	in.Brand = b
	in.FeedbackURL, in.UnsubscribeURL = feedbackURL, unsubscribeURL
	return in
}
