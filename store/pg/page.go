package pg

import (
	"context"
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

// Keyset returns the SQL condition and its two arguments that select the
// rows after p.After; the placeholders are numbered from n.
func (p Page) Keyset(n int) (cond string, args []any) {
	if p.After == nil {
		return "TRUE", nil
	}
	return "(created_at, id) < ($" + strconv.Itoa(n) + ", $" + strconv.Itoa(n+1) + ")", []any{p.After.CreatedAt, p.After.ID}
}

// Trim cuts a result fetched with limit+1 rows to limit and returns the
// cursor of the next page, if there is one.
func Trim[T any](rows []T, limit int, pos func(T) Cursor) ([]T, *Cursor) {
	if len(rows) <= limit {
		return rows, nil
	}
	rows = rows[:limit]
	c := pos(rows[len(rows)-1])
	return rows, &c
}

// PageLimit is p.Limit within 1–200 (default 50); the API validates the
// client's value, this only guards other callers.
func PageLimit(p Page) int {
	switch {
	case p.Limit <= 0:
		return 50
	case p.Limit > 200:
		return 200
	}
	return p.Limit
}

// Where builds the WHERE clause of a list query: account first, then
// filters, then the keyset position, with numbered placeholders.
type Where struct {
	conds []string
	args  []any
}

// NewWhere starts the clause of one account's rows.
func NewWhere(accountID string) *Where {
	return &Where{conds: []string{"account_id = $1"}, args: []any{accountID}}
}

// Add appends "expr $n" with arg as $n; expr ends in an operator.
func (w *Where) Add(expr string, arg any) {
	w.args = append(w.args, arg)
	w.conds = append(w.conds, expr+"$"+strconv.Itoa(len(w.args)))
}

// Cond appends a condition that takes no argument.
func (w *Where) Cond(cond string) { w.conds = append(w.conds, cond) }

// Arg adds an argument for a condition of the caller's and returns its
// placeholder.
func (w *Where) Arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

// Page completes a list query: filters, keyset position, newest-first
// order and a limit one above the page size, so Trim can tell whether a
// next page exists.
func (w *Where) Page(selectFrom string, p Page) (string, []any) {
	cond, kargs := p.Keyset(len(w.args) + 1)
	args := append(w.args, kargs...)
	return selectFrom + ` WHERE ` + strings.Join(append(w.conds, cond), " AND ") +
		` ORDER BY created_at DESC, id DESC LIMIT ` + strconv.Itoa(PageLimit(p)+1), args
}

// SelectPage runs the list query of w for page p (Page) on q into rows,
// cuts them to the page (Trim) and returns the next page's cursor, pos
// being a row's position. It is the one place where the extra row the
// query asks for and the cut agree.
func SelectPage[T any](ctx context.Context, q Queryer, rows *[]T, w *Where, selectFrom string, p Page,
	pos func(T) Cursor) (*Cursor, error) {
	query, args := w.Page(selectFrom, p)
	if err := q.SelectContext(ctx, rows, query, args...); err != nil {
		return nil, Translate(err)
	}
	var next *Cursor
	*rows, next = Trim(*rows, PageLimit(p), pos)
	return next, nil
}
