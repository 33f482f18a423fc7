package apiserver

import (
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/touchpoint/touchpoint/internal/ratelimit"
)

// Default per-client rate limit: a token bucket per API client
// and API replica — with N replicas a client may send N times as much.
const (
	DefaultRatePerSecond = 100
	DefaultRateBurst     = 200
)

// Capacity of the clients' limiter table (internal/ratelimit: bounded,
// the least recently used key evicted): API clients are registered, so it
// never fills in practice. Client addresses are limited by
// ratelimit.ByAddress, the public pages' and the providers' routes each
// with a rate of its own.
const clientLimitEntries = 100_000

// newClientLimits is the token bucket of each API client.
func newClientLimits(perSecond float64, burst int) *ratelimit.Limiter[string] {
	if perSecond <= 0 {
		perSecond = DefaultRatePerSecond
	}
	if burst <= 0 {
		burst = DefaultRateBurst
	}
	return ratelimit.New[string](perSecond, burst, clientLimitEntries)
}

// The default limit of a client address on the mail providers' routes.
// A provider posts from a few addresses, one event a request (SendGrid:
// batches), so the bucket is wide; it stops one address from making the
// API read and verify without end. SNS does not retry a 4xx: keep its
// delivery policy's maxReceivesPerSecond below the rate.
const (
	DefaultReportRatePerSecond = 50
	DefaultReportRateBurst     = 500
)

// newReportLimits is the limit of each client address on the mail
// providers' routes.
func newReportLimits(trusted []netip.Prefix, perSecond float64, burst int) *ratelimit.ByAddress {
	if perSecond <= 0 {
		perSecond = DefaultReportRatePerSecond
	}
	if burst <= 0 {
		burst = DefaultReportRateBurst
	}
	return ratelimit.NewByAddress(trusted, perSecond, burst)
}

// tooManyRequests is the 429 of an exhausted bucket, with Retry-After in
// whole seconds (at least 1).
func tooManyRequests(wait time.Duration) *apiError {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	e := newError(http.StatusTooManyRequests, "rate limit of this client exceeded; retry in %d s", secs)
	e.header = map[string]string{"Retry-After": strconv.Itoa(secs)}
	return e
}
