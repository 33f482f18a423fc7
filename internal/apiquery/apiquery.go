// Package apiquery reads the query string of an API request strictly:
// only known names, each at most once, UTF-8 text without NUL; an empty
// value counts as absent, so forms can send every field. Mistakes collect
// as field errors named after the parameter, and Err returns them as one
// *Error, which the API answers 400 with. Beside the generic reading it
// holds the readers that several routes share: a list's page (limit and
// cursor), a rating, a product key, a language, an id, a boolean, a
// time. It knows no route and
// writes no answer.
package apiquery

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Page sizes of list endpoints.
const (
	defaultLimit = 50
	maxLimit     = 200
)

// maxKey bounds a product key filter: as long as the API's text fields
// of an event (1024 bytes).
const maxKey = 1024

// Query reads a list's query parameters strictly: only known names, each
// at most once. An empty value counts as absent, so forms can send every
// field. Errors collect as field errors named after the parameter.
type Query struct {
	values    url.Values
	malformed bool
	errs      []FieldError
}

// FieldError is one mistake of a query parameter: its name and what is
// wrong with it.
type FieldError struct {
	Field   string
	Message string
}

// Error is a query string refused: Malformed when it is no query string
// at all, else the mistakes of its parameters, in the order found.
type Error struct {
	Malformed bool
	Fields    []FieldError
}

func (e *Error) Error() string {
	if e.Malformed {
		return "the query string is malformed"
	}
	msg := "the query string is invalid"
	if len(e.Fields) > 0 {
		msg = e.Fields[0].Field + ": " + e.Fields[0].Message
		if len(e.Fields) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(e.Fields)-1)
		}
	}
	return msg
}

// Parse reads the query of r, whose parameters may be known and the
// page's limit and cursor.
func Parse(r *http.Request, known ...string) *Query {
	q := &Query{}
	var err error
	if q.values, err = url.ParseQuery(r.URL.RawQuery); err != nil {
		q.malformed = true
		return q
	}
	known = append(known, "limit", "cursor")
	for _, name := range slices.Sorted(maps.Keys(q.values)) {
		switch v := q.values[name]; {
		case !slices.Contains(known, name):
			q.Fail(name, UnknownParameter(name, known))
		case len(v) > 1:
			q.Fail(name, "must be given at most once")
		case !utf8.ValidString(v[0]) || strings.IndexByte(v[0], 0) >= 0:
			// PostgreSQL would refuse such text; say so before asking it.
			q.Fail(name, "must be UTF-8 text without NUL characters")
		}
	}
	return q
}

// Fail records that parameter name is wrong, in the words msg.
func (q *Query) Fail(name, msg string) {
	q.errs = append(q.errs, FieldError{Field: name, Message: msg})
}

// Get is the value of parameter name, "" when absent.
func (q *Query) Get(name string) string { return q.values.Get(name) }

// Has reports whether parameter name was given, empty or not.
func (q *Query) Has(name string) bool { return q.values.Has(name) }

// Page reads limit (1–200, default 50) and cursor; a cursor must have
// been issued by a list of the same resource (its id has prefix).
func (q *Query) Page(prefix string) pg.Page {
	return q.PageOf(func(id string) bool { return pg.ValidID(prefix, id) })
}

// PageOf is Page for a list whose cursor positions pass valid.
func (q *Query) PageOf(valid func(id string) bool) pg.Page {
	p := pg.Page{Limit: defaultLimit}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			q.Fail("limit", "must be an integer from 1 to 200")
		} else {
			p.Limit = n
		}
	}
	if v := q.Get("cursor"); v != "" {
		c, err := pg.DecodeCursor(v)
		if err != nil || !valid(c.ID) {
			q.Fail("cursor", "is not a cursor of this list; use the nextCursor of a previous page")
		} else {
			p.After = &c
		}
	}
	return p
}

// NoPage refuses limit and cursor, which Parse admits for lists, on an
// answer that is not one.
func (q *Query) NoPage() {
	for _, name := range []string{"limit", "cursor"} {
		if q.values.Has(name) {
			q.Fail(name, "is not a known query parameter: this answer is not a list")
		}
	}
}

// Rating reads a rating filter, 1–5; 0 when absent.
func (q *Query) Rating(name string) int {
	v := q.Get(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || !review.ValidRating(n) {
		q.Fail(name, "must be an integer from 1 to 5")
		return 0
	}
	return n
}

// ProductKey reads a product key filter (sku, gtin, mpn): matched
// exactly, at most as long as an event's text fields.
func (q *Query) ProductKey(name string) string {
	v := q.Get(name)
	if len(v) > maxKey {
		q.Fail(name, "must be at most 1024 bytes")
		return ""
	}
	return v
}

// OneProductKey reads the product a query names by exactly one of sku,
// gtin and mpn; the zero key (and a failure) when it names none or more.
func (q *Query) OneProductKey() review.ProductKey {
	var keys []review.ProductKey
	for _, k := range review.KeyKinds() {
		if v := q.ProductKey(string(k)); v != "" {
			keys = append(keys, review.ProductKey{Kind: k, Value: v})
		}
	}
	if len(keys) != 1 {
		if len(q.errs) == 0 {
			q.Fail("sku", "name the product by exactly one of sku, gtin and mpn")
		}
		return review.ProductKey{}
	}
	return keys[0]
}

// Locale reads a language parameter of the public endpoints: a locale
// such as "de" or "de_AT" (also "de-AT"), at most 35 characters.
func (q *Query) Locale(name string) string {
	v := q.Get(name)
	if v == "" {
		return ""
	}
	if len(v) > 35 || strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) >= 0 {
		q.Fail(name, `must be a language such as "de" or "de_AT"`)
		return ""
	}
	return strings.ReplaceAll(v, "-", "_")
}

// Err is the query's refusal (*Error), or nil when it is good.
func (q *Query) Err() error {
	if q.malformed {
		return &Error{Malformed: true}
	}
	if len(q.errs) > 0 {
		return &Error{Fields: q.errs}
	}
	return nil
}

// UnknownParameter says that name is not one of known, with a
// did-you-mean hint when one of them is close.
func UnknownParameter(name string, known []string) string {
	msg := "is not a known query parameter"
	if hint := jsonstrict.Suggest(name, known); hint != "" {
		return msg + "; did you mean " + strconv.Quote(hint) + "?"
	}
	return msg
}

// Bool reads "true" or "false".
func (q *Query) Bool(name string) *bool {
	switch q.Get(name) {
	case "":
		return nil
	case "true":
		return new(true)
	case "false":
		return new(false)
	}
	q.Fail(name, `must be "true" or "false"`)
	return nil
}

// ID reads a resource id filter; a malformed one is an error rather than
// an empty list, because it is certainly a mistake.
func (q *Query) ID(name, prefix string) string {
	v := q.Get(name)
	if v != "" && !pg.ValidID(prefix, v) {
		q.Fail(name, "must be an id of the form "+prefix+"-<uuid>")
		return ""
	}
	return v
}

// Time reads an RFC 3339 time.
func (q *Query) Time(name string) time.Time {
	v := q.Get(name)
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		q.Fail(name, "must be an RFC 3339 timestamp such as 2026-11-22T06:00:00.000Z")
	}
	return t
}
