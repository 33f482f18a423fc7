package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/store/eventdb"
)

// BenchmarkAcceptBatch measures POST /events/batch of 500 events at
// concurrency 8 with no starter, worker or Temporal on the
// machine, beside the accept statement alone (store.AcceptEvents) and a
// bare COPY of the same rows into a table of the events table's shape.
// One op is one batch; events/s is what the target compares, and the
// p99 of a batch needs 1,000 of them (reportLatency).
//
//	go test ./apiserver/ -run '^$' -bench AcceptBatch -benchtime 1000x -cpuprofile cpu.out
func BenchmarkAcceptBatch(b *testing.B) {
	const concurrency, size = 8, 500
	e := newEnv(b, func(o *apiserver.Options) { o.RatePerSecond, o.RateBurst = 1e6, 1e6 })
	e.create(b, "/event-types", map[string]any{"name": "checkout"})
	e.store.DB().SetMaxOpenConns(concurrency)
	e.store.DB().SetMaxIdleConns(concurrency)
	e.srv.Client().Transport.(*http.Transport).MaxIdleConnsPerHost = concurrency
	body := func(batch int) string {
		events := make([]map[string]any, size)
		for i := range events {
			ev := e.minimalEvent("checkout")
			ev["customer"] = map[string]any{"email": fmt.Sprintf("c%d-%d@example.com", batch, i), "firstName": "Ann"}
			events[i] = ev
		}
		raw, err := json.Marshal(map[string]any{"events": events})
		require.NoError(b, err)
		return string(raw)
	}
	newEvents := func(batch int) []eventdb.NewEvent {
		out := make([]eventdb.NewEvent, size)
		for i := range out {
			out[i] = eventdb.NewEvent{AccountID: e.account, Type: "checkout", ChannelID: e.channel,
				CustomerEmail: fmt.Sprintf("s%d-%d@example.com", batch, i), TransactionReference: "order-1",
				TransactionDate: time.Now(), Payload: json.RawMessage(`{"customer":{"email":"ann@example.com"},"type":"checkout"}`)}
		}
		return out
	}

	run := func(b *testing.B, prepare func(i int) any, op func(in any) error) {
		inputs := make([]any, b.N)
		for i := range inputs {
			inputs[i] = prepare(i)
		}
		runConcurrently(b, concurrency, size, "events/s", func(i int) error { return op(inputs[i]) })
	}

	var batches atomic.Int64 // every sub-benchmark run gets fresh addresses
	b.Run("http", func(b *testing.B) {
		run(b, func(int) any { return body(int(batches.Add(1))) }, func(in any) error {
			r := e.do(b, http.MethodPost, "/events/batch", e.token, in.(string))
			if r.status != http.StatusOK {
				return fmt.Errorf("status %d: %s", r.status, r.body)
			}
			return nil
		})
	})
	b.Run("store only", func(b *testing.B) {
		run(b, func(int) any { return newEvents(int(batches.Add(1))) }, func(in any) error {
			_, err := e.store.Events.AcceptEvents(context.Background(), in.([]eventdb.NewEvent))
			return err
		})
	})
	table, err := e.store.Events.CreateEventsScratch(context.Background(), "bench_copy")
	require.NoError(b, err)
	b.Run("bare copy", func(b *testing.B) {
		run(b, func(int) any { return newEvents(int(batches.Add(1))) }, func(in any) error {
			return table.Copy(context.Background(), in.([]eventdb.NewEvent))
		})
	})
}
