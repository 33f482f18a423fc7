package apiserver_test

import (
	"context"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

// BenchmarkListEventsAtScale loads one account with a million events
// (TOUCHPOINT_SCALE_EVENTS to change it) and measures GET /events through
// the real HTTP server: the first page, filtered pages and a page deep
// down a cursor walk. It reports p50/p99 latency per query (reportLatency:
// the p99 over at least 1,000 requests) and the process's resident memory. Targets:
// p99 ≤ 20 ms, RSS ≤ 100 MB.
//
//	go test ./apiserver/ -run '^$' -bench ListEventsAtScale -benchtime 1000x
func BenchmarkListEventsAtScale(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("TOUCHPOINT_SCALE_EVENTS")); err == nil && v > 0 {
		n = v
	}
	e := newEnv(b, func(o *apiserver.Options) { o.RatePerSecond, o.RateBurst = 1e6, 1e6 }) // measure, not throttle
	ctx := context.Background()
	et, err := e.store.Accounts.CreateEventType(ctx, e.account, "checkout", true)
	require.NoError(b, err)
	settings, _, err := e.store.Accounts.ListInviteSettings(ctx, e.account, accountdb.InviteSettingFilter{EventTypeID: et.ID}, store.Page{Limit: 1})
	require.NoError(b, err)
	start := time.Now()
	loadEvents(b, e, et.ID, settings[0].ID, n)
	b.Logf("loaded %d events in %s", n, time.Since(start).Round(time.Second))

	// A cursor 90 % of the way down the list.
	var deep struct {
		ReceivedAt time.Time `db:"received_at"`
		ID         string    `db:"id"`
	}
	require.NoError(b, e.store.DB().Get(&deep, `SELECT received_at, id FROM events WHERE account_id = $1
		ORDER BY received_at DESC, id DESC OFFSET $2 LIMIT 1`, e.account, n*9/10))
	cursor := store.Cursor{CreatedAt: deep.ReceivedAt, ID: deep.ID}.Encode()

	for _, q := range []struct{ name, path string }{
		{"first page", "/events"},
		{"status filter", "/events?status=failed&limit=50"},
		{"customer email", "/events?customerEmail=" + url.QueryEscape("C4242@example.com")},
		{"type and time range", "/events?type=checkout&receivedFrom=" + url.QueryEscape(deep.ReceivedAt.Format(time.RFC3339)) + "&limit=100"},
		{"deep cursor", "/events?cursor=" + cursor},
	} {
		b.Run(q.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				r := e.get(b, q.path)
				lat = append(lat, time.Since(t0))
				if r.status != 200 {
					b.Fatalf("%s: %d %s", q.path, r.status, r.body)
				}
			}
			reportLatency(b, lat)
			b.ReportMetric(rssMB(b), "rss_MB")
		})
	}
}

// loadEvents inserts n events in one statement per 100,000, as the
// accept path would have stored them: a mix of invite outcomes, 50,000
// distinct customers, one per second going back in time.
func loadEvents(b *testing.B, e *env, eventTypeID, settingID string, n int) {
	const chunk = 100_000
	payload := `{"customer":{"email":"c@example.com","firstName":"Ann"},"type":"checkout",` +
		`"channel":{"id":"` + e.channel + `"},"transaction":{"reference":"order","date":"2026-11-20T09:00:00.000Z"},` +
		`"system":"shop","systemVersion":"4.2","products":[{"name":"Mug","sku":"M-1","imageUrl":"https://shop.example/m.png"}]}`
	now := time.Now().UTC().Truncate(time.Millisecond)
	for from := 0; from < n; from += chunk {
		_, err := e.store.DB().Exec(`
			INSERT INTO events (id, account_id, event_type_id, channel_id, received_at, type, customer_email,
				transaction_reference, transaction_date, payload, invite_setting_id, delay, delay_from,
				invite_status, invite_medium, sent_at, attempts, updated_at)
			SELECT 'evt-' || gen_random_uuid(), $1, $2, $3, $4::timestamptz - g * interval '1 second', 'checkout',
				'c' || (g % 50000) || '@example.com', 'order-' || g, $4, $5::jsonb, $6, 'PT0S', 'event',
				(ARRAY['sent','sent','sent','skipped','failed'])[1 + g % 5], 'email', $4, 1, $4
			FROM generate_series($7::int, $8::int) g`,
			e.account, eventTypeID, e.channel, now, payload, settingID, from+1, min(from+chunk, n))
		require.NoError(b, err)
	}
	_, err := e.store.DB().Exec(`ANALYZE events`)
	require.NoError(b, err)
}

// rssMB is the resident memory of this process (the API server and the
// benchmark) in MiB.
func rssMB(b *testing.B) float64 {
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(b, err)
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
