package apiquery_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/review"
)

// fields is the field errors of q's refusal, as "name: message".
func fields(t *testing.T, q *apiquery.Query) []string {
	t.Helper()
	err := q.Err()
	if err == nil {
		return nil
	}
	var e *apiquery.Error
	require.True(t, errors.As(err, &e))
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Field+": "+f.Message)
	}
	return out
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"", nil},
		{"minRating=4&locale=de", nil},
		{"minRating=&locale=", nil}, // empty is absent
		{"limit=20", nil},
		{"minrating=4", []string{`minrating: is not a known query parameter; did you mean "minRating"?`}},
		{"zzz=1", []string{"zzz: is not a known query parameter"}},
		{"locale=de&locale=fr", []string{"locale: must be given at most once"}},
		{"locale=%00", []string{"locale: must be UTF-8 text without NUL characters"}},
		{"locale=%FF", []string{"locale: must be UTF-8 text without NUL characters"}},
	} {
		q := apiquery.Parse(httptest.NewRequest("GET", "/x?"+tt.query, nil), "minRating", "locale")
		assert.Equal(t, tt.want, fields(t, q), "?%s", tt.query)
	}

	q := apiquery.Parse(httptest.NewRequest("GET", "/x?a=%zz", nil))
	var e *apiquery.Error
	require.ErrorAs(t, q.Err(), &e)
	assert.True(t, e.Malformed, "not a query string at all")
}

func TestReaders(t *testing.T) {
	t.Parallel()
	read := func(query string, fn func(q *apiquery.Query)) []string {
		q := apiquery.Parse(httptest.NewRequest("GET", "/x?"+query, nil), "minRating", "locale", "sku", "gtin", "mpn")
		fn(q)
		return fields(t, q)
	}

	assert.Nil(t, read("limit=200", func(q *apiquery.Query) { assert.Equal(t, 200, q.Page("rev").Limit) }))
	assert.Nil(t, read("", func(q *apiquery.Query) { assert.Equal(t, 50, q.Page("rev").Limit) }))
	assert.Equal(t, []string{"limit: must be an integer from 1 to 200"}, read("limit=201", func(q *apiquery.Query) { q.Page("rev") }))
	assert.Equal(t, []string{"cursor: is not a cursor of this list; use the nextCursor of a previous page"},
		read("cursor=nonsense", func(q *apiquery.Query) { q.Page("rev") }))
	assert.Equal(t, []string{"limit: is not a known query parameter: this answer is not a list"},
		read("limit=5", func(q *apiquery.Query) { q.NoPage() }))

	assert.Nil(t, read("minRating=5", func(q *apiquery.Query) { assert.Equal(t, 5, q.Rating("minRating")) }))
	assert.Equal(t, []string{"minRating: must be an integer from 1 to 5"}, read("minRating=6", func(q *apiquery.Query) { q.Rating("minRating") }))

	assert.Nil(t, read("locale=de-AT", func(q *apiquery.Query) { assert.Equal(t, "de_AT", q.Locale("locale")) }))
	assert.Equal(t, []string{`locale: must be a language such as "de" or "de_AT"`},
		read("locale=de%3BAT", func(q *apiquery.Query) { q.Locale("locale") }))

	assert.Nil(t, read("gtin=123", func(q *apiquery.Query) {
		assert.Equal(t, review.ProductKey{Kind: review.GTIN, Value: "123"}, q.OneProductKey())
	}))
	assert.Equal(t, []string{"sku: name the product by exactly one of sku, gtin and mpn"},
		read("sku=a&mpn=b", func(q *apiquery.Query) { q.OneProductKey() }))
}
