package schema_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/text"
)

// TestEveryColumnIsClassified holds the registry of personal data to the
// migrated database's catalogue: every column that can hold text or
// bytes is listed once with its class, and every listed column exists.
// A migration that adds a table or a column fails here until the column
// is listed in schema/columns.go, so nothing new escapes an erasure.
func TestEveryColumnIsClassified(t *testing.T) {
	t.Parallel()
	catalogue := migratedColumns(t)
	listed := map[string]schema.Class{}
	for _, tab := range schema.Tables() {
		add := func(name string, class schema.Class) {
			key := tab.Name + "." + name
			if _, twice := listed[key]; twice {
				t.Errorf("%s is listed twice in schema/columns.go", key)
			}
			listed[key] = class
		}
		for _, c := range tab.Columns {
			add(c.Name, c.Class)
		}
		for _, name := range tab.None {
			add(name, schema.None)
		}
	}
	for key, c := range catalogue {
		if _, ok := listed[key]; !ok {
			t.Errorf("column %s (%s) is not in the registry of personal data: add it to schema/columns.go "+
				"as personal, free_text or none, so that erasing a customer reaches it", key, c.Type)
		}
	}
	for key := range listed {
		if _, ok := catalogue[key]; !ok {
			t.Errorf("schema/columns.go lists %s, which the schema does not have (or which holds neither text nor bytes)", key)
		}
	}
}

// TestRegistryTellsErasureWhatToDo: each column that may hold a
// customer's data says what an erasure does to it, in a way its type
// allows, and its table says how the customer's rows are found.
func TestRegistryTellsErasureWhatToDo(t *testing.T) {
	t.Parallel()
	catalogue := migratedColumns(t)
	text := func(c testdb.Column) bool {
		return !c.Array && slices.Contains([]string{"text", "varchar", "bpchar"}, c.Type)
	}
	for _, tab := range schema.Tables() {
		var owners []string
		for _, col := range []string{tab.Rows.Event, tab.Rows.Address, tab.Rows.AddressHash} {
			if col != "" {
				owners = append(owners, col)
			}
		}
		if len(tab.Customer()) == 0 {
			assert.Empty(t, owners, "%s holds nothing of a customer's: no rows of theirs to find", tab.Name)
			continue
		}
		require.Len(t, owners, 1, "%s: an erasure finds the customer's rows by one column", tab.Name)
		owner, ok := catalogue[tab.Name+"."+owners[0]]
		require.True(t, ok, "%s has no column %s to find the customer's rows by", tab.Name, owners[0])
		switch {
		case tab.Rows.AddressHash != "":
			assert.Equal(t, "bytea", owner.Type, "%s.%s is a hash", tab.Name, owners[0])
			fallthrough
		case tab.Rows.Address != "":
			assert.Contains(t, catalogue, tab.Name+".account_id", "%s: an address is the customer's within one account", tab.Name)
		}
		for _, c := range tab.Customer() {
			key := tab.Name + "." + c.Name
			col, ok := catalogue[key]
			require.True(t, ok, key)
			switch c.Class {
			case schema.FreeText:
				assert.Empty(t, c.Erase, "%s: free text is redacted, not %s", key, c.Erase)
				assert.True(t, text(col), "%s: free text must be a text column to be redacted (a document is personal, %s)",
					key, schema.Redact)
			case schema.Personal:
				switch c.Erase {
				case schema.SetNull:
					assert.False(t, col.NotNull, "%s is NOT NULL: %s cannot clear it", key, c.Erase)
				case schema.SetEmpty:
					assert.True(t, col.NotNull && text(col), "%s: %s is for text that may not be NULL", key, c.Erase)
				case schema.Redact:
					assert.True(t, !col.Array && (col.Type == "json" || col.Type == "jsonb"), "%s: %s is for a JSON document", key, c.Erase)
				case schema.DeleteRow:
				case schema.Keep, schema.KeepWhileSuppressed:
					assert.NotEmpty(t, tab.Rows.Address, "%s: only an address is kept, on the suppression list", key)
				default:
					t.Errorf("%s: an erasure does not know %q", key, c.Erase)
				}
			default:
				t.Errorf("%s: class %q; a column listed beside None is %s, %s or %s with a kind", key, c.Class,
					schema.Personal, schema.FreeText, schema.None)
			}
		}
	}
}

// migratedColumns are the text and byte columns of a freshly migrated
// database, by "table.column".
func migratedColumns(t *testing.T) map[string]testdb.Column {
	t.Helper()
	cols := map[string]testdb.Column{}
	for _, c := range testdb.Columns(t, testdb.New(t)) {
		cols[c.Table+"."+c.Name] = c
	}
	return cols
}

// TestRegistryKindsFitTheirColumns: a kind is given to text, a document's
// kinds to JSON, a None column beside the others has a kind (or it would
// be listed with None), and every path of a document names members.
func TestRegistryKindsFitTheirColumns(t *testing.T) {
	t.Parallel()
	catalogue := migratedColumns(t)
	for _, tab := range schema.Tables() {
		for _, c := range tab.Columns {
			key := tab.Name + "." + c.Name
			col := catalogue[key]
			json := !col.Array && (col.Type == "json" || col.Type == "jsonb")
			switch {
			case c.Class == schema.None && c.Kind == 0:
				t.Errorf("%s holds nothing of a customer's and no kind of text: list it with None", key)
			case c.Kind == 0:
				assert.Empty(t, c.Fields, "%s: fields of a document without a kind", key)
			case json:
				assert.NotEmpty(t, c.Fields, "%s: a JSON document says the kinds of its fields", key)
			default:
				assert.True(t, !col.Array && slices.Contains([]string{"text", "varchar", "bpchar"}, col.Type),
					"%s: a kind is for a text column, not %s", key, col.Type)
				assert.Empty(t, c.Fields, "%s: fields are a JSON document's", key)
			}
			for path := range c.Fields {
				for _, seg := range strings.Split(path, ".") {
					assert.NotEmpty(t, seg, "%s: path %q", key, path)
				}
			}
		}
	}
	payload := schema.Tables()
	for _, tab := range payload {
		for _, c := range tab.Columns {
			if tab.Name == "events" && c.Name == "payload" {
				assert.Equal(t, text.Identifier, c.KindAt([]string{"products", "*", "parentProduct", "sku"}))
				assert.Equal(t, text.Multiline, c.KindAt([]string{"metadata", "any key"}))
				assert.Equal(t, text.Name, c.KindAt([]string{"products", "*", "categories", "*"}), "the document's kind")
			}
		}
	}
}
