package apiserver

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/touchpoint/touchpoint/internal/apiquery"
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

// query is the strict reader of a query string (apiquery) with the
// readers only the API's own routes use.
type query struct{ *apiquery.Query }

func parseQuery(r *http.Request, known ...string) *query {
	return &query{apiquery.Parse(r, known...)}
}

// boolean reads "true" or "false".
func (q *query) boolean(name string) *bool {
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

// id reads a resource id filter; a malformed one is an error rather than
// an empty list, because it is certainly a mistake.
func (q *query) id(name, prefix string) string {
	v := q.Get(name)
	if v != "" && !store.ValidID(prefix, v) {
		q.Fail(name, "must be an id of the form "+prefix+"-<uuid>")
		return ""
	}
	return v
}

// timestamp reads an RFC 3339 time.
func (q *query) timestamp(name string) time.Time {
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
