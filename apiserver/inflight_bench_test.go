package apiserver_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
)

// BenchmarkBatchBytesInFlight sends rounds of 48 concurrent invalid 8 MiB
// batches (500 events of 16 KiB each, the body broken at its last byte,
// so that every byte is read and scanned before the 400) of four accounts
// (so that together they can fill the process's cap) to the real HTTP
// server, and reports the peak resident memory of the process over the
// rounds (VmHWM, reset before each sub-benchmark), with how many batches
// were read and how many refused unread (503). "capped" runs with the
// default cap of batch bytes in flight (64 MiB), "uncapped" with none,
// to show what the cap saves. The process is the API server, its issuer
// and the client, which holds one copy of the body. Target: peak ≤ 300 MB
// with the cap.
//
//	go test ./apiserver/ -run '^$' -bench BatchBytesInFlight -benchtime 5x
func BenchmarkBatchBytesInFlight(b *testing.B) {
	const concurrency, eventsPerBatch = 48, 500
	for _, c := range []struct {
		name string
		cap  int64
	}{
		{"capped", apiserver.DefaultBatchInflightBytes},
		{"uncapped", 1 << 40},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b, func(o *apiserver.Options) {
				o.RatePerSecond, o.RateBurst = 1e6, 1e6 // measure, not throttle
				o.BatchInflightBytes = c.cap
			})
			e.srv.Client().Transport.(*http.Transport).MaxIdleConnsPerHost = concurrency
			tokens := []string{e.token}
			for range 3 {
				_, tok := e.otherAccount(b)
				tokens = append(tokens, tok)
			}
			body := invalidBatch(b, 8<<20, eventsPerBatch)
			resetPeakRSS(b)
			var mu sync.Mutex
			statuses := map[int]int{}
			b.ResetTimer()
			for b.Loop() {
				var wg sync.WaitGroup
				for i := range concurrency {
					wg.Go(func() {
						status := postUncounted(e, tokens[i%len(tokens)], body)
						mu.Lock()
						statuses[status]++
						mu.Unlock()
					})
				}
				wg.Wait()
			}
			b.StopTimer()
			b.ReportMetric(peakRSSMB(b), "peak_rss_MB")
			total := float64(b.N * concurrency)
			b.ReportMetric(float64(statuses[http.StatusBadRequest])/total, "read/op")
			b.ReportMetric(float64(statuses[http.StatusServiceUnavailable]+statuses[0])/total, "refused/op")
			for s := range statuses {
				if s != 0 && s != http.StatusBadRequest && s != http.StatusServiceUnavailable {
					b.Fatalf("unexpected status %d (%v)", s, statuses)
				}
			}
		})
	}
}

// postUncounted posts body as a batch and returns the status, or 0 when
// the server closed the connection before the client had sent the body
// and read the answer (the client may see a refused batch so: the server
// answers it unread and closes).
func postUncounted(e *env, token string, body []byte) int {
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/events/batch", bytes.NewReader(body))
	if err != nil {
		return -1
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := e.srv.Client().Do(req)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// invalidBatch is a batch of n events padded to size bytes, its last
// byte a syntax error.
func invalidBatch(b *testing.B, size, n int) []byte {
	per := (size - 64) / n
	var sb strings.Builder
	sb.WriteString(`{"events":[`)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		head := fmt.Sprintf(`{"type":"checkout","metadata":{"note%d":"`, i)
		sb.WriteString(head)
		sb.WriteString(strings.Repeat("x", per-len(head)-4))
		sb.WriteString(`"}}`)
	}
	sb.WriteString("]")
	out := []byte(sb.String())
	require.Less(b, len(out), size)
	out = append(out, bytes.Repeat([]byte(" "), size-len(out)-1)...)
	return append(out, ']') // not the closing brace: invalid
}

// resetPeakRSS resets the process's peak resident memory (VmHWM) to its
// current resident memory.
func resetPeakRSS(b *testing.B) {
	require.NoError(b, os.WriteFile("/proc/self/clear_refs", []byte("5"), 0))
}

// peakRSSMB is the process's peak resident memory (VmHWM) in MB (10^6).
func peakRSSMB(b *testing.B) float64 {
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(b, err)
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			require.NoError(b, err)
			return float64(kb) * 1024 / 1e6
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
