package bench

// Benchmarks of the accept path and of end-to-end delivery on a real
// `touchpoint dev` (the binary, started as a child process), and of the
// bare PostgreSQL insert the accept path is compared with. They
// run only with -bench, never in `make test`:
//
//	go test ./bench/ -run '^$' -bench . -benchtime=2000x
//
// Everything shares the machine: the HTTP clients here, and the API, the
// starter, the worker and the embedded Temporal server in the child,
// PostgreSQL next to them.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/touchpoint/touchpoint/internal/tcpproxy"
	"github.com/touchpoint/touchpoint/internal/testbin"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
)

// benchConcurrency is the number of clients posting at once.
var benchConcurrency = []int{1, 8, 32}

// devStack is a running `touchpoint dev` with a client of its API and a
// pool on its database.
type devStack struct {
	api   *benchAPI
	store *store.Store
	runID string
}

func newDevStack(b *testing.B) *devStack {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dev, err := startDevChild(ctx, testbin.Touchpoint(b), testdb.ServerURL(), "", 0, false)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := dev.stop(); err != nil {
			b.Error(err)
		}
	})
	api, err := newBenchAPI(ctx, dev.target, 64)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(api.http.CloseIdleConnections)
	db, err := store.Open(ctx, dev.target.DatabaseURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return &devStack{api: api, store: storeset.New(db, ""), runID: benchRunID()}
}

// post fires the bodies from c clients and fails b on any answer but 202.
func (s *devStack) post(b *testing.B, bodies [][]byte, c int) postRun {
	b.Helper()
	run := s.api.fire(context.Background(), bodies, c, &progress{})
	for _, o := range run.outcomes {
		if o.answer != http.StatusAccepted {
			b.Fatalf("POST /events answered %d", o.answer)
		}
	}
	return run
}

// waitSent waits until want invites of the event type are sent.
func (s *devStack) waitSent(b *testing.B, eventTypeID string, want int) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := waitInvitesSent(ctx, s.api, s.api.t.DatabaseURL, "", eventTypeID, want, &progress{}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAcceptEvent posts events through the real HTTP server while the
// starter starts their workflows and the worker sends their invites. It
// reports accepted events/s, the p50/p95/p99 accept latency and the
// events still unsent when the last post was answered (backlog). Between
// runs it waits, untimed, until every invite is sent, so each run starts
// on an idle stack.
func BenchmarkAcceptEvent(b *testing.B) {
	s := newDevStack(b)
	typ := "bench-accept-" + s.runID
	etID, err := s.api.immediateEventType(context.Background(), typ, "")
	if err != nil {
		b.Fatal(err)
	}
	sent := 0
	for _, c := range benchConcurrency {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			bodies := benchBodies(typ, s.api.t.ChannelID, fmt.Sprintf("%s-%d-%d", s.runID, c, sent), b.N)
			b.ResetTimer()
			run := s.post(b, bodies, c)
			b.StopTimer()
			var res Result
			run.summarize(&res)
			b.ReportMetric(res.AcceptedPerS, "events/s")
			b.ReportMetric(res.AcceptP50MS, "p50-ms")
			b.ReportMetric(res.AcceptP95MS, "p95-ms")
			b.ReportMetric(res.AcceptP99MS, "p99-ms")
			counts, err := s.store.Events.CountInvitesOfType(context.Background(), etID)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(counts.Waiting), "backlog")
			sent += b.N
			s.waitSent(b, etID, sent)
		})
	}
}

// BenchmarkInvitesEndToEnd posts b.N events with an immediate setting (at
// a concurrency of 8) and waits until every invite is sent, timed from the
// first post. It reports invites sent/s and the p50/p99 of sentAt −
// receivedAt.
func BenchmarkInvitesEndToEnd(b *testing.B) {
	s := newDevStack(b)
	const c = 8
	var runs int
	b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
		runs++
		typ := fmt.Sprintf("bench-e2e-%s-%d", s.runID, runs) // each run counts only its own events
		etID, err := s.api.immediateEventType(context.Background(), typ, "")
		if err != nil {
			b.Fatal(err)
		}
		bodies := benchBodies(typ, s.api.t.ChannelID, fmt.Sprintf("%s-e2e-%d", s.runID, runs), b.N)
		b.ResetTimer()
		start := time.Now()
		s.post(b, bodies, c)
		s.waitSent(b, etID, b.N)
		elapsed := time.Since(start)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "invites/s")
		events, err := s.api.listEvents(context.Background(), typ)
		if err != nil {
			b.Fatal(err)
		}
		var res Result
		summarizeInvites(&res, events)
		b.ReportMetric(res.InviteLatencyP50MS, "sent-p50-ms")
		b.ReportMetric(res.InviteLatencyP99MS, "sent-p99-ms")
	})
}

// BenchmarkBareInsert is the baseline of BenchmarkAcceptEvent: single-row
// inserts (sqlx + lib/pq, the store's pool settings) into a scratch table
// of the same PostgreSQL, at the same concurrencies. It reports inserts/s
// and the p50/p99 insert latency, directly and through a TCP proxy in
// front of PostgreSQL (what the proxy itself costs).
func BenchmarkBareInsert(b *testing.B) {
	dbURL := testdb.NewURL(b)
	proxy := tcpproxy.Start(b, "127.0.0.1:5432")
	paths := []struct{ name, url string }{
		{"direct", dbURL},
		{"tcpproxy", strings.Replace(dbURL, "127.0.0.1:5432", proxy.Addr(), 1)},
	}
	for _, p := range paths {
		b.Run(p.name, func(b *testing.B) {
			for _, c := range benchConcurrency {
				b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
					ins, err := openInsertBaseline(context.Background(), p.url, c, benchRunID())
					if err != nil {
						b.Fatal(err)
					}
					defer ins.close()
					b.ResetTimer()
					lat, elapsed, err := timeEach(context.Background(), "insert", b.N, c, newProgress(io.Discard), func(int) error {
						return ins.table.Insert(context.Background(), store.NewID("evt"), time.Now(), ins.payload)
					})
					b.StopTimer()
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(b.N)/elapsed.Seconds(), "inserts/s")
					b.ReportMetric(percentileMS(lat, 50), "p50-ms")
					b.ReportMetric(percentileMS(lat, 99), "p99-ms")
				})
			}
		})
	}
}
