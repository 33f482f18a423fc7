package store

import (
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Page asks for one page of a list, newest first.
type Page struct {
	Limit int
	// After is the position of the last item of the previous page; nil for
	// the first page.
	After *Cursor
}

// Cursor is a keyset position: rows strictly older than (CreatedAt, ID)
// come next, so inserts between requests never shift a page.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}

// ErrBadCursor is returned for a cursor this service did not issue.
var ErrBadCursor = errors.New("malformed cursor")

// Encode makes the opaque string handed to clients as nextCursor.
func (c Cursor) Encode() string {
	raw := c.CreatedAt.UTC().Format(time.RFC3339Nano) + "|" + c.ID
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// DecodeCursor parses a nextCursor value.
func DecodeCursor(s string) (Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, ErrBadCursor
	}
	ts, id, ok := strings.Cut(string(raw), "|")
	if !ok || id == "" || len(id) > 320 { // an id, or an address (suppressions)
		return Cursor{}, ErrBadCursor
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return Cursor{}, ErrBadCursor
	}
	return Cursor{CreatedAt: t, ID: id}, nil
}

// keyset returns the SQL condition and its two arguments that select the
// rows after p.After; the placeholders are numbered from n.
func (p Page) keyset(n int) (cond string, args []any) {
	if p.After == nil {
		return "TRUE", nil
	}
	return "(created_at, id) < ($" + strconv.Itoa(n) + ", $" + strconv.Itoa(n+1) + ")", []any{p.After.CreatedAt, p.After.ID}
}

// trim cuts a result fetched with Limit+1 rows to Limit and returns the
// cursor of the next page, if there is one.
func trim[T any](rows []T, limit int, pos func(T) Cursor) ([]T, *Cursor) {
	if len(rows) <= limit {
		return rows, nil
	}
	rows = rows[:limit]
	c := pos(rows[len(rows)-1])
	return rows, &c
}
