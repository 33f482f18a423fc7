package apiserver_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/freeport"
	"github.com/touchpoint/touchpoint/internal/syncbuf"
	"github.com/touchpoint/touchpoint/internal/testbin"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
)

// BenchmarkPublicReviewsAtScale loads one account with 1,000,000 reviews
// and 2,000,000 product reviews (seedPublicReviews; TOUCHPOINT_SCALE_REVIEWS
// to change the number of reviews) and measures, through the real HTTP
// server, the public list of the account's reviews (first page, filters,
// a page deep down a cursor walk), a product's public reviews and the
// product summary, each with its p50 and p99. Target: p99 ≤ 20 ms.
// Aggregates are read from their rows, never counted; the plans of the
// list queries are logged.
//
// Each is measured twice, one request an op, as two sub-benchmarks:
//
//   - cold/…: first reads. Each is served by an API of its own, started
//     for it, whose proof cache (publication's) is empty, and each op
//     reads a page none before it read — a cursor of its own down the
//     list (pages apart), a product of its own — so every proof on it is
//     signed afresh (the benchmark fails when a proof shows twice), as for
//     a crawler walking the list or the first visitor after a change.
//     PostgreSQL's buffers are as the seeding and the reads before left
//     them. The Dutch list (one review in a thousand) has too few pages
//     for a thousand first reads: it is measured warm only.
//   - warm/…: one address read again and again after a first read that is
//     not timed, its proofs remembered, as for the widget of a busy shop.
//
// A p99 is reported only over at least minLatencySamples requests; run
// with -benchtime of at least that many ops:
//
//	go test ./apiserver/ -run '^$' -bench PublicReviewsAtScale -benchtime 1000x
func BenchmarkPublicReviewsAtScale(b *testing.B) {
	n := scaleReviews(1_000_000)
	var opts apiserver.Options
	e := newEnv(b, func(o *apiserver.Options) {
		o.RatePerSecond, o.RateBurst = 1e6, 1e6 // measure, not throttle
		// Each public request comes from an address of its own (see
		// spreadAddresses): the per-address limit is not what is measured.
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		opts = *o
	})
	ctx := context.Background()
	db := e.store.DB()
	start := time.Now()
	seedPublicReviews(b, db, e.account, e.channel, n, 5)
	b.Logf("seeded %d reviews and %d product reviews in %s", n, 2*n, time.Since(start).Round(time.Second))
	e.token = e.tokenFor(b, e.account, auth.GroupFull) // the first may have expired meanwhile

	// The aggregate the API shows is the maintained row; one scan here,
	// outside the timing, checks it against the rows themselves.
	var counted int64
	require.NoError(b, db.GetContext(ctx, &counted, `SELECT count(*) FROM reviews WHERE account_id = $1 AND public AND rating IS NOT NULL`, e.account))
	list := e.anon(b, "/public/accounts/"+e.account+"/reviews")
	require.Equal(b, http.StatusOK, list.status, "%s", list.body)
	agg := list.object(b)["aggregate"].(map[string]any)
	require.EqualValues(b, counted, agg["count"], "the aggregate row holds every public rating")

	// A cursor 90 % of the way down the public list.
	var deep store.Cursor
	require.NoError(b, db.QueryRowxContext(ctx, `SELECT created_at, id FROM reviews WHERE account_id = $1 AND public
		ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`, e.account, n*9/10).Scan(&deep.CreatedAt, &deep.ID))

	for _, q := range []struct{ name, sql string }{
		{"first page", `SELECT id FROM reviews WHERE account_id = $1 AND public AND TRUE ORDER BY created_at DESC, id DESC LIMIT 21`},
		{"deep cursor", `SELECT id FROM reviews WHERE account_id = $1 AND public AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT 21`},
		{"rare language", `SELECT id FROM reviews WHERE account_id = $1 AND public AND split_part(locale, '_', 1) = $4 AND (created_at, id) < ($2, $3) ORDER BY created_at DESC, id DESC LIMIT 21`},
	} {
		args := []any{e.account}
		if strings.Contains(q.sql, "$2") {
			args = append(args, deep.CreatedAt, deep.ID)
		}
		if strings.Contains(q.sql, "$4") {
			args = append(args, "nl")
		}
		var plan []string
		require.NoError(b, db.SelectContext(ctx, &plan, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) `+q.sql, args...))
		b.Logf("plan of the public list, %s:\n%s", q.name, strings.Join(plan, "\n"))
	}

	sku := "SKU-42"
	var skuCount int64
	require.NoError(b, db.GetContext(ctx, &skuCount, `SELECT count(*) FROM product_reviews WHERE account_id = $1 AND public AND sku = $2`, e.account, sku))
	summary := e.get(b, "/products/summary?sku="+sku)
	require.Equal(b, http.StatusOK, summary.status, "%s", summary.body)
	require.EqualValues(b, skuCount, summary.object(b)["count"], "the product's aggregate row holds every public rating")

	// The first reads: cursors coldStride reviews apart (more than a page
	// of 50, or of 20 matching a filter); products whose reviews share no
	// review (a product review shows its review's proof, and review g
	// rates SKUs p and p+13 of seedPublicReviewsSQL: so SKUs p with
	// p mod 26 < 13, short of the wrap-around at 5,000).
	const coldStride = 100
	var cursors []store.Cursor
	require.NoError(b, db.SelectContext(ctx, &cursors, `SELECT created_at AS "createdat", id AS "id" FROM (
			SELECT created_at, id, row_number() OVER (ORDER BY created_at DESC, id DESC) AS rn
			FROM reviews WHERE account_id = $1 AND public) r
		WHERE rn % $2 = 0 ORDER BY rn`, e.account, coldStride))
	var skus []string
	for p := range 5000 - 13 {
		if p%26 < 13 {
			skus = append(skus, "SKU-"+strconv.Itoa(p))
		}
	}
	acc := "/public/accounts/" + e.account
	atCursor := func(query string) func(i int) (string, bool) {
		return func(i int) (string, bool) {
			if i >= len(cursors) {
				return "", false
			}
			return acc + "/reviews?" + query + "cursor=" + cursors[i].Encode(), true
		}
	}
	ofSKU := func(path string) func(i int) (string, bool) {
		return func(i int) (string, bool) {
			if i >= len(skus) {
				return "", false
			}
			return path + skus[i], true
		}
	}
	cold := []struct {
		name   string
		path   func(i int) (string, bool) // the ith page never read; false when none is left
		public bool
	}{
		{"reviews page at a cursor", atCursor(""), true},
		{"reviews minRating 5 at a cursor", atCursor("minRating=5&limit=20&"), true},
		{"reviews locale de at a cursor", atCursor("locale=de&limit=20&"), true},
		{"product reviews of a sku", ofSKU("/public/products/reviews?account=" + e.account + "&sku="), true},
		{"products summary sku", ofSKU("/products/summary?sku="), false},
	}
	warm := []struct {
		name, path string
		public     bool
	}{
		{"reviews first page", acc + "/reviews", true},
		{"reviews minRating 5", acc + "/reviews?minRating=5&limit=20", true},
		{"reviews locale de", acc + "/reviews?locale=de&limit=20", true},
		{"reviews rare locale nl", acc + "/reviews?locale=nl&limit=20", true},
		{"reviews deep cursor", acc + "/reviews?cursor=" + deep.Encode(), true},
		{"product reviews of a sku", "/public/products/reviews?account=" + e.account + "&sku=" + sku, true},
		{"products summary sku", "/products/summary?sku=" + sku, false},
	}
	read := func(b *testing.B, base, path string, public bool, i int) (time.Duration, response) {
		t0 := time.Now()
		var r response
		if public {
			r = e.doOn(b, base, http.MethodGet, path, "", nil, header{"X-Forwarded-For", spreadAddress(i)})
		} else {
			r = e.doOn(b, base, http.MethodGet, path, e.token, nil)
		}
		took := time.Since(t0)
		if r.status != http.StatusOK {
			b.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		return took, r
	}
	// A first read signs every proof of its page: none may have been
	// shown before by the API serving it.
	firstShown := func(b *testing.B, shown map[string]bool, r response) {
		items, _ := r.object(b)["items"].([]any)
		for _, it := range items {
			proof, _ := it.(map[string]any)["proof"].(string)
			if proof == "" {
				continue
			}
			if shown[proof] {
				b.Fatalf("a cold read shows a proof read before: %.60s…", proof)
			}
			shown[proof] = true
		}
	}
	for _, q := range cold {
		b.Run("cold/"+q.name, func(b *testing.B) {
			o := opts
			o.PublicationKeys = testPublicationKeys(b, e.store) // the account's keys, no proof remembered
			srv := httptest.NewServer(validated(b, apiserver.New(o), false))
			defer srv.Close()
			shown := map[string]bool{}
			var lat []time.Duration
			for b.Loop() {
				path, ok := q.path(len(lat))
				if !ok {
					b.Fatalf("no page left that was never read after %d: run fewer ops (-benchtime %dx)", len(lat), len(lat))
				}
				took, r := read(b, srv.URL, path, q.public, len(lat))
				lat = append(lat, took)
				firstShown(b, shown, r)
			}
			reportLatency(b, lat)
		})
	}
	for _, q := range warm {
		b.Run("warm/"+q.name, func(b *testing.B) {
			read(b, e.srv.URL, q.path, q.public, -1) // the first read, not timed
			var lat []time.Duration
			for b.Loop() {
				took, _ := read(b, e.srv.URL, q.path, q.public, len(lat))
				lat = append(lat, took)
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkGoogleFeedAtScale streams Google's product reviews feed of an
// account with 1,000,000 product reviews (500,000 reviews of two products
// each; TOUCHPOINT_SCALE_REVIEWS to change the number of reviews) from a
// real `touchpoint api` process, and reports that process's resident
// memory before the feed, its peak while streaming it (VmHWM, reset after
// the start), and the growth between the two; one op is one whole feed.
// Target: growth ≤ 50 MB. The binary is the one of TOUCHPOINT_TEST_BIN
// (the production build: make build-prod), else a fresh build.
//
//	make build-prod
//	TOUCHPOINT_TEST_BIN=$PWD/bin/touchpoint-prod go test ./apiserver/ -run '^$' -bench GoogleFeedAtScale -benchtime 3x
func BenchmarkGoogleFeedAtScale(b *testing.B) {
	n := scaleReviews(500_000)
	bin := testbin.Touchpoint(b)
	db := testdb.New(b)
	st := storeset.New(db, "P7D")
	ctx := context.Background()
	acc, ch, err := st.Accounts.CreateAccount(ctx, "Big shop")
	require.NoError(b, err)
	start := time.Now()
	seedPublicReviews(b, db, acc.ID, ch.ID, n, 0)
	var inFeed, withGTIN int64
	require.NoError(b, db.QueryRowxContext(ctx, `SELECT count(*), count(gtin) FROM product_reviews WHERE account_id = $1 AND public AND comment <> ''`, acc.ID).
		Scan(&inFeed, &withGTIN))
	b.Logf("seeded %d reviews and %d product reviews (%d public, with a comment; %d of them with a GTIN) in %s",
		n, 2*n, inFeed, withGTIN, time.Since(start).Round(time.Second))

	api := startAPIProcess(b, bin, testdb.URL(b, db))
	path := api.base + "/public/accounts/" + acc.ID + "/feeds/google-product-reviews.xml"
	// The first feed warms the process (its pool, its publication key);
	// the peak is reset after it.
	reviews, gtins, _ := readFeed(b, path)
	require.EqualValues(b, inFeed, reviews, "every public product review with a comment, once")
	require.EqualValues(b, withGTIN, gtins, "every GTIN checks, so the feed names each")
	before := api.memoryKB(b, "VmRSS")
	api.resetPeak(b)

	var took []time.Duration
	var size int64
	for b.Loop() {
		t0 := time.Now()
		reviews, _, size = readFeed(b, path)
		took = append(took, time.Since(t0))
		require.EqualValues(b, inFeed, reviews)
	}
	peak := api.memoryKB(b, "VmHWM")
	b.ReportMetric(float64(before)/1024, "rss_before_MB")
	b.ReportMetric(float64(peak)/1024, "peak_rss_MB")
	b.ReportMetric(float64(peak-before)/1024, "growth_MB")
	b.ReportMetric(float64(reviews), "reviews")
	b.ReportMetric(float64(size)/1e6, "feed_MB")
	slices.Sort(took)
	b.ReportMetric(took[len(took)/2].Seconds(), "p50_s")
}

// scaleReviews is TOUCHPOINT_SCALE_REVIEWS when set, else def.
func scaleReviews(def int) int {
	if v, err := strconv.Atoi(os.Getenv("TOUCHPOINT_SCALE_REVIEWS")); err == nil && v > 0 {
		return v
	}
	return def
}

// seedPublicReviewsSQL writes n reviews ($4) of one account and two
// product reviews of each, as the feedback page would have stored them,
// one a second going back in time: ratings leaning to the good, a comment
// on four reviews in five, six languages (Dutch rare: one in a thousand),
// one in ten with the shop's reply, one in three naming its author; one
// in a hundred reported as spam (still public) and one in two hundred
// removed (hidden), the product reviews with their review's status.
// Every product review has a comment, but the fifth of every k ($5, 0:
// none) goes without. Products: 5,000 SKUs, a GTIN-13 with its check
// digit on half of them.
// Ids are made from the row number, so the product reviews find their
// review without a join.
const seedPublicReviewsSQL = `
WITH gtins AS (
    SELECT p, body || (10 - sum(substr(body, k, 1)::int * CASE WHEN k % 2 = 0 THEN 3 ELSE 1 END) % 10) % 10 AS gtin
    FROM generate_series(0, 4999, 2) p, LATERAL (SELECT (400638100000 + p)::text AS body) b, generate_series(1, 12) k
    GROUP BY p, body
), r AS (
    INSERT INTO reviews (id, account_id, event_id, event_type_id, channel_id, rating, comment, locale,
        status, report_reason, reported_at, show_name, reply_text, reply_created_at, reply_updated_at, created_at, updated_at)
    SELECT 'rev-00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'), $1, 'evt-00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'),
        'ety-bench', $2, (ARRAY[5, 5, 5, 5, 4, 4, 4, 3, 2, 1])[1 + g % 10],
        CASE WHEN g % 5 = 0 THEN '' ELSE 'Arrived on time and does what it says, review number ' || g || '. Would buy again.' END,
        CASE WHEN g % 1000 = 7 THEN 'nl' ELSE (ARRAY['en', 'de', 'fr', 'es', 'da', 'de_AT'])[1 + g % 6] END,
        CASE WHEN g % 200 = 3 THEN 'removed' WHEN g % 100 = 1 THEN 'reported' ELSE 'published' END,
        CASE WHEN g % 100 = 1 THEN 'spam' END, CASE WHEN g % 100 = 1 THEN $3::timestamptz END,
        g % 3 = 0,
        CASE WHEN g % 10 = 0 THEN 'Thank you for your order!' END,
        CASE WHEN g % 10 = 0 THEN $3::timestamptz END, CASE WHEN g % 10 = 0 THEN $3::timestamptz END,
        $3::timestamptz - g * interval '1 second', $3::timestamptz - g * interval '1 second'
    FROM generate_series(1, $4::int) g
    RETURNING 1
)
INSERT INTO product_reviews (id, account_id, review_id, event_id, product_index, name, sku, gtin, mpn, brand, url, image_url,
    rating, comment, status, report_reason, created_at, updated_at)
SELECT 'prv-00000000-0000-4000-8000-' || lpad(to_hex(2 * g + i), 12, '0'), $1,
    'rev-00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'), 'evt-00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'), i,
    'Product ' || p.p, 'SKU-' || p.p, gtins.gtin, NULL, 'Acme',
    'https://shop.example/p/' || p.p, 'https://shop.example/p/' || p.p || '.png',
    (ARRAY[5, 5, 4, 4, 4, 3, 5, 2, 1, 5])[1 + (g + i) % 10],
    CASE WHEN $5::int > 0 AND (2 * g + i) % $5::int = 0 THEN '' ELSE 'Good quality for the price (' || (2 * g + i) || ').' END,
    CASE WHEN g % 200 = 3 THEN 'removed' WHEN g % 100 = 1 THEN 'reported' ELSE 'published' END,
    CASE WHEN g % 100 = 1 THEN 'spam' END,
    $3::timestamptz - g * interval '1 second', $3::timestamptz - g * interval '1 second'
FROM generate_series(1, $4::int) g, generate_series(0, 1) i, LATERAL (SELECT (g * 7 + i * 13) % 5000 AS p) p
    LEFT JOIN gtins ON gtins.p = p.p
WHERE (SELECT count(*) FROM r) > 0`

// seedAggregatesSQL counts the seeded public ratings into the aggregate
// rows once, as the store keeps them with every change.
const seedAggregatesSQL = `
INSERT INTO review_aggregates (account_id, count, sum, r1, r2, r3, r4, r5)
SELECT $1, count(*), sum(rating), count(*) FILTER (WHERE rating = 1), count(*) FILTER (WHERE rating = 2),
    count(*) FILTER (WHERE rating = 3), count(*) FILTER (WHERE rating = 4), count(*) FILTER (WHERE rating = 5)
FROM reviews WHERE account_id = $1 AND public AND rating IS NOT NULL
ON CONFLICT (account_id) DO UPDATE SET count = EXCLUDED.count, sum = EXCLUDED.sum,
    r1 = EXCLUDED.r1, r2 = EXCLUDED.r2, r3 = EXCLUDED.r3, r4 = EXCLUDED.r4, r5 = EXCLUDED.r5;
INSERT INTO product_aggregates (account_id, key_kind, key_value, count, sum, r1, r2, r3, r4, r5)
SELECT $1, k.kind, k.value, count(*), sum(rating), count(*) FILTER (WHERE rating = 1), count(*) FILTER (WHERE rating = 2),
    count(*) FILTER (WHERE rating = 3), count(*) FILTER (WHERE rating = 4), count(*) FILTER (WHERE rating = 5)
FROM product_reviews p, LATERAL (VALUES ('sku', p.sku), ('gtin', p.gtin), ('mpn', p.mpn)) k (kind, value)
WHERE p.account_id = $1 AND p.public AND k.value IS NOT NULL
GROUP BY k.kind, k.value;
SELECT publication_bump($1);`

// seedPublicReviews writes n reviews with two product reviews each into
// the account (seedPublicReviewsSQL), then their aggregate rows, in one
// transaction: with the triggers off (the publication version is bumped
// once at the end instead of once a row), and with the indexes of the two
// tables that back no constraint dropped for the writing and built again
// from their own definitions after it (building an index over sorted rows
// is far cheaper than millions of inserts into it). Then it analyzes the
// tables.
func seedPublicReviews(b testing.TB, db *sqlx.DB, accountID, channelID string, n, withoutCommentEvery int) {
	ctx := context.Background()
	tx, err := db.BeginTxx(ctx, nil)
	require.NoError(b, err)
	defer tx.Rollback()
	exec := func(query string, args ...any) {
		b.Helper()
		_, err := tx.ExecContext(ctx, query, args...)
		require.NoError(b, err, "%s", query)
	}
	var indexes []struct {
		Name string `db:"name"`
		Def  string `db:"def"`
	}
	require.NoError(b, tx.SelectContext(ctx, &indexes, `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
		FROM pg_index i WHERE i.indrelid IN ('reviews'::regclass, 'product_reviews'::regclass)
		AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`))
	for _, ix := range indexes {
		exec(`DROP INDEX ` + ix.Name)
	}
	exec(`SET LOCAL session_replication_role = replica`)
	now := time.Now().UTC().Truncate(time.Millisecond)
	t0 := time.Now()
	exec(seedPublicReviewsSQL, accountID, channelID, now, n, withoutCommentEvery)
	b.Logf("rows written in %s", time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	exec(`SET LOCAL session_replication_role = DEFAULT`)
	exec(`SET LOCAL maintenance_work_mem = '256MB'`)
	for _, ix := range indexes {
		exec(ix.Def)
	}
	b.Logf("%d indexes built in %s", len(indexes), time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	for _, stmt := range strings.Split(seedAggregatesSQL, ";\n") {
		exec(stmt, accountID)
	}
	require.NoError(b, tx.Commit())
	b.Logf("aggregates counted and committed in %s", time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	for _, table := range []string{"reviews", "product_reviews"} {
		_, err = db.ExecContext(ctx, `VACUUM ANALYZE `+table)
		require.NoError(b, err)
	}
	b.Logf("analyzed in %s", time.Since(t0).Round(time.Millisecond))

	// The GTINs check, as the public outputs want them (else the feed and
	// the JSON-LD would name no GTIN at all).
	var gtins []string
	require.NoError(b, db.SelectContext(ctx, &gtins, `SELECT DISTINCT gtin FROM product_reviews WHERE account_id = $1 AND gtin IS NOT NULL`, accountID))
	require.NotEmpty(b, gtins)
	for _, g := range gtins {
		require.True(b, review.ValidGTIN(g), "seeded GTIN %s checks", g)
	}
}

// spreadAddress is a client address of its own for the ith request.
func spreadAddress(i int) string {
	return fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff)
}

// apiProcess is a `touchpoint api` the benchmark started.
type apiProcess struct {
	cmd  *exec.Cmd
	base string
	out  *syncbuf.Buffer
}

// startAPIProcess runs `bin api` on the database at dbURL until the
// benchmark ends and waits until it answers. Temporal and the issuer are
// never reached: the public endpoints need neither, and the process dials
// both lazily.
func startAPIProcess(b *testing.B, bin, dbURL string) *apiProcess {
	// Three free loopback addresses (freeport): the API's, and two where
	// nobody listens (Temporal's, the issuer's).
	addrs, err := freeport.Addrs(3)
	require.NoError(b, err)
	base := "http://" + addrs[0]
	p := &apiProcess{base: base, out: &syncbuf.Buffer{Max: 64 << 10}}
	p.cmd = exec.Command(bin, "api")
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "TOUCHPOINT_") && !strings.HasPrefix(k, "TEMPORAL_") && k != "DATABASE_URL" {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Env = append(p.cmd.Env,
		"DATABASE_URL="+dbURL,
		"TEMPORAL_ADDRESS="+addrs[1],
		"TEMPORAL_CONFIG_FILE="+filepath.Join(b.TempDir(), "absent.toml"),
		"TOUCHPOINT_API_ADDR="+addrs[0],
		"TOUCHPOINT_BASE_URL="+base,
		"TOUCHPOINT_FEEDBACK_URL="+base+"/feedback",
		"TOUCHPOINT_AUTH_URL=http://"+addrs[2],
		"TOUCHPOINT_SECRET_KEY=bench-secret-key-0123456789abcdef0123",
		"TOUCHPOINT_LOG_LEVEL=warn",
		"TOUCHPOINT_DB_MAX_CONNS=4",
	)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	return p.start(b)
}

// start starts the process, stops it (SIGINT, SIGKILL after 30 s) when
// the benchmark ends, and waits until it answers /healthz.
func (p *apiProcess) start(b *testing.B) *apiProcess {
	require.NoError(b, p.cmd.Start())
	done := make(chan struct{})
	go func() {
		p.cmd.Wait()
		close(done)
	}()
	b.Cleanup(func() {
		p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := http.Get(p.base + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-done:
			b.Fatalf("touchpoint api exited while starting:\n%s", p.out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Fatalf("touchpoint api not up within a minute (%v):\n%s", err, p.out)
		}
	}
}

// memoryKB reads a field of the process's /proc status (VmRSS, VmHWM) in kB.
func (p *apiProcess) memoryKB(b *testing.B, field string) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	require.NoError(b, err)
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(b, err)
			return kb
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, p.cmd.Process.Pid)
	return 0
}

// resetPeak starts the process's peak resident memory (VmHWM) afresh.
func (p *apiProcess) resetPeak(b *testing.B) {
	require.NoError(b, os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0))
}

// readFeed reads the feed at url to its end as fast as it comes and
// returns how many reviews and GTINs it held and its size; the document
// must end with its closing tag.
func readFeed(b *testing.B, url string) (reviews, gtins, size int64) {
	res, err := http.Get(url)
	require.NoError(b, err)
	defer res.Body.Close()
	require.Equal(b, http.StatusOK, res.StatusCode)
	r, g := &tagCounter{tag: []byte("</review>")}, &tagCounter{tag: []byte("</gtin>")}
	size, err = io.Copy(io.MultiWriter(r, g), res.Body)
	require.NoError(b, err)
	require.True(b, bytes.HasSuffix(r.tail, []byte("</feed>\n")), "the feed ends whole")
	return r.n, g.n, size
}

// tagCounter counts a closing tag in what is written to it, across
// writes.
type tagCounter struct {
	tag  []byte
	n    int64
	tail []byte
}

func (c *tagCounter) Write(p []byte) (int, error) {
	// A tag cut between two writes is found in the tail of the one before
	// and the next: the tail is one byte shorter than the tag, so it
	// cannot hold a tag counted already.
	buf := append(c.tail, p...)
	c.n += int64(bytes.Count(buf, c.tag))
	c.tail = append([]byte(nil), buf[max(0, len(buf)-len(c.tag)+1):]...)
	return len(p), nil
}
