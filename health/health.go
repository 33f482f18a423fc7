// Package health serves the probes of a process that has no API of its
// own (`touchpoint worker`): GET /healthz, the process is alive, and GET
// /readyz, every named check passes. Probes are unauthenticated, so each
// check runs at most once per CheckEvery however often they come; the
// answer says which checks fail, never why (that goes to the log).
// Dependencies is the readiness the API answers at its own /readyz.
package health

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/touchpoint/touchpoint/internal/memo"
)

// The probes' paths: LivePath answers 200 while the process runs,
// ReadyPath 200 only while every check passes.
const (
	LivePath  = "/healthz"
	ReadyPath = "/readyz"
)

// CheckEvery is how often, at most, a check runs; probes in between get
// its last result.
const CheckEvery = 2 * time.Second

// checkTimeout bounds one run of a check.
const checkTimeout = 2 * time.Second

// Check tells whether one thing the process needs works: nil, or why not.
type Check func(ctx context.Context) error

// Body is the JSON answer of /readyz: Status "ok" (200) or "unavailable"
// (503), and "ok" or "down" for each check by name.
type Body struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// Handler serves /healthz and /readyz with checks; logger gets a line
// each time a check that ran fails.
func Handler(checks map[string]Check, logger *slog.Logger) http.Handler {
	type named struct {
		name  string
		check *memo.Func[struct{}]
	}
	var all []named
	for _, name := range slices.Sorted(maps.Keys(checks)) {
		check := checks[name]
		all = append(all, named{name, memo.New(CheckEvery, func(ctx context.Context) (struct{}, error) {
			checkCtx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			err := check(checkCtx)
			if err != nil && ctx.Err() == nil { // not merely a prober that went away
				logger.WarnContext(ctx, "readiness check failed", "check", name, "error", err.Error())
			}
			return struct{}{}, err
		})})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+LivePath, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, Body{Status: "ok", Checks: map[string]string{}})
	})
	mux.HandleFunc("GET "+ReadyPath, func(w http.ResponseWriter, r *http.Request) {
		res := make([]error, len(all))
		var wg sync.WaitGroup
		for i, c := range all {
			wg.Go(func() { _, res[i] = c.check.Get(r.Context()) })
		}
		wg.Wait()
		body, code := Body{Status: "ok", Checks: map[string]string{}}, http.StatusOK
		for i, c := range all {
			body.Checks[c.name] = "ok"
			if res[i] != nil {
				body.Checks[c.name] = "down"
				body.Status, code = "unavailable", http.StatusServiceUnavailable
			}
		}
		if code != http.StatusOK {
			w.Header().Set("Retry-After", strconv.Itoa(int(CheckEvery/time.Second)))
		}
		writeJSON(w, code, body)
	})
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
