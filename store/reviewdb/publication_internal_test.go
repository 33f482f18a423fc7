package reviewdb

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	Type      string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	Index     string     `json:"Index Name"`
	IndexCond string     `json:"Index Cond"`
	Filter    string     `json:"Filter"`
	Plans     []planNode `json:"Plans"`
}

func (n planNode) walk(fn func(planNode)) {
	fn(n)
	for _, c := range n.Plans {
		c.walk(fn)
	}
}

// TestPublicListByRatingUsesItsIndex: the public list filtered by
// minRating reads reviews_public in date order with the rating in the
// index condition — no sort of the matches, no filter after reading each
// row — whether the rating is common or rare, on the first page or down a
// cursor. Over 20,000 reviews of which one in forty has five stars.
func TestPublicListByRatingUsesItsIndex(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	tx, err := db.BeginTxx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `SET LOCAL session_replication_role = replica`) // no accounts, channels or events behind them
	require.NoError(t, err)
	now := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	_, err = tx.ExecContext(ctx, `INSERT INTO reviews (id, account_id, event_id, event_type_id, channel_id, rating, comment, locale,
			status, created_at, updated_at)
		SELECT 'rev-' || a || '-' || g, 'acc-' || a, 'evt-' || a || '-' || g, 'ety-1', 'chn-1',
			CASE WHEN g % 40 = 0 THEN 5 WHEN g % 7 = 0 THEN NULL ELSE 1 + g % 4 END, '', 'en', 'published',
			$1::timestamptz - g * interval '1 second', $1::timestamptz - g * interval '1 second'
		FROM generate_series(1, 20000) g, generate_series(1, 2) a`, now)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	_, err = db.ExecContext(ctx, `ANALYZE reviews`)
	require.NoError(t, err)

	deep := &pg.Cursor{CreatedAt: now.Add(-15000 * time.Second), ID: "rev-1-15000"}
	for name, c := range map[string]struct {
		f PublicReviewFilter
		p pg.Page
	}{
		"five stars, first page":     {PublicReviewFilter{MinRating: 5}, pg.Page{Limit: 20}},
		"five stars, down a cursor":  {PublicReviewFilter{MinRating: 5}, pg.Page{Limit: 20, After: deep}},
		"two stars, first page":      {PublicReviewFilter{MinRating: 2}, pg.Page{Limit: 50}},
		"one star (the JSON-LD's)":   {PublicReviewFilter{MinRating: 1}, pg.Page{Limit: 20}},
		"four stars, down a cursor":  {PublicReviewFilter{MinRating: 4}, pg.Page{Limit: 50, After: deep}},
		"five stars, a page of 100":  {PublicReviewFilter{MinRating: 5}, pg.Page{Limit: 100}},
		"three stars, a page of 100": {PublicReviewFilter{MinRating: 3}, pg.Page{Limit: 100, After: deep}},
	} {
		query, args := publicReviewsWhere("acc-1", c.f).Page(publicReviewsFrom, c.p)
		var out []byte
		require.NoError(t, db.GetContext(ctx, &out, `EXPLAIN (FORMAT JSON) `+query, args...), name)
		var plans []struct {
			Plan planNode `json:"Plan"`
		}
		require.NoError(t, json.Unmarshal(out, &plans), name)
		require.Len(t, plans, 1, name)
		var scans []planNode
		plans[0].Plan.walk(func(n planNode) {
			assert.NotEqual(t, "Sort", n.Type, "%s: no sort of the matches\n%s", name, out)
			assert.NotContains(t, n.Filter, "rating", "%s: the rating is checked in the index\n%s", name, out)
			if n.Relation == "reviews" {
				scans = append(scans, n)
			}
		})
		require.Len(t, scans, 1, "%s\n%s", name, out)
		assert.Equal(t, "reviews_public", scans[0].Index, "%s\n%s", name, out)
		assert.Contains(t, scans[0].IndexCond, "rating >=", "%s\n%s", name, out)
	}
}
