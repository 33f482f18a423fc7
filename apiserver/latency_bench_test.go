package apiserver_test

import (
	"slices"
	"testing"
	"time"
)

// minLatencySamples is the fewest requests a p99 is reported over: of
// fewer, the "99th percentile" is one of the slowest handful.
const minLatencySamples = 1000

// reportLatency reports the p50 of lat in milliseconds, its p99 when lat
// holds at least minLatencySamples, and their number.
func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat)), "samples")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	if len(lat) < minLatencySamples {
		b.Logf("no p99 over %d requests (at least %d: -benchtime %dx)", len(lat), minLatencySamples, minLatencySamples)
		return
	}
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
}
