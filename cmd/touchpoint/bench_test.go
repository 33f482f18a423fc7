//go:build !nodev

package main

// Benchmarks of the accept path and of end-to-end delivery on the stack of
// stack_test.go, and of the bare PostgreSQL insert the accept path is
// compared with (SPEC §9). They run only with -bench, never in `make test`:
//
//	go test ./cmd/touchpoint/ -run '^$' -bench . -benchtime=2000x
//
// Everything shares the machine: the HTTP clients, the API, the starter,
// the worker, the in-process Temporal server and the TCP proxies run in
// the benchmark process, PostgreSQL next to it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/internal/tcpproxy"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
)

// benchConcurrency is the number of clients posting at once.
var benchConcurrency = []int{1, 8, 32}

// benchVars lift the per-client rate limit for the run, as `touchpoint
// bench` does (SPEC §10): every request here comes from one client.
var benchVars = map[string]string{"TOUCHPOINT_RATE_LIMIT": "1000000", "TOUCHPOINT_RATE_BURST": "1000000"}

// BenchmarkAcceptEvent posts events through the real HTTP server while the
// starter starts their workflows and the worker sends their invites. It
// reports accepted events/s, the p50/p95/p99 accept latency and the
// events still unsent when the last post was answered (backlog). Between
// runs it waits, untimed, until every invite is sent, so each run starts
// on an idle stack.
func BenchmarkAcceptEvent(b *testing.B) {
	s := newStack(b, benchVars)
	const typ = "bench-accept"
	api := newBenchClient(b, s)
	api.eventType(b, typ)
	for _, c := range benchConcurrency {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			api.refreshToken(b) // a drain can outlast the idle rule
			bodies := benchEvents(b, s, typ, b.N)
			b.ResetTimer()
			start := time.Now()
			lat := api.post(b, bodies, c)
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "events/s")
			reportLatency(b, lat, 50, 95, 99)
			b.ReportMetric(float64(countEvents(b, s, typ, "pending", "scheduled", "sending")), "backlog")
			waitAllSent(b, s, typ, 10*time.Minute)
		})
	}
}

// BenchmarkInvitesEndToEnd posts b.N events with an immediate setting (at
// a concurrency of 8) and waits until every invite is sent, timed from the
// first post. It reports invites sent/s and the p50/p99 of sentAt −
// receivedAt.
func BenchmarkInvitesEndToEnd(b *testing.B) {
	s := newStack(b, benchVars)
	api := newBenchClient(b, s)
	const c = 8
	var runs int
	b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
		runs++
		typ := fmt.Sprintf("bench-e2e-%d", runs) // each run counts only its own events
		api.refreshToken(b)
		api.eventType(b, typ)
		bodies := benchEvents(b, s, typ, b.N)
		b.ResetTimer()
		start := time.Now()
		lat := api.post(b, bodies, c)
		waitAllSent(b, s, typ, 10*time.Minute)
		elapsed := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "invites/s")
		var q struct{ P50, P99 float64 }
		err := s.direct.DB().Get(&q, `
			SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY d) AS p50,
			       percentile_cont(0.99) WITHIN GROUP (ORDER BY d) AS p99
			FROM (SELECT extract(epoch FROM sent_at - received_at) * 1000 AS d
			      FROM events WHERE type = $1 AND invite_status = 'sent') AS sent`, typ)
		if err != nil {
			b.Fatalf("sent latency: %v", err)
		}
		b.ReportMetric(q.P50, "sent-p50-ms")
		b.ReportMetric(q.P99, "sent-p99-ms")
	})
}

// BenchmarkBareInsert is the baseline of BenchmarkAcceptEvent: single-row
// inserts (sqlx + lib/pq, the store's pool settings) into a scratch table
// of the same PostgreSQL, at the same concurrencies. It reports inserts/s
// and the p50/p99 insert latency, directly and through the TCP proxy that
// the stack puts in front of PostgreSQL.
func BenchmarkBareInsert(b *testing.B) {
	dbURL := testdb.NewURL(b)
	proxy := tcpproxy.Start(b, "127.0.0.1:5432")
	paths := []struct{ name, url string }{
		{"direct", dbURL},
		{"tcpproxy", strings.Replace(dbURL, "127.0.0.1:5432", proxy.Addr(), 1)},
	}
	payload, err := json.Marshal(map[string]any{
		"customer":      map[string]any{"email": "ann@example.com", "firstName": "Ann"},
		"type":          "bench-insert",
		"channel":       map[string]any{"id": store.NewID("chn")},
		"transaction":   map[string]any{"reference": "order-1", "date": time.Now().UTC().Format(time.RFC3339)},
		"system":        "shop",
		"systemVersion": "1.0",
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			db, err := store.Open(context.Background(), p.url)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS bench_insert (
				id text PRIMARY KEY, received_at timestamptz NOT NULL, payload jsonb NOT NULL)`); err != nil {
				b.Fatal(err)
			}
			for _, c := range benchConcurrency {
				b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
					b.ResetTimer()
					start := time.Now()
					lat := concurrently(b, b.N, c, func(int) error {
						_, err := db.ExecContext(context.Background(),
							`INSERT INTO bench_insert (id, received_at, payload) VALUES ($1, $2, $3)`,
							store.NewID("evt"), time.Now(), payload)
						return err
					})
					elapsed := time.Since(start)
					b.StopTimer()
					b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "inserts/s")
					reportLatency(b, lat, 50, 99)
				})
			}
		})
	}
}

// benchClient posts to the stack's API. It returns errors instead of
// failing, so its goroutines never call FailNow.
type benchClient struct {
	s     *stack
	http  *http.Client
	token string
}

func newBenchClient(tb testing.TB, s *stack) *benchClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64 // one kept-alive connection per client
	c := &benchClient{s: s, http: &http.Client{Transport: tr, Timeout: time.Minute}}
	tb.Cleanup(tr.CloseIdleConnections)
	c.refreshToken(tb)
	return c
}

// refreshToken gets a new token of the seeded client.
func (c *benchClient) refreshToken(tb testing.TB) {
	tb.Helper()
	cr := c.s.creds
	res, err := c.http.PostForm(c.s.cfg.AuthURL+"/oauth/token", url.Values{"grant_type": {"client_credentials"},
		"client_id": {cr.ClientID}, "client_secret": {cr.ClientSecret}, "audience": {c.s.cfg.BaseURL}})
	if err != nil {
		tb.Fatalf("token: %v", err)
	}
	defer res.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || res.StatusCode != http.StatusOK {
		tb.Fatalf("token: %s (%v)", res.Status, err)
	}
	c.token = body.AccessToken
}

// do sends one request and returns the status and the body.
func (c *benchClient) do(method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, c.s.cfg.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res.StatusCode, raw, err
}

// doJSON is do with JSON in and out, failing tb on any other status.
func (c *benchClient) doJSON(tb testing.TB, method, path string, in any, want int) map[string]any {
	tb.Helper()
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			tb.Fatal(err)
		}
	}
	status, raw, err := c.do(method, path, body)
	if err != nil || status != want {
		tb.Fatalf("%s %s: %d %s (%v)", method, path, status, raw, err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	return out
}

// eventType creates an event type whose settings send at once and never
// throttle, like stack.eventType (which needs a *testing.T).
func (c *benchClient) eventType(tb testing.TB, name string) {
	tb.Helper()
	et := c.doJSON(tb, http.MethodPost, "/event-types", map[string]any{"name": name}, http.StatusCreated)
	list := c.doJSON(tb, http.MethodGet, "/invite-settings?eventTypeId="+et["id"].(string), nil, http.StatusOK)
	for _, it := range list["items"].([]any) {
		c.doJSON(tb, http.MethodPatch, "/invite-settings/"+it.(map[string]any)["id"].(string),
			map[string]any{"delay": "PT0S", "minDaysBetweenInvites": 0}, http.StatusOK)
	}
}

// post sends every body as POST /events from c clients at once and returns
// the latency of each 202; any other answer fails tb after the run.
func (c *benchClient) post(tb testing.TB, bodies [][]byte, clients int) []time.Duration {
	return concurrently(tb, len(bodies), clients, func(i int) error {
		status, raw, err := c.do(http.MethodPost, "/events", bodies[i])
		if err == nil && status != http.StatusAccepted {
			err = fmt.Errorf("status %d: %s", status, raw)
		}
		return err
	})
}

// benchEventSeq keeps customer addresses unique across runs: sends to one
// address are serialised, which is not what these benchmarks measure.
var benchEventSeq atomic.Int64

// benchEvents returns n event bodies of type typ, each to its own address.
func benchEvents(tb testing.TB, s *stack, typ string, n int) [][]byte {
	bodies := make([][]byte, n)
	for i := range bodies {
		b, err := json.Marshal(s.event(typ, fmt.Sprintf("bench-%d@example.com", benchEventSeq.Add(1))))
		if err != nil {
			tb.Fatal(err)
		}
		bodies[i] = b
	}
	return bodies
}

// concurrently calls op(0) … op(n-1) from the given number of goroutines
// and returns the duration of each call that succeeded. Failures are
// counted and reported through tb once all calls are done.
func concurrently(tb testing.TB, n, goroutines int, op func(i int) error) []time.Duration {
	var (
		next     atomic.Int64
		failed   atomic.Int64
		firstErr error
		errOnce  sync.Once
		wg       sync.WaitGroup
	)
	lat := make([][]time.Duration, goroutines)
	for g := range goroutines {
		lat[g] = make([]time.Duration, 0, n/goroutines+1)
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				t0 := time.Now()
				if err := op(i); err != nil {
					failed.Add(1)
					errOnce.Do(func() { firstErr = err })
					continue
				}
				lat[g] = append(lat[g], time.Since(t0))
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		tb.Errorf("%d of %d calls failed; the first: %v", f, n, firstErr)
	}
	return slices.Concat(lat...)
}

// reportLatency reports percentiles of lat (nearest rank) as pNN-ms.
func reportLatency(b *testing.B, lat []time.Duration, percentiles ...int) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	for _, p := range percentiles {
		rank := max((p*len(lat)+99)/100, 1) // ceil(p/100 · n), 1-based
		b.ReportMetric(float64(lat[rank-1].Microseconds())/1000, fmt.Sprintf("p%d-ms", p))
	}
}

// countEvents counts the events of type typ whose invite has one of the
// statuses.
func countEvents(tb testing.TB, s *stack, typ string, statuses ...string) int {
	tb.Helper()
	var n int
	err := s.direct.DB().Get(&n, `SELECT count(*) FROM events WHERE type = $1 AND invite_status = ANY($2)`,
		typ, pq.Array(statuses))
	if err != nil {
		tb.Fatalf("count events: %v", err)
	}
	return n
}

// waitAllSent waits until no invite of type typ is still on its way, and
// fails tb unless all of them were sent. It polls with one query.
func waitAllSent(tb testing.TB, s *stack, typ string, timeout time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for countEvents(tb, s, typ, "pending", "scheduled", "sending") > 0 {
		if time.Now().After(deadline) {
			tb.Fatalf("invites of %s not all sent within %v: %v", typ, timeout, statusCounts(tb, s, typ))
		}
		<-tick.C
	}
	if n := countEvents(tb, s, typ, "skipped", "failed", "cancelled"); n > 0 {
		tb.Errorf("%d invites of %s were not sent: %v", n, typ, statusCounts(tb, s, typ))
	}
}

// statusCounts is the number of events of type typ by invite status.
func statusCounts(tb testing.TB, s *stack, typ string) map[string]int {
	var rows []struct {
		Status string `db:"invite_status"`
		N      int    `db:"n"`
	}
	if err := s.direct.DB().Select(&rows, `SELECT invite_status, count(*) AS n FROM events WHERE type = $1 GROUP BY 1`, typ); err != nil {
		tb.Errorf("status counts: %v", err)
	}
	m := map[string]int{}
	for _, r := range rows {
		m[r.Status] = r.N
	}
	return m
}
