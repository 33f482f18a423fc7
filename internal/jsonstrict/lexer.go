package jsonstrict

import (
	"encoding/json"
	"io"
)

// lexer reads the tokens of a JSON text in valid UTF-8 that json.Valid
// has accepted as json.Decoder.Token reads them (numbers as json.Number),
// several times faster: with the syntax known to be right, it only has to
// find where each token ends, and a string without escapes is copied
// straight from the input. Separators (',' and ':') are passed over.
type lexer struct {
	data []byte
	pos  int
}

// Token returns the next token, or io.EOF after the last.
func (l *lexer) Token() (json.Token, error) {
	l.separators()
	if l.pos >= len(l.data) {
		return nil, io.EOF
	}
	switch c := l.data[l.pos]; c {
	case '{', '}', '[', ']':
		l.pos++
		return json.Delim(c), nil
	case '"':
		return l.str()
	case 't':
		l.pos += len("true")
		return true, nil
	case 'f':
		l.pos += len("false")
		return false, nil
	case 'n':
		l.pos += len("null")
		return nil, nil
	}
	start := l.pos
	l.scalarEnd()
	return json.Number(l.data[start:l.pos]), nil
}

// More reports whether the array or object being read has another
// element.
func (l *lexer) More() bool {
	l.separators()
	return l.pos < len(l.data) && l.data[l.pos] != ']' && l.data[l.pos] != '}'
}

// skipValue passes over the next value whole.
func (l *lexer) skipValue() {
	l.separators()
	switch l.data[l.pos] {
	case '"':
		l.pos = l.stringEnd()
	case '{', '[':
		l.pos++
		l.skipRest()
	default:
		l.scalarEnd()
	}
}

// skipRest passes over the rest of the array or object whose opening
// bracket was just read.
func (l *lexer) skipRest() {
	for depth := 1; depth > 0; {
		switch l.data[l.pos] {
		case '"':
			l.pos = l.stringEnd()
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		l.pos++
	}
}

func (l *lexer) separators() {
	for l.pos < len(l.data) {
		switch l.data[l.pos] {
		case ' ', '\t', '\n', '\r', ',', ':':
			l.pos++
		default:
			return
		}
	}
}

// scalarEnd moves to the end of a number.
func (l *lexer) scalarEnd() {
	for l.pos < len(l.data) {
		switch l.data[l.pos] {
		case ' ', '\t', '\n', '\r', ',', ']', '}':
			return
		}
		l.pos++
	}
}

// stringEnd returns the position after the string that starts at pos.
func (l *lexer) stringEnd() int {
	for i := l.pos + 1; ; i++ {
		switch l.data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// str reads a string; one with escapes is decoded as encoding/json
// decodes it (surrogate pairs, U+FFFD for lone surrogates).
func (l *lexer) str() (json.Token, error) {
	start, end := l.pos, l.stringEnd()
	l.pos = end
	raw := l.data[start:end]
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' {
			var s string
			err := json.Unmarshal(raw, &s)
			return s, err
		}
	}
	return string(raw[1 : len(raw)-1]), nil
}
