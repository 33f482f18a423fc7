package apiserver_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
)

func TestRateLimitPerClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *apiserver.Options) { o.RatePerSecond, o.RateBurst = 0.5, 3 })
	for i := range 3 {
		assert.Equal(t, http.StatusOK, e.get(t, "/event-types").status, "request %d is within the burst", i+1)
	}
	r := e.get(t, "/event-types")
	p := requireProblem(t, r, http.StatusTooManyRequests)
	assert.Contains(t, p["detail"], "rate limit")
	wait, err := strconv.Atoi(r.header.Get("Retry-After"))
	require.NoError(t, err)
	assert.InDelta(t, 2, wait, 1, "one token every 2 s")

	// Another client of the same account has a bucket of its own.
	other := e.tokenFor(t, e.account, auth.GroupReadonly)
	assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/event-types", other, nil).status)
	// Public routes are not limited.
	assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/healthz", "", nil).status)
}
