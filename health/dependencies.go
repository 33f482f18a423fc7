package health

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Dependencies is the readiness of the API, which a load balancer asks
// at its GET /readyz: PostgreSQL must answer, since without it the API
// can do nothing (503 "unavailable"); the other dependencies (Temporal,
// the issuer) only make it "degraded" with 200, since events are still
// accepted, so the load balancer keeps the replica.
//
// Anyone may ask, so the answer is remembered for AnswerFor: however many
// requests arrive, the dependencies are checked at most once a second,
// and concurrent requests wait for the one check under way.
type Dependencies struct {
	// Ping checks PostgreSQL.
	Ping func(ctx context.Context) error
	// Others reports the rest by name (nil: none); a dependency's error
	// may say its state (ReadinessState), else it is "down".
	Others func(ctx context.Context) map[string]error
	// Down learns of each dependency found down, for the log.
	Down func(ctx context.Context, name, state string, err error)

	mu   sync.Mutex // held during a check
	at   time.Time
	code int
	body map[string]any
}

// AnswerFor is how long a readiness answer is reused.
const AnswerFor = time.Second

// Answer is the status code and body of /readyz at now, from the last
// check when it is younger than AnswerFor.
func (d *Dependencies) Answer(ctx context.Context, now time.Time) (int, map[string]any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.body != nil && now.Sub(d.at) < AnswerFor && !now.Before(d.at) {
		return d.code, d.body
	}
	d.code, d.body = d.check(ctx)
	d.at = now
	return d.code, d.body
}

// check pings PostgreSQL and asks Others about the rest, side by side so
// a slow other check cannot starve the ping. It outlives a caller that
// hangs up: others wait for its answer.
func (d *Dependencies) check(ctx context.Context) (int, map[string]any) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	others := make(chan map[string]error, 1)
	go func() {
		if d.Others == nil {
			others <- nil
			return
		}
		others <- d.Others(ctx)
	}()
	pgErr := d.Ping(ctx)
	errs := map[string]error{}
	maps.Copy(errs, <-others)
	errs["postgresql"] = pgErr

	deps := map[string]string{}
	status, code := "ok", http.StatusOK
	for _, name := range slices.Sorted(maps.Keys(errs)) {
		deps[name] = "ok"
		if err := errs[name]; err != nil {
			deps[name] = "down"
			var st interface{ ReadinessState() string }
			if errors.As(err, &st) {
				deps[name] = st.ReadinessState()
			}
			status = "degraded"
			if d.Down != nil {
				d.Down(ctx, name, deps[name], err)
			}
		}
	}
	if pgErr != nil {
		status, code = "unavailable", http.StatusServiceUnavailable
	}
	return code, map[string]any{"status": status, "dependencies": deps}
}
