// Package apiwire is what the API's handlers put on the wire, shared by
// apiserver and the packages whose routes it mounts (templateapi,
// webhookapi, reviewapi, …): JSON answers and the timestamps, lists and
// rating summaries in them, the ids of a path, and the errors whose
// status and text a client may see — field errors, a status with its
// text, the resource a store error is about. It writes no problem answer:
// apiserver's fail is the one place that turns an error into one.
package apiwire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/touchpoint/touchpoint/store/pg"
)

// WriteJSON answers with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // a failed write means the client is gone
}

// Timestamp is written as ISO 8601 UTC with exactly three fractional
// digits: 2026-11-22T06:00:00.000Z.
type Timestamp time.Time

const timestampLayout = "2006-01-02T15:04:05.000Z"

func (t Timestamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(timestampLayout) + `"`), nil
}

// List is the shape of every list answer.
type List[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// NewList is the list of rows, each converted, with the cursor of the
// next page.
func NewList[S, T any](rows []S, next *pg.Cursor, convert func(S) T) List[T] {
	l := List[T]{Items: make([]T, len(rows))} // [] rather than null when empty
	for i, row := range rows {
		l.Items[i] = convert(row)
	}
	if next != nil {
		c := next.Encode()
		l.NextCursor = &c
	}
	return l
}

// PathID returns the {id} of the path if it is prefix-<lowercase uuid>;
// anything else is answered 404 without asking the database.
func PathID(r *http.Request, prefix, kind string) (string, error) {
	id := mux.Vars(r)["id"]
	if !pg.ValidID(prefix, id) {
		return "", Errorf(http.StatusNotFound, "%s not found", kind)
	}
	return id, nil
}

// Error is an error whose status and text the client may see.
type Error struct {
	Status int
	Detail string
}

// Errorf is an Error of status with the text of format.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Detail: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Detail }

// HTTPStatus is the status of the answer.
func (e *Error) HTTPStatus() int { return e.Status }

// FieldError is one mistake of a request: a dotted, indexed path into it
// (customer.email, products[2].url, or a query parameter's name) and what
// is wrong with it.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Invalid collects the mistakes of a request; as an error it is a 400
// listing them.
type Invalid []FieldError

// Check adds the mistake msg of field, unless msg is "".
func (fe *Invalid) Check(field, msg string) {
	if msg != "" {
		*fe = append(*fe, FieldError{Field: field, Message: msg})
	}
}

// Err is fe as an error, or nil when there is no mistake.
func (fe Invalid) Err() error {
	if len(fe) > 0 {
		return fe
	}
	return nil
}

func (fe Invalid) Error() string {
	if len(fe) == 0 {
		return "the request is invalid"
	}
	return fe[0].Field + ": " + fe[0].Message
}

// Detail is the one line a 400 says of fe: its first mistake, and how
// many more there are, so that a client that shows only one line still
// learns what to fix first.
func (fe Invalid) Detail() string {
	detail := fe.Error()
	if n := len(fe) - 1; n == 1 {
		detail += " (and 1 more error)"
	} else if n > 1 {
		detail += fmt.Sprintf(" (and %d more errors)", n)
	}
	return detail
}

// OneOf is the mistake of v unless it is one of allowed: "" when it is.
func OneOf[S ~string](v S, allowed ...S) string {
	if slices.Contains(allowed, v) {
		return ""
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return "must be one of: " + strings.Join(names, ", ")
}

// Subject says which resource a store error concerns, so that the API
// can word the 404 or 409 for the client. It does not change the status.
type Subject struct {
	Kind, Name string // "event type", its name for a 409
	Err        error
}

func (e *Subject) Error() string { return e.Kind + ": " + e.Err.Error() }
func (e *Subject) Unwrap() error { return e.Err }

// About is err, concerning a resource of kind (named name, for a 409).
func About(kind, name string, err error) error { return &Subject{Kind: kind, Name: name, Err: err} }

// Unprocessable is a 422 about one field: the request is well formed,
// but what it names cannot be done (a suppressed address, an unknown
// event type).
type Unprocessable FieldError

func (e *Unprocessable) Error() string { return e.Field + ": " + e.Message }

// API is what a package whose routes the API mounts asks of it: the
// account and the client of the caller, the strict reading of a JSON
// body, and the one place that answers an error.
type API interface {
	AccountID(r *http.Request) string
	ClientID(r *http.Request) string
	// DecodeJSON reads the body into dst, a pointer to a struct, with the
	// checks the API gives every JSON body.
	DecodeJSON(w http.ResponseWriter, r *http.Request, dst any) error
	// Fail answers err as the API answers every error.
	Fail(w http.ResponseWriter, r *http.Request, err error)
}
