package httpmw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/httpmw"
)

type idKey struct{}

// TestRequestID: a sane incoming id is adopted, anything else replaced by
// a fresh one; either is echoed and handed on, with nosniff.
func TestRequestID(t *testing.T) {
	t.Parallel()
	var seen string
	h := httpmw.RequestID(func(ctx context.Context, id string) context.Context { return context.WithValue(ctx, idKey{}, id) },
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen, _ = r.Context().Value(idKey{}).(string) }))
	for in, adopted := range map[string]bool{"trace-1234.abc:def_9": true, "": false, "has space": false,
		strings.Repeat("a", 129): false, "inject\"quote": false, "ünïcode": false} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-Request-Id", in)
		h.ServeHTTP(w, r)
		got := w.Header().Get("X-Request-Id")
		if adopted {
			assert.Equal(t, in, got)
		} else {
			assert.Regexp(t, `^[0-9a-f]{32}$`, got, in)
		}
		assert.Equal(t, got, seen, "handed on")
		assert.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))
	}
}

// TestLog: one line per request, at error level for a 5xx (with the
// internal error), at debug for a probe, else at info; observe hears of
// every answer.
func TestLog(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var observed []int
	h := httpmw.Log(log, func(r *http.Request) httpmw.Line {
		line := httpmw.Line{RequestID: "rid", Path: "/masked", Route: r.URL.Path, Probe: r.URL.Path == "/probe",
			Attrs: []slog.Attr{slog.String("who", "me")}}
		if r.URL.Path == "/fail" {
			line.Err = errors.New("inside")
		}
		return line
	}, func(route, method string, status int, took time.Duration) { observed = append(observed, status) },
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/fail":
				w.WriteHeader(http.StatusInternalServerError)
			case "/empty":
			default:
				_, _ = io.WriteString(w, "hello")
			}
		}))
	for _, path := range []string{"/fail", "/probe", "/empty", "/page?secret=1"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	var lines []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		lines = append(lines, m)
	}
	require.Len(t, lines, 4)
	assert.Equal(t, "ERROR", lines[0]["level"])
	assert.Equal(t, "inside", lines[0]["error"])
	assert.Equal(t, "DEBUG", lines[1]["level"])
	assert.Equal(t, "INFO", lines[2]["level"])
	assert.EqualValues(t, 200, lines[2]["status"], "nothing written is a 200")
	assert.EqualValues(t, 5, lines[3]["bytes"])
	for _, l := range lines {
		assert.Equal(t, "rid", l["request_id"])
		assert.Equal(t, "/masked", l["path"], "the path as described, never the query")
		assert.Equal(t, "me", l["who"])
	}
	assert.Equal(t, []int{500, 200, 200, 200}, observed)
}

// TestRecover: a panic reaches panicked with its stack; once the handler
// has begun its answer (under Log), too late to change it.
func TestRecover(t *testing.T) {
	t.Parallel()
	type got struct {
		err      error
		answered bool
	}
	var last got
	panicked := func(w http.ResponseWriter, r *http.Request, err error, answered bool) {
		last = got{err, answered}
		if !answered {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}
	log := slog.New(slog.DiscardHandler)
	line := func(*http.Request) httpmw.Line { return httpmw.Line{} }
	before := httpmw.Log(log, line, nil, httpmw.Recover(panicked, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })))
	w := httptest.NewRecorder()
	before.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	require.Error(t, last.err)
	assert.Contains(t, last.err.Error(), "panic: boom")
	assert.Contains(t, last.err.Error(), "goroutine", "the stack")
	assert.False(t, last.answered)

	after := httpmw.Log(log, line, nil, httpmw.Recover(panicked, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		panic("late")
	})))
	w = httptest.NewRecorder()
	after.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusAccepted, w.Code)
	assert.True(t, last.answered)

	abort := httpmw.Recover(panicked, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	assert.PanicsWithValue(t, http.ErrAbortHandler, func() { abort.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)) })
}

// TestReadBody: a body within its limit is read whole; one declared
// longer is refused before it is read, and one that turns out longer as
// it arrives is refused too.
func TestReadBody(t *testing.T) {
	t.Parallel()
	read := func(body string, declared int64, limit int64) ([]byte, error) {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.ContentLength = declared
		return httpmw.ReadBody(httptest.NewRecorder(), r, limit)
	}
	b, err := read("hello", 5, 5)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))
	b, err = read("hello", -1, 5)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(b))
	_, err = read("hello", 5, 4)
	assert.ErrorIs(t, err, httpmw.ErrTooLarge)
	_, err = read("hello", -1, 4)
	assert.ErrorIs(t, err, httpmw.ErrTooLarge)
	_, err = read("hel", 5, 5)
	assert.Error(t, err)
	assert.NotErrorIs(t, err, httpmw.ErrTooLarge, "a body shorter than declared")
}
