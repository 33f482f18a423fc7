package console

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
)

// csrfField is the hidden field of every form that changes something.
const csrfField = "csrf_token"

// maxForm bounds a form's body: the longest is a template's, well below.
const maxForm = 256 << 10

// ValidCSRF reports whether the request's form carries the session's
// token. Compared in constant time; an empty token never matches.
func ValidCSRF(r *http.Request, token string) bool {
	r.Body = http.MaxBytesReader(nil, r.Body, maxForm)
	if err := r.ParseForm(); err != nil || token == "" {
		return false
	}
	got := r.PostForm.Get(csrfField)
	return subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// fieldError is a problem with one field of a form, shown beside it and
// in the error summary at the top that links to it.
type fieldError struct {
	Field string // the field's id
	Text  string // the message, already in the reader's language
}

// fieldErrors collects the problems of a form.
type fieldErrors []fieldError

func (e *fieldErrors) add(field, text string) { *e = append(*e, fieldError{field, text}) }

// For is the message of one field, "" when it is fine.
func (e fieldErrors) For(field string) string {
	for _, f := range e {
		if f.Field == field {
			return f.Text
		}
	}
	return ""
}

// formInt reads an integer field; ok is false when it is not one.
func formInt(v string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	return n, err == nil
}
