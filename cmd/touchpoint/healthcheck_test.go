package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealthcheck(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			w.Write([]byte("ok\n"))
		case "/readyz":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/moved":
			http.Redirect(w, r, "/healthz", http.StatusFound)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	}))
	t.Cleanup(srv.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string // "" means healthy
	}{
		{"2xx is healthy", []string{srv.URL + "/healthz"}, ""},
		{"503 is unhealthy", []string{srv.URL + "/readyz"}, "503 Service Unavailable"},
		{"redirects are not followed", []string{srv.URL + "/moved"}, "302 Found"},
		{"nothing listening", []string{closed.URL + "/healthz"}, "connection refused"},
		{"timeout", []string{"--timeout", "100ms", srv.URL + "/slow"}, "deadline exceeded"},
		{"no URL", nil, "usage: touchpoint healthcheck"},
		{"two URLs", []string{srv.URL, srv.URL}, "usage: touchpoint healthcheck"},
		{"not an http URL", []string{"127.0.0.1:8080/healthz"}, "is not an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			env := &environment{stdout: &out, stderr: io.Discard, getenv: func(string) string { return "" },
				logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
			err := run(context.Background(), env, append([]string{"healthcheck"}, tc.args...))
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.Contains(t, out.String(), "200 OK")
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}
