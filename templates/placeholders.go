package templates

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// The placeholders a shop may write in a template, a closed set: each
// stands for one value of the event the message is about, inserted as
// plain text and escaped for the part it lands in.
const (
	FirstName      = "firstName"      // the customer's first name; may be empty (see the greeting rule)
	ShopName       = "shopName"       // the account's display name
	ProductName    = "productName"    // the name of the event's first product
	OrderReference = "orderReference" // the transaction's reference
	EventType      = "eventType"      // the name of the event's type
)

// Placeholders lists the placeholder names, in the order the docs give them.
var Placeholders = []string{FirstName, ShopName, ProductName, OrderReference, EventType}

// Values are what the placeholders stand for in one message.
type Values struct {
	FirstName, ShopName, ProductName, OrderReference, EventType string
}

func (v Values) get(name string) string {
	switch name {
	case FirstName:
		return v.FirstName
	case ShopName:
		return v.ShopName
	case ProductName:
		return v.ProductName
	case OrderReference:
		return v.OrderReference
	case EventType:
		return v.EventType
	}
	return ""
}

// trimmed are the values without white space around them, which is no
// part of the sentence a value lands in ("Hi {{firstName}}," with " Ann "
// reads "Hi Ann,"; a name of spaces alone is no name). Nothing else is
// taken from a value: what it may hold was decided when it came in
// (package text), and each part of a message escapes it its own way.
func (v Values) trimmed() Values {
	return Values{FirstName: strings.TrimSpace(v.FirstName), ShopName: strings.TrimSpace(v.ShopName),
		ProductName: strings.TrimSpace(v.ProductName), OrderReference: strings.TrimSpace(v.OrderReference),
		EventType: strings.TrimSpace(v.EventType)}
}

// placeholderRE finds what looks like a placeholder: two braces, a name
// (spaces around it are tolerated), two braces.
var placeholderRE = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// segment is a piece of a line: literal text, or a placeholder's name.
type segment struct {
	text        string
	placeholder string
}

// parseLine splits a line into literal text and placeholders.
func parseLine(line string) []segment {
	var out []segment
	last := 0
	for _, m := range placeholderRE.FindAllStringSubmatchIndex(line, -1) {
		if m[0] > last {
			out = append(out, segment{text: line[last:m[0]]})
		}
		out = append(out, segment{placeholder: line[m[2]:m[3]]})
		last = m[1]
	}
	if last < len(line) {
		out = append(out, segment{text: line[last:]})
	}
	return out
}

// checkPlaceholders returns what is wrong with the placeholders of a
// field's text: an unknown name, a brace pair that is no placeholder, or
// a {{firstName}} outside a greeting. "" means nothing.
func checkPlaceholders(text string) string {
	for _, line := range strings.Split(text, "\n") {
		segs := parseLine(line)
		for i, s := range segs {
			switch {
			case s.placeholder == "" && (strings.Contains(s.text, "{{") || strings.Contains(s.text, "}}")):
				return "a placeholder is written {{name}}, one of " + placeholderList()
			case s.placeholder == "":
			case !known(s.placeholder):
				return fmt.Sprintf("unknown placeholder {{%s}}; the placeholders are %s", s.placeholder, placeholderList())
			case s.placeholder == FirstName && greetingAt(segs, i) == notAGreeting:
				return `{{firstName}} must be part of a greeting, so that a message to a customer without a first name ` +
					`still reads well: at the start of a line ("Hi {{firstName}},") or after a comma at the end of a ` +
					`sentence ("How was your order, {{firstName}}?")`
			}
		}
	}
	return ""
}

func known(name string) bool {
	for _, p := range Placeholders {
		if p == name {
			return true
		}
	}
	return false
}

func placeholderList() string {
	names := make([]string, len(Placeholders))
	for i, p := range Placeholders {
		names[i] = "{{" + p + "}}"
	}
	return strings.Join(names, ", ")
}

// uses reports whether a text uses the placeholder.
func uses(text, name string) bool {
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		if m[1] == name {
			return true
		}
	}
	return false
}

// The two places {{firstName}} may stand, which decide how a line reads
// without a name.
type greetingForm int

const (
	notAGreeting greetingForm = iota
	// opening: "Hi {{firstName}}," — the line opens with at most three
	// words and the name, then a punctuation mark or the line's end.
	// Without a name the opening becomes the locale's neutral greeting
	// ("Hello,"), and the rest of the line follows.
	opening
	// address: "How was it, {{firstName}}?" — a comma, the name, then a
	// punctuation mark or the line's end. Without a name the comma and
	// the name are left out ("How was it?").
	address
)

var (
	// afterName: what may follow the name in either form.
	afterName = regexp.MustCompile(`^[ \x{00a0}\x{202f}]*([,.!?:;]|$)`)
	// beforeAddress: the comma before a name that ends a sentence.
	beforeAddress = regexp.MustCompile(`,[ \x{00a0}]*$`)
	// openingWords: at most three words before the name at a line's start,
	// none of them ending a sentence.
	openingWords = regexp.MustCompile(`^[ \x{00a0}]*([^\s.!?]+[ \x{00a0}]+){0,3}$`)
)

// greetingAt tells which form the {{firstName}} at segs[i] stands in.
func greetingAt(segs []segment, i int) greetingForm {
	after := ""
	if i+1 < len(segs) && segs[i+1].placeholder == "" {
		after = segs[i+1].text
	} else if i+1 < len(segs) {
		return notAGreeting // another placeholder right after the name
	}
	if !afterName.MatchString(after) {
		return notAGreeting
	}
	before := ""
	if i > 0 {
		if segs[i-1].placeholder != "" {
			return notAGreeting
		}
		before = segs[i-1].text
	}
	switch {
	case beforeAddress.MatchString(before):
		return address
	case i <= 1 && openingWords.MatchString(before):
		return opening
	}
	return notAGreeting
}

// expand replaces the placeholders of text with their values (already
// trimmed). Where {{firstName}} has no value, its greeting reads without
// it: an opening becomes neutral, the locale's greeting for a customer
// without a name; an address is left out. A placeholder the checks
// would refuse (never in a stored template) is kept as written.
func expand(text string, v Values, neutral string) string {
	lines := strings.Split(text, "\n")
	for n, line := range lines {
		segs := parseLine(line)
		var b strings.Builder
		for i := 0; i < len(segs); i++ {
			s := segs[i]
			switch {
			case s.placeholder == "":
				b.WriteString(s.text)
			case !known(s.placeholder):
				b.WriteString("{{" + s.placeholder + "}}")
			case s.placeholder == FirstName && v.FirstName == "":
				switch greetingAt(segs, i) {
				case address:
					out := beforeAddress.ReplaceAllString(b.String(), "")
					b.Reset()
					b.WriteString(out)
				case opening:
					b.Reset() // the opening words go
					rest := ""
					if i+1 < len(segs) {
						rest = segs[i+1].text
						i++
					}
					b.WriteString(neutralGreeting(neutral, rest))
				}
			default:
				b.WriteString(v.get(s.placeholder))
			}
		}
		lines[n] = b.String()
	}
	return strings.Join(lines, "\n")
}

// neutralGreeting is the neutral greeting in place of an opening whose
// line continues with rest (the text after the name): the opening's own
// punctuation mark gives way to the greeting's, except that an
// exclamation mark stays one ("Hi {{firstName}}!" → "Hello!").
func neutralGreeting(neutral, rest string) string {
	m := afterName.FindStringSubmatch(rest)
	punct := ""
	if m != nil {
		punct = m[1]
		rest = rest[len(m[0]):]
	}
	g := neutral
	if punct == "!" && strings.HasSuffix(g, ",") || punct == "!" && strings.HasSuffix(g, ":") {
		g = strings.TrimRightFunc(g[:len(g)-1], unicode.IsSpace) + "!"
	}
	if rest = strings.TrimLeft(rest, " \u00a0\u202f"); rest != "" {
		return g + " " + rest
	}
	return g
}
