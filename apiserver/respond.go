package apiserver

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gorilla/mux"

	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/store"
)

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // a failed write means the client is gone
}

// timestamp is written as ISO 8601 UTC with exactly three fractional
// digits: 2026-11-22T06:00:00.000Z.
type timestamp time.Time

const timestampLayout = "2006-01-02T15:04:05.000Z"

func (t timestamp) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(timestampLayout) + `"`), nil
}

// list is the shape of every list answer.
type list[T any] struct {
	Items      []T     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

func newList[S, T any](rows []S, next *store.Cursor, convert func(S) T) list[T] {
	l := list[T]{Items: make([]T, len(rows))} // [] rather than null when empty
	for i, row := range rows {
		l.Items[i] = convert(row)
	}
	if next != nil {
		c := next.Encode()
		l.NextCursor = &c
	}
	return l
}

// pathID returns the {id} of the path if it is prefix-<lowercase uuid>;
// anything else is answered 404 without asking the database.
func pathID(r *http.Request, prefix, kind string) (string, error) {
	id := mux.Vars(r)["id"]
	if !store.ValidID(prefix, id) {
		return "", newError(http.StatusNotFound, "%s not found", kind)
	}
	return id, nil
}

// Page sizes of list endpoints.
const (
	defaultLimit = 50
	maxLimit     = 200
)

// query reads a list's query parameters strictly: only known names, each
// at most once. An empty value counts as absent, so forms can send every
// field. Errors collect as field errors named after the parameter.
type query struct {
	values    url.Values
	malformed bool
	errs      []fieldError
}

func parseQuery(r *http.Request, known ...string) *query {
	q := &query{}
	var err error
	if q.values, err = url.ParseQuery(r.URL.RawQuery); err != nil {
		q.malformed = true
		return q
	}
	known = append(known, "limit", "cursor")
	for _, name := range slices.Sorted(maps.Keys(q.values)) {
		switch v := q.values[name]; {
		case !slices.Contains(known, name):
			q.fail(name, unknownParameter(name, known))
		case len(v) > 1:
			q.fail(name, "must be given at most once")
		case !utf8.ValidString(v[0]) || strings.IndexByte(v[0], 0) >= 0:
			// PostgreSQL would refuse such text; say so before asking it.
			q.fail(name, "must be UTF-8 text without NUL characters")
		}
	}
	return q
}

func (q *query) fail(name, msg string) {
	q.errs = append(q.errs, fieldError{Field: name, Message: msg})
}

func (q *query) get(name string) string { return q.values.Get(name) }

// page reads limit (1–200, default 50) and cursor; a cursor must have
// been issued by a list of the same resource (its id has prefix).
func (q *query) page(prefix string) store.Page {
	return q.pageOf(func(id string) bool { return store.ValidID(prefix, id) })
}

// pageOf is page for a list whose cursor positions pass valid.
func (q *query) pageOf(valid func(id string) bool) store.Page {
	p := store.Page{Limit: defaultLimit}
	if v := q.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			q.fail("limit", "must be an integer from 1 to 200")
		} else {
			p.Limit = n
		}
	}
	if v := q.get("cursor"); v != "" {
		c, err := store.DecodeCursor(v)
		if err != nil || !valid(c.ID) {
			q.fail("cursor", "is not a cursor of this list; use the nextCursor of a previous page")
		} else {
			p.After = &c
		}
	}
	return p
}

// boolean reads "true" or "false".
func (q *query) boolean(name string) *bool {
	switch q.get(name) {
	case "":
		return nil
	case "true":
		return new(true)
	case "false":
		return new(false)
	}
	q.fail(name, `must be "true" or "false"`)
	return nil
}

// id reads a resource id filter; a malformed one is an error rather than
// an empty list, because it is certainly a mistake.
func (q *query) id(name, prefix string) string {
	v := q.get(name)
	if v != "" && !store.ValidID(prefix, v) {
		q.fail(name, "must be an id of the form "+prefix+"-<uuid>")
		return ""
	}
	return v
}

// timestamp reads an RFC 3339 time.
func (q *query) timestamp(name string) time.Time {
	v := q.get(name)
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		q.fail(name, "must be an RFC 3339 timestamp such as 2026-11-22T06:00:00.000Z")
	}
	return t
}

func (q *query) err() error {
	if q.malformed {
		return badRequest("the query string is malformed")
	}
	if len(q.errs) > 0 {
		return invalid(q.errs...)
	}
	return nil
}

func unknownParameter(name string, known []string) string {
	msg := "is not a known query parameter"
	if hint := jsonstrict.Suggest(name, known); hint != "" {
		return msg + "; did you mean " + strconv.Quote(hint) + "?"
	}
	return msg
}
