package apiserver_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/apiserver"
)

// TestConsoleIsMountedBelowItsPrefix: the console answers every path
// below /console/ itself, with no token; /console goes there.
func TestConsoleIsMountedBelowItsPrefix(t *testing.T) {
	t.Parallel()
	var paths []string
	e := newEnv(t, func(o *apiserver.Options) {
		o.Console = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			paths = append(paths, r.URL.Path)
			w.WriteHeader(http.StatusTeapot)
		})
	})
	for _, p := range []string{"/console/", "/console/reviews/rev-1", "/console/sign-in"} {
		assert.Equal(t, http.StatusTeapot, e.do(t, http.MethodGet, p, "", nil).status, p)
	}
	assert.Equal(t, []string{"/console/", "/console/reviews/rev-1", "/console/sign-in"}, paths)
	paths = nil
	assert.Equal(t, http.StatusTeapot, e.do(t, http.MethodGet, "/console", "", nil).status, "/console leads to /console/")
	assert.Equal(t, "/console/", paths[len(paths)-1])
	assert.Contains(t, e.logs.String(), `"route":"/console/"`, "console requests are logged like every request")
}
