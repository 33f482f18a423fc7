package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/store/eventdb"
)

// BenchmarkAcceptOnly measures the accept path alone — HTTP, token check,
// strict decoding and validation, the one-statement insert of event,
// start order and key — with no starter, worker or Temporal on the
// machine, beside the cheapest HTTP accept (the body stored by a bare
// insert) and bare single-row inserts into the same PostgreSQL at the
// same concurrency. It separates our code's ceiling from the CPU the
// workflow side takes when everything shares two cores (see
// docs/performance.md).
//
//	go test ./apiserver/ -run '^$' -bench AcceptOnly -benchtime 20000x
func BenchmarkAcceptOnly(b *testing.B) {
	const concurrency = 32
	e := newEnv(b, func(o *apiserver.Options) { o.RatePerSecond, o.RateBurst = 1e6, 1e6 })
	e.create(b, "/event-types", map[string]any{"name": "checkout"})
	// Pools as in production (store.Open): no connection churn at 32.
	e.store.DB().SetMaxOpenConns(concurrency)
	e.store.DB().SetMaxIdleConns(concurrency)
	e.srv.Client().Transport.(*http.Transport).MaxIdleConnsPerHost = concurrency
	_, err := e.store.DB().Exec(`CREATE TABLE bare_inserts (id text PRIMARY KEY, payload jsonb NOT NULL)`)
	require.NoError(b, err)
	const bareInsert = `INSERT INTO bare_inserts (id, payload) VALUES ($1, $2)`
	event := func(i int) map[string]any {
		ev := e.minimalEvent("checkout")
		ev["customer"] = map[string]any{"email": fmt.Sprintf("c%d@example.com", i)}
		return ev
	}
	payload := `{"customer":{"email":"ann@example.com"},"type":"checkout"}`

	run := func(b *testing.B, op func(i int) error) { runConcurrently(b, concurrency, 1, "ops/s", op) }

	b.Run("accept", func(b *testing.B) {
		run(b, func(i int) error {
			if r := e.do(b, http.MethodPost, "/events", e.token, event(i)); r.status != http.StatusAccepted {
				return fmt.Errorf("status %d: %s", r.status, r.body)
			}
			return nil
		})
	})
	// The cheapest HTTP accept there could be: the same requests, the same
	// client, a handler that stores the body as is with a bare insert and
	// answers 202 — no token check, decoding or validation. What separates
	// it from "accept" is our handler; what separates it from "bare insert"
	// is HTTP.
	floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
		if err == nil {
			_, err = e.store.DB().ExecContext(r.Context(), bareInsert, uuid.NewString(), body)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"Message":"accepted"}`)
	}))
	b.Cleanup(floor.Close)
	b.Run("http and bare insert", func(b *testing.B) {
		run(b, func(i int) error {
			if r := e.doOn(b, floor.URL, http.MethodPost, "/events", e.token, event(i)); r.status != http.StatusAccepted {
				return fmt.Errorf("status %d: %s", r.status, r.body)
			}
			return nil
		})
	})
	b.Run("store only", func(b *testing.B) { // the accept statement without HTTP and token check
		run(b, func(i int) error {
			_, err := e.store.Events.AcceptEvent(context.Background(), eventdb.NewEvent{
				AccountID: e.account, Type: "checkout", ChannelID: e.channel,
				CustomerEmail: fmt.Sprintf("c%d@example.com", i), TransactionReference: "order-1",
				TransactionDate: time.Now(), Payload: json.RawMessage(payload)})
			return err
		})
	})
	b.Run("bare insert", func(b *testing.B) {
		run(b, func(int) error {
			_, err := e.store.DB().Exec(bareInsert, uuid.NewString(), payload)
			return err
		})
	})
}

// runConcurrently calls op(0) … op(b.N-1) from concurrency goroutines and
// reports the rate (perOp units per op, per second) and the latency of
// the ops.
func runConcurrently(b *testing.B, concurrency, perOp int, unit string, op func(i int) error) {
	var next atomic.Int64
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < b.N; i = int(next.Add(1)) - 1 {
				t0 := time.Now()
				if err := op(i); err != nil {
					b.Error(err)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.ReportMetric(float64(b.N*perOp)/elapsed.Seconds(), unit)
	reportLatency(b, lat)
}
