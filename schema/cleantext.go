package schema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/text"
)

// cleanStoredText cleans, once, the text stored before package text
// decided at every input what each kind of field may hold: every value of
// every column the registry gives a kind, and every string value of its
// JSON documents, becomes text.Clean of its kind. Text stored since is
// clean already and is left as it is, byte for byte.
//
// Rows are found by a regular expression that matches every text a
// cleaning could change (suspect), so a table is read only where it may
// need it; Go decides. A row whose cleaned value of a key another row of
// the key already holds keeps its value (an event type named "Order" and
// one named "Order" with an override after it; one of them is renamed by
// hand), except in product_aggregates, whose counts of the two keys are
// added up under the cleaned key. The note names the rows kept so. The
// columns are those of the registry that the database has when this
// runs.
func cleanStoredText(ctx context.Context, tx *sqlx.Tx) (string, error) {
	var present []string
	if err := tx.SelectContext(ctx, &present, `SELECT table_name || '.' || column_name FROM information_schema.columns
		WHERE table_schema = current_schema()`); err != nil {
		return "", fmt.Errorf("read columns: %w", err)
	}
	has := map[string]bool{}
	for _, c := range present {
		has[c] = true
	}
	var unique []string // the columns of a unique index
	if err := tx.SelectContext(ctx, &unique, `SELECT DISTINCT c.relname || '.' || a.attname FROM pg_index i
		JOIN pg_class c ON c.oid = i.indrelid
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY (i.indkey)
		WHERE i.indisunique AND c.relnamespace = current_schema()::regnamespace`); err != nil {
		return "", fmt.Errorf("read keys: %w", err)
	}
	keys := map[string]bool{}
	for _, c := range unique {
		keys[c] = true
	}
	var kept []string
	for _, t := range Tables() {
		var cols []Column
		for _, c := range t.Columns {
			if c.Kind != 0 && has[t.Name+"."+c.Name] {
				cols = append(cols, c)
			}
		}
		if len(cols) > 0 {
			k, err := cleanTable(ctx, tx, t.Name, cols, keys)
			if err != nil {
				return "", fmt.Errorf("clean %s: %w", t.Name, err)
			}
			kept = append(kept, k...)
		}
	}
	if len(kept) == 0 {
		return "", nil
	}
	return "kept as they were, another row holding the cleaned key: " + strings.Join(kept, "; "), nil
}

// merges say how two rows of a table whose keys clean to one become one:
// the statement inserts the row at $1, $2 (tableoid, ctid) under the
// cleaned key $3 and deletes it there.
var merges = map[string]string{
	"product_aggregates": `WITH old AS (DELETE FROM product_aggregates WHERE tableoid = $1::oid AND ctid = $2::tid RETURNING *)
		INSERT INTO product_aggregates AS t (account_id, key_kind, key_value, count, sum, r1, r2, r3, r4, r5)
		SELECT account_id, key_kind, $3, count, sum, r1, r2, r3, r4, r5 FROM old
		ON CONFLICT (account_id, key_kind, key_value) DO UPDATE SET count = t.count + EXCLUDED.count,
			sum = t.sum + EXCLUDED.sum, r1 = t.r1 + EXCLUDED.r1, r2 = t.r2 + EXCLUDED.r2, r3 = t.r3 + EXCLUDED.r3,
			r4 = t.r4 + EXCLUDED.r4, r5 = t.r5 + EXCLUDED.r5`,
}

// cleanTable cleans cols of table and names the rows it kept; keys are
// the "table.column"s of unique indexes. The rows that may need it are
// locked and rewritten by their physical address (partition and tuple),
// which the lock keeps until the transaction ends.
func cleanTable(ctx context.Context, tx *sqlx.Tx, table string, cols []Column, keys map[string]bool) (kept []string, err error) {
	read := make([]string, len(cols))
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	for i, c := range cols {
		name := pq.QuoteIdentifier(c.Name)
		read[i] = name + `::text`
		switch {
		case c.Fields != nil:
			where = append(where, `jsonb_path_match(`+name+`::jsonb, `+arg(suspectPath(c))+`::jsonpath)`)
		default:
			where = append(where, name+` ~ `+arg(suspect(c.Kind)))
		}
	}
	rows, err := tx.QueryxContext(ctx, `SELECT tableoid::text, ctid::text, `+strings.Join(read, ", ")+` FROM `+
		pq.QuoteIdentifier(table)+` WHERE `+strings.Join(where, " OR ")+` ORDER BY tableoid, ctid FOR UPDATE`, args...)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	type change struct {
		set    []string
		values []any    // tableoid, ctid, then the values of set
		before []string // what the note says of the values
		key    bool     // a column of set is a unique index's
	}
	var changes []change
	for rows.Next() {
		var part, tid string
		values := make([]*string, len(cols))
		dest := []any{&part, &tid}
		for i := range values {
			dest = append(dest, &values[i])
		}
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read: %w", err)
		}
		ch := change{values: []any{part, tid}}
		for i, c := range cols {
			if values[i] == nil {
				continue
			}
			after, err := cleanValue(c, *values[i])
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			if after != *values[i] {
				// A name is the shop's; any other value may be a
				// customer's or a secret, which no log shows.
				before := fmt.Sprintf("%s.%s of a row", table, c.Name)
				if c.Class == None && c.Kind == text.Name {
					before = fmt.Sprintf("%s.%s %q", table, c.Name, *values[i])
				}
				ch.before = append(ch.before, before)
				ch.key = ch.key || keys[table+"."+c.Name]
				ch.values = append(ch.values, after)
				ch.set = append(ch.set, fmt.Sprintf(`%s = $%d`, pq.QuoteIdentifier(c.Name), len(ch.values)))
			}
		}
		if len(ch.set) > 0 {
			changes = append(changes, ch)
		}
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	for _, ch := range changes {
		update := `UPDATE ` + pq.QuoteIdentifier(table) + ` SET ` + strings.Join(ch.set, ", ") +
			` WHERE tableoid = $1::oid AND ctid = $2::tid`
		if !ch.key {
			if _, err := tx.ExecContext(ctx, update, ch.values...); err != nil {
				return nil, err
			}
			continue
		}
		if err := keyed(ctx, tx, update, ch.values); err == nil {
			continue
		} else if !isUniqueViolation(err) {
			return nil, err
		}
		// Another row holds the cleaned key.
		if merge, ok := merges[table]; ok && len(ch.set) == 1 {
			if _, err := tx.ExecContext(ctx, merge, ch.values...); err != nil {
				return nil, fmt.Errorf("merge: %w", err)
			}
			continue
		}
		kept = append(kept, strings.Join(ch.before, ", "))
	}
	return kept, nil
}

// keyed runs an update that may collide with another row's key in a
// savepoint of its own, so that a collision leaves the transaction
// usable. Only a row of a key to be rewritten pays for it: a long
// transaction with many subtransactions would slow every reader of the
// database down.
func keyed(ctx context.Context, tx *sqlx.Tx, update string, args []any) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT clean_text`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, update, args...); err != nil {
		if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT clean_text`); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	_, err := tx.ExecContext(ctx, `RELEASE SAVEPOINT clean_text`)
	return err
}

func isUniqueViolation(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && pe.Code == "23505"
}

// cleanValue is a value of c cleaned: a text cleaned as its kind, a JSON
// document with each string value cleaned as the kind of its path (its
// member names stay). A document that needs no cleaning comes back as it
// was, byte for byte (a webhook's signature covers the bytes it sends).
func cleanValue(c Column, v string) (string, error) {
	if c.Fields == nil {
		return text.Clean(c.Kind, v), nil
	}
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return "", fmt.Errorf("decode: %w", err)
	}
	changed := false
	var walk func(v any, path []string) any
	walk = func(v any, path []string) any {
		switch v := v.(type) {
		case string:
			after := text.Clean(c.KindAt(path), v)
			changed = changed || after != v
			return after
		case []any:
			for i := range v {
				v[i] = walk(v[i], append(path, "*"))
			}
		case map[string]any:
			for k := range v {
				v[k] = walk(v[k], append(path, k))
			}
		}
		return v
	}
	doc = walk(doc, nil)
	if !changed {
		return v, nil
	}
	out, err := json.Marshal(doc)
	return string(out), err
}

// suspect is a regular expression of PostgreSQL's that matches every text
// that text.Clean of kind k changes: one holding a character that
// text.Identifier refuses (a superset of what every kind refuses or
// cleans, white space but the plain space included), or a space at
// either end or beside another, or in a URL anywhere. Its characters are
// found by asking text.Check, so the two cannot disagree.
func suspect(k text.Kind) string {
	if k == text.URL {
		return suspectChars() + "| "
	}
	return suspectChars() + "|^ | $|  "
}

var suspectChars = sync.OnceValue(func() string {
	var class strings.Builder
	from := rune(-1)
	flush := func(to rune) {
		if from >= 0 {
			class.WriteRune(from)
			if to > from {
				class.WriteByte('-')
				class.WriteRune(to)
			}
			from = -1
		}
	}
	prev := rune(0)
	for r := rune(1); r <= utf8.MaxRune; r++ { // PostgreSQL's text holds no NUL
		if !utf8.ValidRune(r) {
			continue
		}
		if text.Check(text.Identifier, string(r)) == nil {
			flush(prev)
			continue
		}
		if from < 0 {
			from = r
		}
		prev = r
	}
	flush(prev)
	return `[` + class.String() + `]`
})

// suspectPath is a JSON path predicate, true of a document of c with a
// string value that text.Clean of its kind changes: suspect of any string
// (of a document of URLs, a space anywhere), or a space in a member that
// holds a URL.
func suspectPath(c Column) string {
	lit := func(s string) string { // a JSON path string literal, escaped as JSON is
		b, _ := json.Marshal(s)
		return string(b)
	}
	p := `exists($.** ? (@.type() == "string" && @ like_regex ` + lit(suspect(c.Kind)) + `))`
	for path, k := range c.Fields {
		if k == text.URL {
			at := "$.**"
			if name := path[strings.LastIndex(path, ".")+1:]; name != "*" {
				at += "." + lit(name)
			}
			p += ` || exists(` + at + ` ? (@.type() == "string" && @ like_regex " "))`
		}
	}
	return p
}
