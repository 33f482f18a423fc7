// Package jsonstrict decodes a JSON object into a Go struct the way
// encoding/json does, after checking it against the struct's type more
// strictly than encoding/json, because clients of an API need to hear
// about their mistakes:
//
//   - keys must match the json tags exactly (encoding/json ignores case);
//     an unknown key is named with a did-you-mean hint;
//   - a key may appear only once in an object (encoding/json keeps the last);
//   - each value must have the field's JSON type; integers must be whole
//     and in range; strings may not contain NUL (PostgreSQL rejects it);
//   - null is accepted for pointers, slices and maps, where it means
//     "absent", and for Optional fields tagged nullable:"true", where it
//     means "remove" (JSON merge patch); elsewhere it is an error;
//   - fields tagged required:"true" must be present and not null;
//   - a ReadOnly field is rejected by name;
//   - nothing may follow the top-level object.
//
// A text that is not one JSON object is a *SyntaxError, found at once.
// Otherwise every field error is collected with its path (customer.email,
// products[2].url, metadata["a b"]) into one FieldErrors. The package
// knows nothing of where the text came from: its caller reads it (bounded)
// and turns these errors into its own answers.
package jsonstrict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"
)

// MaxFieldErrors bounds the field errors collected for one text: a
// hostile text must not make an error list many times its own size.
const MaxFieldErrors = 50

// FieldError is one mistake in a field: its dotted, indexed path
// (customer.email, products[2].url) and what is wrong with it.
type FieldError struct {
	Field   string
	Message string
}

// FieldErrors are the mistakes found in the fields of a well-formed
// object, in the order met, at most MaxFieldErrors of them.
type FieldErrors []FieldError

func (fe FieldErrors) Error() string {
	if len(fe) == 0 {
		return "jsonstrict: no field errors"
	}
	msg := fe[0].Field + ": " + fe[0].Message
	if len(fe) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(fe)-1)
	}
	return msg
}

// SyntaxError says why a text is not one JSON object the destination can
// hold: it is empty, not UTF-8, not JSON, another kind of value, followed
// by more data, or of a shape that a type decoding itself refused.
type SyntaxError struct {
	// Offset is the byte at which the error was found; -1 when the error
	// is about the text as a whole.
	Offset int64
	words  func(subject string) string
}

// Message words the error for a reader who knows the text as subject
// ("the body", "the event"): "the body is not valid UTF-8".
func (e *SyntaxError) Message(subject string) string { return e.words(subject) }

func (e *SyntaxError) Error() string { return "jsonstrict: " + e.Message("the text") }

func wholeTextError(format string) *SyntaxError {
	return &SyntaxError{Offset: -1, words: func(subject string) string { return fmt.Sprintf(format, subject) }}
}

func offsetError(offset int64, msg string) *SyntaxError {
	return &SyntaxError{Offset: offset, words: func(string) string { return msg }}
}

// Decode unmarshals data into dst, a pointer to a struct, after the
// checks of the package comment.
func Decode(data []byte, dst any) error {
	if err := checkSyntax(data); err != nil {
		return err
	}
	return DecodeValid(data, dst)
}

// DecodeValid is Decode for data already known to be JSON in valid UTF-8,
// such as an element that Scan returned. It skips the syntax check, which
// is a pass over the whole text; given data that is not valid JSON it may
// panic.
func DecodeValid(data []byte, dst any) error {
	if _, err := walk(data, reflect.TypeOf(dst).Elem()); err != nil {
		return err
	}
	if err := json.Unmarshal(data, dst); err != nil {
		// The walk accepts only what Unmarshal can store, except values of
		// types that decode themselves; their errors land here.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return FieldErrors{{Field: te.Field, Message: "has an invalid value"}}
		}
		return wholeTextError("%s does not match the expected shape")
	}
	return nil
}

// Scan checks data as Decode would decode it into a T, a struct type,
// without unmarshalling it, and returns the elements of the arrays of
// json.RawMessage it met, in order, unread: a caller decodes each of them
// on its own with DecodeValid, so that each gets its own errors, without
// a second pass over the whole text.
func Scan[T any](data []byte) ([]json.RawMessage, error) {
	if err := checkSyntax(data); err != nil {
		return nil, err
	}
	wk, err := walk(data, reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	return wk.raws, nil
}

// checkSyntax refuses a text that is empty, not UTF-8 or not JSON.
func checkSyntax(data []byte) error {
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return wholeTextError("%s is empty; send a JSON object")
	case !utf8.Valid(data):
		return wholeTextError("%s is not valid UTF-8")
	case !json.Valid(data):
		return syntaxProblem(data)
	}
	return nil
}

// syntaxProblem says what makes data, which json.Valid rejected, not a
// JSON object: its first syntax error, or what follows the object.
func syntaxProblem(data []byte) *SyntaxError {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err == nil && tok != json.Delim('{') {
		return notAnObject()
	}
	for depth := 1; err == nil && depth > 0; {
		if tok, err = dec.Token(); err == nil {
			switch tok {
			case json.Delim('{'), json.Delim('['):
				depth++
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
		}
	}
	if err != nil {
		return malformed(err, dec)
	}
	return offsetError(dec.InputOffset(), fmt.Sprintf("unexpected data after the JSON object at byte %d", dec.InputOffset()))
}

func malformed(err error, dec *json.Decoder) *SyntaxError {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return offsetError(se.Offset, fmt.Sprintf("malformed JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: ")))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e := wholeTextError("malformed JSON: %s ends in the middle of a value")
		e.Offset = dec.InputOffset()
		return e
	}
	return offsetError(dec.InputOffset(), fmt.Sprintf("malformed JSON at byte %d", dec.InputOffset()))
}

func notAnObject() *SyntaxError { return wholeTextError("%s must be a JSON object") }
