package health_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/health"
)

type stateErr struct{ state string }

func (e stateErr) Error() string          { return "temporal: " + e.state }
func (e stateErr) ReadinessState() string { return e.state }

func TestDependencies(t *testing.T) {
	t.Parallel()
	var pings atomic.Int32
	var pgDown, temporalDown atomic.Bool
	var downs []string
	d := &health.Dependencies{
		Ping: func(context.Context) error {
			pings.Add(1)
			if pgDown.Load() {
				return errors.New("connection refused")
			}
			return nil
		},
		Others: func(context.Context) map[string]error {
			if temporalDown.Load() {
				return map[string]error{"temporal": stateErr{"starting"}}
			}
			return map[string]error{"temporal": nil}
		},
		Down: func(_ context.Context, name, state string, _ error) { downs = append(downs, name+"="+state) },
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

	code, body := d.Answer(t.Context(), at)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, map[string]any{"status": "ok", "dependencies": map[string]string{"postgresql": "ok", "temporal": "ok"}}, body)

	temporalDown.Store(true)
	code, _ = d.Answer(t.Context(), at.Add(health.AnswerFor/2))
	assert.Equal(t, http.StatusOK, code, "within a second the answer is the last one")
	assert.Equal(t, int32(1), pings.Load())

	code, body = d.Answer(t.Context(), at.Add(health.AnswerFor))
	assert.Equal(t, http.StatusOK, code, "Temporal down leaves the API useful")
	assert.Equal(t, "degraded", body["status"])
	assert.Equal(t, map[string]string{"postgresql": "ok", "temporal": "starting"}, body["dependencies"])

	pgDown.Store(true)
	code, body = d.Answer(t.Context(), at.Add(2*health.AnswerFor))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "unavailable", body["status"])
	assert.Equal(t, []string{"temporal=starting", "postgresql=down", "temporal=starting"}, downs)

	code, _ = d.Answer(t.Context(), at)
	assert.Equal(t, http.StatusServiceUnavailable, code, "a clock that went back checks again")
	assert.Equal(t, int32(4), pings.Load())
}
