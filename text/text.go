// Package text decides, once for every input, what a field of each kind
// may hold: what is refused (and why, for a problem that names the field)
// and what is cleaned before it is stored. Every output then shows the
// stored text as it is, escaped for its own format (html/template,
// encoding/json, encoding/xml, a MIME header encoder, a quoted string in
// the CLI) and never cleaned again, so no two outputs show one text two
// ways.
//
// The kinds:
//
//   - Name: one line a person reads — a product, brand, category, shop,
//     event type or channel name, a customer's first and last name.
//     Refused: invalid UTF-8, the C0 controls (tab and line breaks too),
//     DEL, the C1 controls, the line and paragraph separators U+2028 and
//     U+2029, and the bidirectional embeddings, overrides and isolates
//     U+202A–U+202E and U+2066–U+2069, which can make a text read
//     differently from what it holds and spill over into the line around
//     it. A name Check accepts is stored as sent.
//   - Identifier: a key matched by its bytes — a SKU, GTIN, MPN, order or
//     customer reference, email address, mobile number, a client id.
//     Refused: what Name refuses, and every character that cannot be
//     seen (format characters such as the zero-width space, joiners,
//     the implicit direction marks, the byte-order mark and the soft
//     hyphen; white space other than the plain space), so that two
//     identifiers that look alike are alike. An identifier Check accepts
//     is stored as sent.
//   - Multiline: prose — a review's comment, the shop's reply, a note, a
//     postal address, a template's body. Never refused; cleaned: invalid
//     UTF-8 becomes U+FFFD, every line break ("\r\n", "\r", U+2028,
//     U+2029) becomes "\n", the other C0 controls but tab, DEL, the C1
//     controls and the bidirectional embeddings, overrides and isolates
//     are removed, and white space at both ends is trimmed. Markup stays
//     as written: each output escapes it.
//   - URL: an absolute http or https URL with a host and without user
//     information (a password in a public feed is a leak). Refused: what
//     Identifier refuses, and every white space character.
//   - Diagnostic: a line that someone outside wrote and that cannot be
//     refused — a mail provider's report, an SMTP server's reply, an SMS
//     provider's error. Cleaned as Multiline, then every run of white
//     space (line breaks included) becomes one space.
//
// The implicit direction marks (LRM, RLM, ALM) stay in names and prose:
// they cannot reach beyond their own text.
//
// Text stored before these rules (names, identifiers and URLs that were
// not refused then) is cleaned once, by a migration, with Clean: what
// Check would refuse for a character goes, so that every stored value is
// one its field could take today.
package text

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is what a field holds; see the package documentation.
type Kind int

// The kinds of field.
const (
	Name Kind = iota + 1
	Identifier
	Multiline
	URL
	Diagnostic
)

// Error says why a value of a field was refused; its text completes a
// sentence that begins with the field's name ("products[0].name must not
// contain …").
type Error struct {
	Kind Kind
	// Rune is the first character refused, at Position (counted in
	// characters from 1); 0 when the value was refused as a whole.
	Rune     rune
	Position int
	reason   string
}

func (e *Error) Error() string {
	if e.Rune == 0 {
		return e.reason
	}
	return fmt.Sprintf("%s (%U at character %d)", e.reason, e.Rune, e.Position)
}

// Check says why a value of a field of kind k is refused (an *Error), or
// nil. Multiline and Diagnostic text is never refused: Clean it. An empty
// value is accepted: whether a field is required, and how long it may be,
// is its owner's rule.
func Check(k Kind, s string) error {
	switch k {
	case Multiline, Diagnostic:
		return nil
	case Name, Identifier:
		return refuse(k, s)
	case URL:
		if err := refuse(k, s); err != nil || s == "" {
			return err
		}
		if u, err := url.Parse(s); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
			u.Hostname() == "" || u.User != nil || u.Opaque != "" {
			return &Error{Kind: k, reason: "must be an absolute http(s) URL without user information, e.g. https://shop.example/p/1"}
		}
		return nil
	}
	panic(fmt.Sprintf("text: unknown kind %d", k))
}

// Clean returns a value of a field of kind k as it is stored: Multiline
// and Diagnostic text cleaned (every input of them does so). A value of
// the other kinds that Check accepts comes out as it went in; every input
// refuses the others, so only text stored before the check was made (see
// the package documentation) is cleaned as follows: invalid UTF-8
// becomes U+FFFD; a run of the white space Check refuses (a tab or line
// break, in an identifier or URL also any white space but the plain
// space) becomes one space, or "%20" in a URL, and goes at either end;
// every other character Check refuses goes. A URL is trimmed of white
// space at both ends first. Nothing else is changed: a URL that is not
// an http(s) one stays as it is.
func Clean(k Kind, s string) string {
	switch k {
	case Multiline:
		return clean(s)
	case Diagnostic:
		return strings.Join(strings.Fields(clean(s)), " ")
	case Name, Identifier, URL:
		return mend(k, s)
	}
	panic(fmt.Sprintf("text: unknown kind %d", k))
}

// mend is Clean of the kinds that Check refuses characters of.
func mend(k Kind, s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || reason(k, r) != "" }) < 0 {
		return s // the common case: nothing to do
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if k == URL {
		s = strings.TrimSpace(s)
	}
	var b strings.Builder
	gap := false // a refused white space since the last character kept
	for _, r := range s {
		switch {
		case reason(k, r) == "":
		case unicode.IsSpace(r):
			gap = true
			continue
		default:
			continue
		}
		if gap && b.Len() > 0 {
			if k == URL {
				b.WriteString("%20")
			} else {
				b.WriteByte(' ')
			}
		}
		gap = false
		b.WriteRune(r)
	}
	return b.String()
}

// refuse finds the first character a value of kind k may not hold.
func refuse(k Kind, s string) error {
	pos := 0
	for i, r := range s {
		pos++
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return &Error{Kind: k, reason: "must be valid UTF-8"}
			}
		}
		if why := reason(k, r); why != "" {
			return &Error{Kind: k, Rune: r, Position: pos, reason: why}
		}
	}
	return nil
}

// reason says why a value of kind k may not hold r, or "".
func reason(k Kind, r rune) string {
	switch {
	case isControl(r) || r == '\u2028' || r == '\u2029':
		return "must not contain control characters such as line breaks"
	case IsBidiControl(r):
		return "must not contain bidirectional overrides or isolates"
	case k == Name:
		return ""
	case unicode.Is(unicode.Cf, r), unicode.IsSpace(r) && r != ' ':
		return "must not contain invisible characters"
	case k == URL && r == ' ':
		return "must not contain spaces (write them %20)"
	}
	return ""
}

// clean is the cleaning of Multiline.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u2028", "\n", "\u2029", "\n").Replace(s)
	s = strings.Map(func(r rune) rune {
		if (r != '\n' && r != '\t' && isControl(r)) || IsBidiControl(r) {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// isControl reports the C0 controls, DEL and the C1 controls.
func isControl(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }

// IsBidiControl reports the bidirectional formatting characters no field
// may carry: LRE, RLE, PDF, LRO, RLO (U+202A–U+202E) and LRI, RLI, FSI,
// PDI (U+2066–U+2069).
func IsBidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}
