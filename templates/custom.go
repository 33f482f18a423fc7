package templates

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/text"
)

// A shop may write its own words for each kind of message, per language,
// for the whole account and, beside that, for one event type. What it
// writes is text, never markup: a template fills the slots of
// Touchpoint's layout — subject, preview text, heading, body, button
// label, or the text of an SMS — while the layout keeps what a template
// must not remove (the shop's logo and colour, the products, the button
// with the signed feedback link, the footer with the visible unsubscribe
// link; in the mail headers List-Unsubscribe; in an SMS the shop's name,
// the link and how to opt out). Validate is the one check every template
// passes before it is stored or previewed.

// Kind is what a template is for.
type Kind string

// The kinds of template.
const (
	KindInvite      Kind = "invite"
	KindReminder    Kind = "reminder"
	KindSMSInvite   Kind = "sms_invite"
	KindSMSReminder Kind = "sms_reminder"
)

// Kinds lists every kind.
var Kinds = []Kind{KindInvite, KindReminder, KindSMSInvite, KindSMSReminder}

// ParseKind returns the kind named s.
func ParseKind(s string) (Kind, bool) {
	k := Kind(s)
	return k, slices.Contains(Kinds, k)
}

// SMS reports whether the kind is a text message.
func (k Kind) SMS() bool { return k == KindSMSInvite || k == KindSMSReminder }

// Medium is how a message of the kind goes out: by SMS for an SMS kind,
// else by email.
func (k Kind) Medium() invite.Medium {
	if k.SMS() {
		return invite.SMS
	}
	return invite.Email
}

// Reminder reports whether the kind is a reminder.
func (k Kind) Reminder() bool { return k == KindReminder || k == KindSMSReminder }

// Languages are the languages a shop writes templates in: those of the
// built-in templates. A regional built-in locale (de_AT) is served by
// its language's template.
var Languages = []string{"da", "de", "en", "es", "fr", "nl"}

// ValidLanguage reports whether s is one of Languages.
func ValidLanguage(s string) bool { return slices.Contains(Languages, s) }

// Language is the template language for a locale as Pick chose it:
// de_AT → de.
func Language(locale string) string {
	lang, _, _ := strings.Cut(locale, "_")
	return lang
}

// Content is a template's words. An email template has Subject, Heading,
// Body and ButtonLabel (Preheader is optional); an SMS template has only
// Text. Body is paragraphs separated by blank lines; a single line break
// stays a line break.
type Content struct {
	Subject     string `json:"subject,omitempty"`
	Preheader   string `json:"preheader,omitempty"`
	Heading     string `json:"heading,omitempty"`
	Body        string `json:"body,omitempty"`
	ButtonLabel string `json:"buttonLabel,omitempty"`
	Text        string `json:"text,omitempty"`
}

// EncodeContent is c as a store keeps it; DecodeContent reads it back.
func EncodeContent(c Content) ([]byte, error) { return json.Marshal(c) }

// DecodeContent reads the content of a template as a store keeps it
// (EncodeContent).
func DecodeContent(stored []byte) (Content, error) {
	var c Content
	if err := json.Unmarshal(stored, &c); err != nil {
		return Content{}, fmt.Errorf("decode template: %w", err)
	}
	return c, nil
}

// Limits of a template's fields, in characters (Unicode code points) as
// written, before the placeholders are filled in. They leave room for
// any sensible text while keeping a subject short enough to be read in
// an inbox and a button label short enough for a phone; an SMS must
// further fit two segments (see SMSSet.Fit).
const (
	MaxSubject     = 150
	MaxPreheader   = 200
	MaxHeading     = 150
	MaxBody        = 5000
	MaxButtonLabel = 40
	MaxSMSText     = 480
)

// FieldError is one thing wrong with one field of a template.
type FieldError struct {
	Field   string // subject, preheader, heading, body, buttonLabel, text
	Message string
}

// Errors is a template that may not be used, with everything wrong in it.
type Errors []FieldError

func (e Errors) Error() string {
	parts := make([]string, len(e))
	for i, f := range e {
		parts[i] = f.Field + ": " + f.Message
	}
	return "invalid template: " + strings.Join(parts, "; ")
}

// Validate checks a template of the kind and returns it normalised. The
// one-line fields are names (text.Name: no control or bidirectional
// character); the body and an SMS text are multi-line text, cleaned as
// text.Multiline has it, with each line's end trimmed and the paragraphs
// separated by exactly one blank line. The error is an Errors.
func Validate(kind Kind, c Content) (Content, error) {
	var errs Errors
	bad := func(field, msg string) { errs = append(errs, FieldError{Field: field, Message: msg}) }
	field := func(name, value string, required, multiline bool, limit int) string {
		if !utf8.ValidString(value) {
			bad(name, "must be valid UTF-8")
			return value
		}
		if multiline {
			value = normalizeBody(text.Clean(text.Multiline, value))
		} else if err := text.Check(text.Name, value); err != nil {
			msg := err.Error()
			if strings.ContainsAny(value, "\r\n\u2028\u2029") {
				msg = "must be one line: no line breaks"
			}
			bad(name, msg)
			return value
		}
		value = strings.TrimSpace(value)
		switch n := utf8.RuneCountInString(value); {
		case value == "" && required:
			bad(name, "must not be empty")
			return value
		case n > limit:
			bad(name, fmt.Sprintf("must be at most %d characters (has %d)", limit, n))
			return value
		}
		if msg := checkPlaceholders(value); msg != "" {
			bad(name, msg)
		}
		return value
	}
	var out Content
	if kind.SMS() {
		for name, v := range map[string]string{"subject": c.Subject, "preheader": c.Preheader, "heading": c.Heading,
			"body": c.Body, "buttonLabel": c.ButtonLabel} {
			if v != "" {
				bad(name, "an SMS template has only text")
			}
		}
		out.Text = field("text", c.Text, true, true, MaxSMSText)
	} else {
		if c.Text != "" {
			bad("text", "an email template has subject, preheader, heading, body and buttonLabel; text is for SMS templates")
		}
		out.Subject = field("subject", c.Subject, true, false, MaxSubject)
		out.Preheader = field("preheader", c.Preheader, false, false, MaxPreheader)
		out.Heading = field("heading", c.Heading, true, false, MaxHeading)
		out.Body = field("body", c.Body, true, true, MaxBody)
		out.ButtonLabel = field("buttonLabel", c.ButtonLabel, true, false, MaxButtonLabel)
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b FieldError) int { return fieldOrder(a.Field) - fieldOrder(b.Field) })
		return Content{}, errs
	}
	return out, nil
}

func fieldOrder(f string) int {
	return slices.Index([]string{"subject", "preheader", "heading", "body", "buttonLabel", "text"}, f)
}

// normalizeBody trims each line's end of a cleaned text and separates
// its paragraphs by exactly one blank line.
func normalizeBody(s string) string {
	var paras []string
	for _, p := range paragraphs(s) {
		paras = append(paras, strings.Join(p, "\n"))
	}
	return strings.Join(paras, "\n\n")
}

// paragraphs splits text at blank lines into paragraphs of lines, each
// line trimmed of trailing white space, empty paragraphs dropped.
func paragraphs(s string) [][]string {
	var out [][]string
	var cur []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimRight(line, " \t\u00a0")
		if strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// Source says which level a template comes from.
type Source string

// The levels, most specific first.
const (
	SourceEventType Source = "eventType"
	SourceAccount   Source = "account"
	SourceBuiltin   Source = "builtin"
)

// Stored is the template a shop has stored at one level, in its version
// in force, as a store keeps it: its content encoded (EncodeContent). A
// zero Version: the level has none. (The store's own type of a level has
// the same fields and converts to it.)
type Stored struct {
	Version int
	Content []byte
}

// Chosen is the template a message is rendered from and where it comes
// from. Content is nil for the built-in one.
type Chosen struct {
	Source  Source
	Version int // 0 for the built-in one
	Content *Content
}

// Choose picks the effective template: the event type's, else the
// account's, else the built-in one (either level may have none).
func Choose(eventType, account Stored) (Chosen, error) {
	for _, level := range []struct {
		s      Stored
		source Source
	}{{eventType, SourceEventType}, {account, SourceAccount}} {
		if level.s.Version != 0 {
			c, err := DecodeContent(level.s.Content)
			if err != nil {
				return Chosen{}, err
			}
			return Chosen{Source: level.source, Version: level.s.Version, Content: &c}, nil
		}
	}
	return Chosen{Source: SourceBuiltin}, nil
}

// ErrNeedsProduct is why a template that names the product was not used:
// the event has no products. The message is rendered from the built-in
// template instead, which reads well without one.
var ErrNeedsProduct = errors.New("the template names {{productName}} and the event has no products")
