package review

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxText is the longest comment, reply or note, in characters (runes),
// counted after CleanText.
const MaxText = 2000

// CleanText is how every free text of a review is stored — the customer's
// comments, the shop's reply, the notes of a report or a decision: line
// breaks become "\n" (browsers send "\r\n"), control characters other
// than tab and line break are removed (PostgreSQL cannot store NUL, and
// none of them belongs in prose), so are the bidirectional embedding,
// override and isolate controls (U+202A–U+202E, U+2066–U+2069, which can
// make a text read differently from what it holds, and spill over into
// the page around it), and white space at both ends is trimmed. Every
// other character stays as written, markup and all: each output escapes
// it in its own way. Invalid UTF-8 becomes U+FFFD.
func CleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.Map(func(r rune) rune {
		if (r != '\n' && r != '\t' && unicode.IsControl(r)) || IsBidiControl(r) {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// IsBidiControl reports whether r is one of the bidirectional formatting
// characters that CleanText removes: LRE, RLE, PDF, LRO, RLO (U+202A–
// U+202E) and LRI, RLI, FSI, PDI (U+2066–U+2069). The implicit marks
// (LRM, RLM, ALM) stay: they cannot reach beyond their text.
func IsBidiControl(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// TooLong reports whether a cleaned text is over MaxText characters.
func TooLong(s string) bool { return utf8.RuneCountInString(s) > MaxText }
