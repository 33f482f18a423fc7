package schema_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/text"
)

// hostile is text as it could be stored before package text decided what
// each field may hold: C0 controls (line breaks, a tab, an escape
// sequence), DEL, C1 controls, the Unicode line separator, bidirectional
// overrides and isolates, invisible characters (zero-width space,
// byte-order mark, soft hyphen, a direction mark, a tag), white space
// other than the space, spaces at the ends and in a row, and markup that
// stays.
const hostile = "  \t<b>Zoë & \"Co\"</b>\x01\x07\x1b[2J\x7f\u0085\u009b\u2028 Rain\u202E\u2066jacket\u2069\u202C" +
	"\u200b\ufeff\u00ad\u200e\U000E0001\u00a0\u3000 \r\nline  two\v\f\n "

// TestCleanStoredText: text stored the old way in every column the
// registry gives a kind (and in every string of its JSON documents) is,
// after the migration, exactly text.Clean of its kind, and text stored
// clean is not touched.
func TestCleanStoredText(t *testing.T) {
	t.Parallel()
	kinds := map[string]text.Kind{}
	for _, k := range allKinds {
		c := text.Clean(k, hostile)
		require.NotContains(t, kinds, c, "each kind cleans the hostile text its own way, so a column cleaned as another kind fails")
		kinds[c] = k
	}
	ctx := context.Background()
	version := cleaningVersion(t)

	t.Run("old text is cleaned", func(t *testing.T) {
		t.Parallel()
		db := migratedTo(t, version-1)
		cols := plant(t, db, func(c schema.Column, doc any) any {
			if doc != nil {
				return doc
			}
			return hostile
		})
		_, err := schema.MigrateTo(ctx, db, version)
		require.NoError(t, err)
		for key, c := range cols {
			for _, got := range values(t, db, key) {
				if c.Fields == nil {
					assert.Equal(t, text.Clean(c.Kind, hostile), got, "%s is text.Clean of its kind (%d)", key, c.Kind)
					continue
				}
				var doc any
				require.NoError(t, json.Unmarshal([]byte(got), &doc), key)
				assert.Equal(t, cleanDoc(c, documents[key](), nil), doc, "%s: every string is text.Clean of its path's kind", key)
			}
		}

		// The kinds of some fields, spelled out.
		var event map[string]any
		require.NoError(t, json.Unmarshal([]byte(values(t, db, "events.payload")[0]), &event))
		customer, product := event["customer"].(map[string]any), event["products"].([]any)[0].(map[string]any)
		assert.Equal(t, text.Clean(text.Name, hostile), customer["firstName"])
		assert.Equal(t, text.Clean(text.Multiline, hostile), customer["address"])
		assert.Equal(t, text.Clean(text.Identifier, hostile), product["sku"])
		assert.Equal(t, text.Clean(text.URL, hostile), product["imageUrl"])
		assert.Equal(t, text.Clean(text.Name, hostile), product["categories"].([]any)[1])
		assert.Equal(t, text.Clean(text.Multiline, hostile), event["metadata"].(map[string]any)["gift\u202Enote"],
			"member names stay as they are")
		var content map[string]any
		require.NoError(t, json.Unmarshal([]byte(values(t, db, "message_templates.content")[0]), &content))
		assert.Equal(t, text.Clean(text.Name, hostile), content["subject"])
		assert.Equal(t, text.Clean(text.Multiline, hostile), content["body"])
		var delivery map[string]any
		require.NoError(t, json.Unmarshal([]byte(values(t, db, "webhook_deliveries.payload")[0]), &delivery))
		data := delivery["data"].(map[string]any)
		assert.Equal(t, text.Clean(text.Identifier, hostile), data["customerReference"])
		assert.Equal(t, text.Clean(text.Multiline, hostile), data["products"].([]any)[0].(map[string]any)["comment"])
		assert.Equal(t, 4.0, data["rating"], "a number stays a number")
		assert.Equal(t, text.Clean(text.Diagnostic, hostile), values(t, db, "send_attempts.detail")[0])
	})

	t.Run("clean text is not touched", func(t *testing.T) {
		t.Parallel()
		db := migratedTo(t, version-1)
		cols := plant(t, db, func(c schema.Column, doc any) any {
			if doc != nil {
				return cleanDoc(c, doc, nil)
			}
			return text.Clean(c.Kind, hostile)
		})
		before := rowVersions(t, db, cols)
		applied, err := schema.MigrateTo(ctx, db, version)
		require.NoError(t, err)
		assert.Equal(t, []string{cleaningName(t)}, applied, "nothing kept, nothing to tell")
		assert.Equal(t, before, rowVersions(t, db, cols), "no row was written")
	})

	t.Run("keys that clean to one", func(t *testing.T) {
		t.Parallel()
		db := migratedTo(t, version-1)
		plant(t, db, func(c schema.Column, doc any) any {
			if doc != nil {
				return cleanDoc(c, doc, nil)
			}
			return text.Clean(c.Kind, hostile)
		})
		db.MustExec(`INSERT INTO event_types (id, account_id, name, created_at, updated_at) VALUES
			('ety-order', 'acc-clean', 'Order', now(), now()), ('ety-order-rlo', 'acc-clean', $1, now(), now())`, "Order\u202E")
		db.MustExec(`INSERT INTO product_aggregates (account_id, key_kind, key_value, count, sum, r3, r4, r5) VALUES
			('acc-clean', 'gtin', '4006381333931', 2, 9, 0, 1, 1), ('acc-clean', 'gtin', $1, 1, 3, 1, 0, 0)`, "4006381333931\u200b")
		db.MustExec(`INSERT INTO suppressions (account_id, address, medium, reason, created_at) VALUES
			('acc-clean', 'greta@example.com', 'email', 'manual', now()), ('acc-clean', $1, 'email', 'manual', now())`,
			"greta@example.com\u200b")
		applied, err := schema.MigrateTo(ctx, db, version)
		require.NoError(t, err)
		require.Len(t, applied, 1)
		assert.Contains(t, applied[0], `event_types.name "Order\u202e"`, "the migration names what it kept")
		assert.Contains(t, applied[0], `suppressions.address of a row`)
		assert.NotContains(t, applied[0], "greta", "a customer's value is not told")
		var addresses []string
		require.NoError(t, db.Select(&addresses, `SELECT address FROM suppressions WHERE address LIKE 'greta%' ORDER BY address`))
		assert.Equal(t, []string{"greta@example.com", "greta@example.com\u200b"}, addresses)

		var names []string
		require.NoError(t, db.Select(&names, `SELECT name FROM event_types WHERE id LIKE 'ety-order%' ORDER BY id`))
		assert.Equal(t, []string{"Order", "Order\u202E"}, names, "an event type whose cleaned name another has keeps its name")
		var agg []struct {
			Value                          string `db:"key_value"`
			Count, Sum, R1, R2, R3, R4, R5 int
		}
		require.NoError(t, db.Select(&agg, `SELECT key_value, count, sum, r1, r2, r3, r4, r5 FROM product_aggregates
			WHERE key_kind = 'gtin' AND account_id = 'acc-clean'`))
		require.Len(t, agg, 1, "the counts of two product keys that clean to one are one row")
		assert.Equal(t, "4006381333931", agg[0].Value)
		assert.Equal(t, []int{3, 12, 0, 0, 1, 1, 1}, []int{agg[0].Count, agg[0].Sum, agg[0].R1, agg[0].R2, agg[0].R3, agg[0].R4, agg[0].R5})
	})
}

// cleaningVersion is the version of the migration that cleans stored
// text.
func cleaningVersion(t *testing.T) int {
	t.Helper()
	ms, err := schema.Migrations()
	require.NoError(t, err)
	for _, m := range ms {
		if m.Name == cleaningName(t) {
			return m.Version
		}
	}
	t.Fatal("no migration cleans stored text")
	return 0
}

func cleaningName(t *testing.T) string {
	ms, err := schema.Migrations()
	require.NoError(t, err)
	for _, m := range ms {
		if strings.HasSuffix(m.Name, "_clean_stored_text") {
			return m.Name
		}
	}
	t.Fatal("no migration cleans stored text")
	return ""
}

// migratedTo is a fresh database migrated up to version.
func migratedTo(t *testing.T, version int) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("postgres", testdb.NewURL(t))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = schema.MigrateTo(context.Background(), db, version)
	require.NoError(t, err)
	return db
}

// plant stores one row in each table that has a column of written text,
// as the schema before the cleaning has it, then sets every such column
// (the registry's, where the database has it) to what value gives: a
// text, or a JSON document (doc is the test's document of the column).
// It returns the columns set, by "table.column".
func plant(t *testing.T, db *sqlx.DB, value func(c schema.Column, doc any) any) map[string]schema.Column {
	t.Helper()
	db.MustExec(`
		INSERT INTO accounts (id, name, created_at) VALUES ('acc-clean', 'Shop', now());
		INSERT INTO api_clients (id, account_id, name, access_group, issuer, client_id, created_at)
			VALUES ('cli-clean', 'acc-clean', 'n', 'full', 'https://issuer.example', 'c', now());
		INSERT INTO event_types (id, account_id, name, created_at, updated_at) VALUES ('ety-clean', 'acc-clean', 'n', now(), now());
		INSERT INTO channels (id, account_id, name, type, created_at, updated_at)
			VALUES ('chl-clean', 'acc-clean', 'n', 'shop', now(), now());
		INSERT INTO invite_settings (id, account_id, channel_id, event_type_id, delay, delay_from, created_at, updated_at)
			VALUES ('set-clean', 'acc-clean', 'chl-clean', 'ety-clean', 'P1D', 'event', now(), now());
		INSERT INTO message_templates (id, account_id, kind, locale, version, content, created_at, updated_at)
			VALUES ('tpl-clean', 'acc-clean', 'invite', 'en', 1, '{}', now(), now());
		INSERT INTO message_template_versions (account_id, scope, kind, locale, version, content, created_at, created_by)
			VALUES ('acc-clean', 'account', 'invite', 'en', 1, '{}', now(), 'operator');
		INSERT INTO webhook_endpoints (id, account_id, url, events, description, secret, created_at, updated_at)
			VALUES ('whe-clean', 'acc-clean', 'https://x.example/', '{review.created}', '', '\x00', now(), now());
		INSERT INTO product_aggregates (account_id, key_kind, key_value, count, sum, r5) VALUES ('acc-clean', 'sku', 's', 1, 5, 1);
		INSERT INTO events (id, account_id, event_type_id, channel_id, received_at, type, customer_email,
				transaction_reference, transaction_date, payload, invite_setting_id, delay, delay_from, updated_at)
			VALUES ('evt-clean', 'acc-clean', 'ety-clean', 'chl-clean', now(), 'n', 'e', 'r', now(), '{}', 'set-clean',
				'P1D', 'event', now());
		INSERT INTO send_attempts (event_id, kind, n, started_at) VALUES ('evt-clean', 'invite', 1, now());
		INSERT INTO mail_events (provider, provider_id, event_id, account_id, message, outcome, occurred_at, received_at)
			VALUES ('ses', 'p-clean', 'evt-clean', 'acc-clean', 'invite', 'bounced', now(), now());
		INSERT INTO reviews (id, account_id, event_id, event_type_id, channel_id, rating, comment, locale, created_at,
				updated_at, status, reply_text, reply_created_at, reply_updated_at)
			VALUES ('rev-clean', 'acc-clean', 'evt-clean', 'ety-clean', 'chl-clean', 5, '', 'en', now(), now(), 'published',
				'r', now(), now());
		INSERT INTO product_reviews (id, account_id, review_id, event_id, product_index, rating, comment, status,
				created_at, updated_at)
			VALUES ('prv-clean', 'acc-clean', 'rev-clean', 'evt-clean', 0, 4, '', 'published', now(), now());
		INSERT INTO review_history (review_id, account_id, event_id, action, status, actor, at)
			VALUES ('rev-clean', 'acc-clean', 'evt-clean', 'reported', 'published', 'operator', now());
		INSERT INTO webhook_deliveries (id, endpoint_id, account_id, type, payload, created_at, next_start_at, event_id)
			VALUES ('whd-clean', 'whe-clean', 'acc-clean', 'review.created', '{}', now(), now(), 'evt-clean');
		INSERT INTO suppressions (account_id, address, medium, reason, created_at) VALUES ('acc-clean', 'a', 'email', 'manual', now());
		INSERT INTO suppression_history (account_id, address, action, reason, by, at)
			VALUES ('acc-clean', 'a', 'added', 'manual', 'operator', now());
		INSERT INTO people (id, account_id, email, role, created_at, updated_at)
			VALUES ('usr-clean', 'acc-clean', 'p', 'owner', now(), now());
		INSERT INTO template_test_sends (id, account_id, kind, locale, masked_address, status, created_by, created_at, next_start_at)
			VALUES ('tts-clean', 'acc-clean', 'invite', 'en', 'p***', 'failed', 'usr-clean', now(), now());`)
	present := map[string]bool{}
	for _, c := range testdb.Columns(t, db) {
		present[c.Table+"."+c.Name] = true
	}
	set := map[string]schema.Column{}
	for _, tab := range schema.Tables() {
		for _, c := range tab.Columns {
			key := tab.Name + "." + c.Name
			if c.Kind == 0 || !present[key] {
				continue
			}
			var v any
			if c.Fields != nil {
				doc, ok := documents[key]
				require.True(t, ok, "the test has a document of %s to plant", key)
				raw, err := json.Marshal(value(c, doc()))
				require.NoError(t, err)
				v = string(raw)
			} else {
				v = value(c, nil)
			}
			res, err := db.Exec(`UPDATE `+pq.QuoteIdentifier(tab.Name)+` SET `+pq.QuoteIdentifier(c.Name)+` = $1`, v)
			require.NoError(t, err, key)
			n, err := res.RowsAffected()
			require.NoError(t, err)
			require.Positive(t, n, "the test plants a row in %s", tab.Name)
			set[key] = c
		}
	}
	return set
}

// documents are the JSON documents the test plants, each as it was
// stored, with hostile text in every string a shop or a customer wrote.
var documents = map[string]func() any{
	"events.payload": func() any {
		return obj(`{"customer": {"email": H, "firstName": H, "lastName": H, "address": H, "mobile": H, "reference": H},
			"type": H, "channel": {"id": "chl-clean", "type": H}, "transaction": {"reference": H, "date": "2026-11-01T10:00:00.000Z"},
			"system": H, "systemVersion": H, "defaultLocale": "en", "estimatedDeliveryDate": "2026-11-03",
			"products": [{"name": H, "sku": H, "url": H, "gtin": H, "imageUrl": H, "mpn": H, "brand": H,
				"parentProduct": {"name": H, "sku": H}, "categories": [H, H]}, {"name": "Mug"}],
			"metadata": {"note": H, "gift\u202Enote": H}}`)
	},
	"webhook_deliveries.payload": func() any {
		return obj(`{"type": "review.created", "timestamp": "2026-11-01T10:00:00.000Z", "data": {"reviewId": "rev-clean",
			"eventId": "evt-clean", "customerReference": H, "rating": 4, "comment": H, "locale": "en", "note": H,
			"reply": {"text": H, "createdAt": "2026-11-01T10:00:00.000Z"},
			"products": [{"id": "prv-clean", "sku": H, "gtin": null, "mpn": H, "rating": 4, "comment": H}]}}`)
	},
	"message_templates.content":         template,
	"message_template_versions.content": template,
}

func template() any {
	return obj(`{"subject": H, "preheader": H, "heading": H, "body": H, "buttonLabel": H, "text": H}`)
}

// obj is a JSON document with hostile in place of each H.
func obj(doc string) any {
	h, _ := json.Marshal(hostile)
	var v any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(doc, "H", string(h))), &v); err != nil {
		panic(err)
	}
	return v
}

// cleanDoc is doc with each string cleaned as the kind the registry gives
// its path.
func cleanDoc(c schema.Column, doc any, path []string) any {
	switch v := doc.(type) {
	case string:
		return text.Clean(c.KindAt(path), v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cleanDoc(c, e, append(path[:len(path):len(path)], "*"))
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = cleanDoc(c, e, append(path[:len(path):len(path)], k))
		}
		return out
	}
	return doc
}

// values are the values of a "table.column" as text.
func values(t *testing.T, db *sqlx.DB, key string) []string {
	t.Helper()
	table, col, _ := strings.Cut(key, ".")
	var out []string
	require.NoError(t, db.Select(&out, `SELECT `+pq.QuoteIdentifier(col)+`::text FROM `+pq.QuoteIdentifier(table)+
		` WHERE `+pq.QuoteIdentifier(col)+` IS NOT NULL`))
	require.NotEmpty(t, out, key)
	return out
}

// rowVersions are the physical address and the writing transaction of
// every row of the tables of cols: a row written again has others.
func rowVersions(t *testing.T, db *sqlx.DB, cols map[string]schema.Column) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for key := range cols {
		table, _, _ := strings.Cut(key, ".")
		var rows []string
		require.NoError(t, db.Select(&rows, `SELECT tableoid::text || ctid::text || xmin::text FROM `+
			pq.QuoteIdentifier(table)+` ORDER BY 1`))
		out[table] = rows
	}
	return out
}

// TestSuspectFindsWhatCleanChanges: what the cleaning looks for in
// PostgreSQL finds every text that text.Clean of the column's kind
// changes — each character that some kind removes or rewrites, between
// two letters, and the spaces that matter by where they are — in a text
// column and at every path of every JSON document of the registry.
func TestSuspectFindsWhatCleanChanges(t *testing.T) {
	t.Parallel()
	cases := []string{" a", "a ", "a  b", "a b", "\u00a0a", "a\t"}
	for r := rune(1); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := "a" + string(r) + "b"
		for _, k := range allKinds {
			if text.Clean(k, s) != s {
				cases = append(cases, s)
				break
			}
		}
	}
	require.Greater(t, len(cases), 200, "controls, bidirectional controls, format characters and white space")
	changed := func(k text.Kind) []string {
		var out []string
		for _, s := range cases {
			if text.Clean(k, s) != s {
				out = append(out, s)
			}
		}
		return out
	}
	db := testdb.New(t)
	for _, k := range allKinds {
		var missed []string
		require.NoError(t, db.Select(&missed, `SELECT v FROM unnest($1::text[]) v WHERE NOT v ~ $2`,
			pq.Array(changed(k)), schema.Suspect(k)))
		assert.Empty(t, missed, "kind %d: texts that text.Clean changes and the cleaning would not look at", k)
	}
	for _, tab := range schema.Tables() {
		for _, c := range tab.Columns {
			if c.Fields == nil {
				continue
			}
			paths := [][]string{{"not", "named"}}
			for p := range c.Fields {
				paths = append(paths, strings.Split(p, "."))
			}
			var docs []string
			for _, path := range paths {
				for _, s := range changed(c.KindAt(path)) {
					var doc any = s
					for i := len(path) - 1; i >= 0; i-- {
						if path[i] == "*" {
							doc = []any{"x", doc}
						} else {
							doc = map[string]any{path[i]: doc, "id": "x"}
						}
					}
					raw, err := json.Marshal(doc)
					require.NoError(t, err)
					docs = append(docs, string(raw))
				}
			}
			var missed []string
			require.NoError(t, db.Select(&missed, `SELECT d FROM unnest($1::text[]) d WHERE NOT jsonb_path_match(d::jsonb, $2::jsonpath)`,
				pq.Array(docs), schema.SuspectPath(c)))
			assert.Empty(t, missed, "%s.%s: documents with a string that text.Clean changes and the cleaning would not look at",
				tab.Name, c.Name)
		}
	}
}

var allKinds = []text.Kind{text.Name, text.Identifier, text.URL, text.Multiline, text.Diagnostic}
