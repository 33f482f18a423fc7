package admincli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The admin commands print what a shop, a customer or a provider wrote —
// a SKU, a product name, a comment, an event type, a provider's reply —
// quoted as a Go string literal (%q, strconv.Quote), never raw: a control
// character, an escape sequence or a bidirectional override then shows as
// its escape ("JKT\x1b[2J") instead of clearing or rewriting the
// operator's terminal, and a line break inside a value cannot fake a line
// of output. Their JSON goes through jsonOut.

// jsonOut is the JSON encoder of the admin commands' --json output:
// encoding/json escapes the C0 controls and U+2028/U+2029, and jsonOut
// escapes every other character that strconv would not print (DEL, the C1
// controls, the bidirectional controls, …) as \uXXXX, so what reaches a
// terminal is as inert as the quoted text output and means the same JSON.
func jsonOut(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(terminalSafe{w})
	enc.SetEscapeHTML(false)
	return enc
}

// terminalSafe escapes, in each write of a JSON encoder (one whole value
// per write), the runes jsonOut describes. encoding/json writes nothing
// but ASCII outside its strings, so every such rune is inside a string,
// where \uXXXX means the rune itself.
type terminalSafe struct{ w io.Writer }

func (t terminalSafe) Write(p []byte) (int, error) {
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n == 1 {
			out = append(out, `\ufffd`...) // never from encoding/json, which writes valid UTF-8
		} else if r >= utf8.RuneSelf && strconv.IsPrint(r) || r < 0x7f {
			out = append(out, p[i:i+n]...)
		} else if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = fmt.Appendf(out, `\u%04x\u%04x`, r1, r2)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
