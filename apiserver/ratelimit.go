package apiserver

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Default per-client rate limit (SPEC §4): a token bucket per API client
// and API replica — with N replicas a client may send N times as much.
const (
	DefaultRatePerSecond = 100
	DefaultRateBurst     = 200
)

// limiter keeps one token bucket per client. Buckets idle long enough to
// be full again are dropped, so the map holds only active clients.
type limiter struct {
	rate  rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(perSecond float64, burst int) *limiter {
	if perSecond <= 0 {
		perSecond = DefaultRatePerSecond
	}
	if burst <= 0 {
		burst = DefaultRateBurst
	}
	return &limiter{rate: rate.Limit(perSecond), burst: burst, buckets: map[string]*bucket{}}
}

// allow takes a token from the client's bucket; when there is none it
// says how long until there is.
func (l *limiter) allow(clientID string, now time.Time) (ok bool, retryAfter time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	refill := time.Duration(float64(l.burst) / float64(l.rate) * float64(time.Second))
	if now.Sub(l.swept) > refill {
		for id, b := range l.buckets {
			if now.Sub(b.seen) > refill {
				delete(l.buckets, id)
			}
		}
		l.swept = now
	}
	b := l.buckets[clientID]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.rate, l.burst)}
		l.buckets[clientID] = b
	}
	b.seen = now
	if b.lim.AllowN(now, 1) {
		return true, 0
	}
	r := b.lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	r.CancelAt(now) // only asked how long; the token is not taken
	return false, wait
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
