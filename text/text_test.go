package text_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/text"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	const (
		ok        = ""
		control   = "must not contain control characters such as line breaks"
		bidi      = "must not contain bidirectional overrides or isolates"
		invisible = "must not contain invisible characters"
		utf       = "must be valid UTF-8"
		notURL    = "must be an absolute http(s) URL without user information, e.g. https://shop.example/p/1"
	)
	for _, tt := range []struct {
		kind text.Kind
		in   string
		want string
		r    rune
		pos  int
	}{
		{text.Name, "", ok, 0, 0},
		{text.Name, "Rain jacket", ok, 0, 0},
		{text.Name, `<b>Tom & "Jerry"</b> ]]> </script>`, ok, 0, 0},
		{text.Name, "Zoë Müller-Lüdenscheidt", ok, 0, 0},
		{text.Name, "שמלה כחולה", ok, 0, 0},
		{text.Name, "Caf\u00e9\u200d\u200e\u00a0crème", ok, 0, 0},
		{text.Name, "  spaced  ", ok, 0, 0},
		{text.Name, "Rain\x07jacket", control, 0x07, 5},
		{text.Name, "Rain\u202Ejacket", bidi, 0x202E, 5},
		{text.Name, "\u202Aa", bidi, 0x202A, 1},
		{text.Name, "a\u2066", bidi, 0x2066, 2},
		{text.Name, "ab\u2069", bidi, 0x2069, 3},
		{text.Name, "a\u202Fb", ok, 0, 0}, // narrow no-break space: not a control
		{text.Name, "a\u2029b", control, 0x2029, 2},
		{text.Name, "a\u2028b", control, 0x2028, 2},
		{text.Name, "a\tb", control, '\t', 2},
		{text.Name, "a\nb", control, '\n', 2},
		{text.Name, "a\r\nb", control, '\r', 2},
		{text.Name, "\x00", control, 0, 1},
		{text.Name, "é\x7f", control, 0x7f, 2},
		{text.Name, "\u0085", control, 0x85, 1},
		{text.Name, "x\u009b31m", control, 0x9b, 2},
		{text.Name, "\x1b[2J", control, 0x1b, 1},
		{text.Name, "a\xffb", utf, 0, 0},
		{text.Identifier, "JKT-1 / blue", ok, 0, 0},
		{text.Identifier, "4006381333931", ok, 0, 0},
		{text.Identifier, "JKT\x1b[2J", control, 0x1b, 4},
		{text.Identifier, "JKT\u202E1", bidi, 0x202E, 4},
		{text.Identifier, "JKT\u200b1", invisible, 0x200B, 4},
		{text.Identifier, "JKT\u200e1", invisible, 0x200E, 4},
		{text.Identifier, "\ufeffJKT", invisible, 0xFEFF, 1},
		{text.Identifier, "JK\u00adT", invisible, 0xAD, 3},
		{text.Identifier, "JKT\u00a01", invisible, 0xA0, 4},
		{text.Identifier, "JKT\u30001", invisible, 0x3000, 4},
		{text.URL, "", ok, 0, 0},
		{text.URL, "https://shop.example/p/1?c=blue#top", ok, 0, 0},
		{text.URL, "http://shop.example/bücher", ok, 0, 0},
		{text.URL, "https://shop.example/a b", "must not contain spaces (write them %20)", ' ', 23},
		{text.URL, "https://shop.example/\u202Egpj.exe", bidi, 0x202E, 22},
		{text.URL, "https://shop.example/\x07", control, 7, 22},
		{text.URL, "https://shop.example/\u200b", invisible, 0x200B, 22},
		{text.URL, "javascript:alert(1)", notURL, 0, 0},
		{text.URL, "/p/1", notURL, 0, 0},
		{text.URL, "https://user:secret@shop.example/", notURL, 0, 0},
		{text.URL, "ftp://shop.example/", notURL, 0, 0},
		{text.URL, "https://", notURL, 0, 0},
		{text.Multiline, "a\x07\u202Eb\r\n", ok, 0, 0},
		{text.Diagnostic, "550\x1b[2J", ok, 0, 0},
	} {
		err := text.Check(tt.kind, tt.in)
		if tt.want == ok {
			assert.NoError(t, err, "%d %q", tt.kind, tt.in)
			continue
		}
		var te *text.Error
		require.True(t, errors.As(err, &te), "%d %q: %v", tt.kind, tt.in, err)
		assert.Equal(t, tt.kind, te.Kind)
		assert.Equal(t, tt.r, te.Rune, "%q", tt.in)
		assert.Equal(t, tt.pos, te.Position, "%q", tt.in)
		assert.True(t, strings.HasPrefix(te.Error(), tt.want), "%q: %s", tt.in, te)
	}
	assert.EqualError(t, text.Check(text.Name, "Rain\u202Ejacket"),
		"must not contain bidirectional overrides or isolates (U+202E at character 5)", "the problem names the character")
}

func TestClean(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		kind    text.Kind
		in, out string
	}{
		{text.Multiline, "", ""},
		{text.Multiline, "  Great shoes!\r\nWould buy again.\r\n", "Great shoes!\nWould buy again."},
		{text.Multiline, "one\rtwo\u2028three\u2029four", "one\ntwo\nthree\nfour"},
		{text.Multiline, "tab\tstays", "tab\tstays"},
		{text.Multiline, "bell\x07 and NUL\x00 and ESC\x1b[2J go", "bell and NUL and ESC[2J go"},
		{text.Multiline, "C1\u0085\u009b gone, DEL\x7f too", "C1 gone, DEL too"},
		{text.Multiline, "\u202Eevil\u202C \u2066isolated\u2069", "evil isolated"},
		{text.Multiline, "marks \u200e\u200f\u061c stay", "marks \u200e\u200f\u061c stay"},
		{text.Multiline, "<script>alert(1)</script> & ]]>", "<script>alert(1)</script> & ]]>"},
		{text.Multiline, "bad \xff byte", "bad \uFFFD byte"},
		{text.Multiline, "\n\n  \t", ""},
		{text.Diagnostic, "550 5.1.1\r\n  mailbox\tunknown\x07\u202E ", "550 5.1.1 mailbox unknown"},
		{text.Diagnostic, "\x1b]0;title\x07done", "]0;titledone"},
		// What Check accepts is stored as sent.
		{text.Name, "  spaced  Zoë \u200e", "  spaced  Zoë \u200e"},
		{text.Identifier, " A ", " A "},
		{text.URL, "https://x.example/", "https://x.example/"},
		// What it refuses (stored before it did) loses the characters
		// refused; refused white space is one space between the rest.
		{text.Name, "Mug\r\nEngraved:\tGreta\n", "Mug Engraved: Greta"},
		{text.Name, "\u2028 Rain\x07 \u202Ejacket\u2069\x1b[2J", " Rain jacket[2J"},
		{text.Name, "C1\u0085here\u009b and\x7f", "C1 here and"},
		{text.Name, "bad \xff byte\u00a0\u200b", "bad \uFFFD byte\u00a0\u200b"},
		{text.Identifier, "\ufeffJKT\u200b-1\u00a0/\u3000blue\n", "JKT-1 / blue"},
		{text.Identifier, "JK\u00adT\u202E1\x00", "JKT1"},
		{text.URL, " https://x.example/a b\u200b\tc.jpg\n", "https://x.example/a%20b%20c.jpg"},
		{text.URL, "javascript:alert(1)\u202E", "javascript:alert(1)"},
	} {
		assert.Equal(t, tt.out, text.Clean(tt.kind, tt.in), "%d %q", tt.kind, tt.in)
	}
}

// TestBidiControls: exactly the embeddings, overrides and isolates.
func TestBidiControls(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= utf8.MaxRune; r++ {
		want := (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
		if text.IsBidiControl(r) != want {
			t.Fatalf("IsBidiControl(%U) = %v", r, !want)
		}
	}
}

func TestUnknownKind(t *testing.T) {
	t.Parallel()
	assert.Panics(t, func() { _ = text.Check(text.Kind(99), "x") })
	assert.Panics(t, func() { _ = text.Clean(text.Kind(0), "x") })
}

// FuzzText: whatever comes in, what a kind accepts or cleans holds none
// of what it refuses; cleaning twice changes nothing; cleaning what a
// kind accepts changes nothing; a stricter kind accepts nothing a looser
// one refuses.
func FuzzText(f *testing.F) {
	for _, s := range []string{"Rain jacket", "a\x07b\u202Ec\r\nd", "\xff\u2028\u0085", "https://x.example/a?b=c", " \t\n", "JKT\u200b1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, id, link := text.Check(text.Name, s), text.Check(text.Identifier, s), text.Check(text.URL, s)
		if name == nil && (!utf8.ValidString(s) || strings.ContainsFunc(s, forbidden)) {
			t.Fatalf("Name accepts %q", s)
		}
		if name != nil && (id == nil || link == nil) {
			t.Fatalf("Name refuses %q, Identifier or URL accepts it", s)
		}
		if id != nil && link == nil {
			t.Fatalf("Identifier refuses %q, URL accepts it", s)
		}
		m := text.Clean(text.Multiline, s)
		if m != text.Clean(text.Multiline, m) {
			t.Fatalf("Multiline is not idempotent on %q", s)
		}
		for line := range strings.SplitSeq(m, "\n") {
			if err := text.Check(text.Name, strings.ReplaceAll(line, "\t", " ")); err != nil {
				t.Fatalf("a line of cleaned %q is refused as a name: %v", s, err)
			}
		}
		for _, k := range []text.Kind{text.Name, text.Identifier, text.URL} {
			c := text.Clean(k, s)
			var te *text.Error
			if err := text.Check(k, c); errors.As(err, &te) && (te.Rune != 0 || !utf8.ValidString(c)) {
				t.Fatalf("kind %d: Clean(%q) = %q holds what Check refuses: %v", k, s, c, err)
			}
			if text.Clean(k, c) != c {
				t.Fatalf("kind %d: Clean is not idempotent on %q", k, s)
			}
			if text.Check(k, s) == nil && c != s {
				t.Fatalf("kind %d: Clean changes %q, which Check accepts, to %q", k, s, c)
			}
		}
		d := text.Clean(text.Diagnostic, s)
		if err := text.Check(text.Name, d); err != nil || d != text.Clean(text.Diagnostic, d) || strings.Contains(d, "  ") {
			t.Fatalf("Diagnostic %q of %q: %v", d, s, err)
		}
	})
}

func forbidden(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029 || text.IsBidiControl(r)
}
