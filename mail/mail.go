// Package mail delivers rendered invites: over SMTP (TOUCHPOINT_SMTP_URL)
// or, for `touchpoint dev` without a mail server, into .eml files.
//
// Send errors are *senderr.Error, the vocabulary every medium shares: an
// SMTP 5xx reply for the recipient or the message is Permanent (for the
// recipient, RecipientRefused); 4xx replies, refused connections and
// timeouts are Transient; a connection lost after the whole message went
// out is Uncertain — the server may have taken it. Error texts never
// carry the recipient's address, only its masked form, because they end
// up in Temporal's history.
package mail

import (
	"context"
	"fmt"
	"log/slog"
	netmail "net/mail"
	"regexp"
	"strings"

	gomail "github.com/wneessen/go-mail"

	"github.com/touchpoint/touchpoint/senderr"
)

// Message is one invite, or one reminder, to deliver.
type Message struct {
	// EventID makes the stable Message-ID (<EventID@sender-domain>, for a
	// reminder <EventID.reminder@…>) and the .eml file name, so a
	// repeated send is recognisable as such.
	EventID  string
	Reminder bool
	To       string // the address
	ToName   string // the display name, may be ""
	// FromName is the shop's display name, shown as the sender's name
	// with the configured From address (RFC 2047-encoded as needed); ""
	// keeps the configured name.
	FromName string
	ReplyTo  string // the shop's reply address, or ""
	Locale   string // Content-Language, e.g. "de_AT"; may be ""
	Subject  string
	Text     string
	HTML     string
	// UnsubscribeURL, when set, is announced for one-click unsubscribe
	// (RFC 8058: List-Unsubscribe and List-Unsubscribe-Post).
	UnsubscribeURL string
	// Test marks a test of a shop's template (its EventID is the test
	// send's): the header TestHeader says so to filters and people.
	Test bool
}

// TestHeader marks a test message; its value is TestHeaderValue.
const (
	TestHeader      = "X-Touchpoint-Test"
	TestHeaderValue = "template test"
)

// ID is the message's stable ID part: the event ID, marked for a reminder.
func (m Message) ID() string {
	if m.Reminder {
		return m.EventID + reminderSuffix
	}
	return m.EventID
}

// reminderSuffix marks a reminder's ID.
const reminderSuffix = ".reminder"

// ParseID reads the event ID back from a message's ID as a mail
// provider reports it: the ID alone, or the whole Message-ID with or
// without its angle brackets ("<evt-…@shop.example>"). ok is false when s
// is not one of Touchpoint's IDs.
func ParseID(s string) (eventID string, reminder bool, ok bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "<"), ">")
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		s = s[:at]
	}
	if id, found := strings.CutSuffix(s, reminderSuffix); found {
		s, reminder = id, true
	}
	if len(s) == 0 || len(s) > 100 || strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		return "", false, false
	}
	return s, reminder, true
}

// Tag is a header that carries a message's ID to a mail provider whose
// reports do not name the Message-ID Touchpoint set (Postmark gives every
// message its own), in the form the provider hands back: each provider of
// package mailevents names its own. Value gets the message's ID (ID),
// which holds letters, digits, '-', '_' and '.' only, so it needs no
// quoting in JSON nor in a tag.
type Tag struct {
	Header string
	Value  func(messageID string) string
}

// Sender delivers messages.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// New returns the SMTP sender for smtpURL, or, when it is "", the
// directory sender writing into dir. Each message carries tags.
func New(smtpURL, from, dir string, logger *slog.Logger, tags []Tag) (Sender, error) {
	if smtpURL != "" {
		return NewSMTP(smtpURL, from, SMTPOptions{Tags: tags})
	}
	return NewDir(dir, from, logger, tags...)
}

// MaskEmail hides most of an address for logs: "jane@example.com" →
// "j***@example.com".
func MaskEmail(addr string) string {
	local, domain, ok := strings.Cut(addr, "@")
	if !ok {
		return "***"
	}
	if local == "" {
		return "***@" + domain
	}
	r := []rune(local)
	return string(r[0]) + "***@" + domain
}

// redact replaces the recipient's address in text with its masked form
// (servers echo it in replies: "550 5.1.1 <jane@example.com>: unknown").
func redact(text, addr string) string {
	if addr == "" {
		return text
	}
	return regexp.MustCompile(`(?i)`+regexp.QuoteMeta(addr)).ReplaceAllLiteralString(text, MaskEmail(addr))
}

// sender is what both senders share: the From address and the tags.
type sender struct {
	from   *netmail.Address
	domain string // for Message-IDs
	tags   []Tag
}

func newSender(from string, tags []Tag) (sender, error) {
	a, err := netmail.ParseAddress(from)
	if err != nil {
		return sender{}, fmt.Errorf("mail from address %q: %w", from, err)
	}
	_, domain, _ := strings.Cut(a.Address, "@")
	return sender{from: a, domain: domain, tags: tags}, nil
}

// build makes the MIME message: text and HTML alternatives, a Message-ID
// derived from the event ID, and headers marking it as automatic. The
// names and the subject are written as they are given: the MIME library
// encodes what a header cannot hold as RFC 2047 words, so no value can end
// its header, and nothing is cleaned here (what they may hold was decided
// where they came in, by package text).
func (s sender) build(m Message) (*gomail.Msg, error) {
	if m.EventID == "" {
		return nil, &senderr.Error{Kind: senderr.Permanent, Text: "message has no event ID"}
	}
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	fromName := s.from.Name
	if m.FromName != "" {
		fromName = m.FromName
	}
	// Names go in as net/mail addresses, which quote or encode them: a
	// name written into a header by hand could close its quotes and add
	// an address.
	msg.FromMailAddress(&netmail.Address{Name: fromName, Address: s.from.Address})
	if m.ReplyTo != "" {
		if err := msg.ReplyTo(m.ReplyTo); err != nil {
			return nil, &senderr.Error{Kind: senderr.Permanent, Text: "invalid reply-to address", Err: err}
		}
	}
	to, err := netmail.ParseAddress(m.To)
	if err != nil || to.Name != "" {
		return nil, &senderr.Error{Kind: senderr.Permanent, Recipient: senderr.RecipientRefused, Text: "invalid recipient address " + MaskEmail(m.To)}
	}
	to.Name = m.ToName
	msg.AddToMailAddress(to)
	msg.Subject(m.Subject)
	msg.SetMessageIDWithValue(m.ID() + "@" + s.domain)
	msg.SetDate()
	msg.SetGenHeader("Auto-Submitted", "auto-generated") // RFC 3834: no auto-replies
	if _, _, ok := ParseID(m.ID()); ok {
		for _, t := range s.tags {
			msg.SetGenHeader(gomail.Header(t.Header), t.Value(m.ID()))
		}
	}
	if m.UnsubscribeURL != "" {
		// RFC 8058: mailbox providers POST "List-Unsubscribe=One-Click" to
		// the URL; Gmail and Yahoo require it from bulk senders.
		msg.SetGenHeader("List-Unsubscribe", "<"+m.UnsubscribeURL+">")
		msg.SetGenHeader("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")
	}
	if m.Test {
		msg.SetGenHeader(TestHeader, TestHeaderValue)
	}
	if m.Locale != "" {
		msg.SetGenHeader(gomail.HeaderContentLang, strings.ReplaceAll(m.Locale, "_", "-"))
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	return msg, nil
}
