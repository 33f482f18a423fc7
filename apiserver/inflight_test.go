package apiserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
)

// paddedBatch is a batch of the given events padded with white space to
// exactly size bytes.
func paddedBatch(t testing.TB, size int, events ...map[string]any) []byte {
	t.Helper()
	if events == nil {
		events = []map[string]any{}
	}
	raw, err := json.Marshal(map[string]any{"events": events})
	require.NoError(t, err)
	require.LessOrEqual(t, len(raw), size)
	return append(raw[:len(raw)-1], append(bytes.Repeat([]byte(" "), size-len(raw)), '}')...)
}

// postBatch posts body as a batch, declaring its length when chunked is
// false.
func (e *env) postBatch(t testing.TB, body io.Reader, length int64) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/events/batch", body)
	require.NoError(t, err)
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.token)
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// holdBatch starts posting body (its length declared) but sends only its
// first 8 KiB (more than the client's write buffer, so that they leave
// it); finish sends the rest and returns the answer, abandon makes the
// client go away.
const heldPart = 8 << 10

func (e *env) holdBatch(t testing.TB, body []byte) (finish func() response, abandon func()) {
	t.Helper()
	pr, pw := io.Pipe()
	answer := make(chan response, 1)
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/events/batch", pr)
		if err != nil {
			return
		}
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+e.token)
		res, err := e.srv.Client().Do(req)
		if err != nil {
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		answer <- response{status: res.StatusCode, header: res.Header, body: b}
	}()
	_, err := pw.Write(body[:heldPart])
	require.NoError(t, err)
	finish = func() response {
		t.Helper()
		_, err := pw.Write(body[heldPart:])
		require.NoError(t, err)
		require.NoError(t, pw.Close())
		<-gone
		require.Len(t, answer, 1, "the held batch got no answer")
		return <-answer
	}
	abandon = func() {
		pw.CloseWithError(io.ErrUnexpectedEOF)
		<-gone
	}
	return finish, abandon
}

// The request bytes of batches in flight are capped per process: a batch
// reserves its declared length before it is read; one that does not fit
// is refused with 503 and Retry-After, unread, while smaller ones still
// fit; the bytes come back when a batch is answered, whatever the answer,
// and when its client goes away.
func TestBatchBytesInFlightAreCapped(t *testing.T) {
	t.Parallel()
	const budget = 64 << 10
	e := newEnv(t, func(o *apiserver.Options) { o.BatchInflightBytes = budget })
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	post := func(body []byte) response {
		t.Helper()
		return e.postBatch(t, bytes.NewReader(body), int64(len(body)))
	}
	probe := paddedBatch(t, 30<<10) // no events: 400 once it is read
	// refusedWhileHeld waits for the held batch's bytes to be reserved,
	// then posts the probe, which no longer fits.
	refusedWhileHeld := func(held int64) response {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, held, e.api.BatchBytesInFlight())
		}, 10*time.Second, 5*time.Millisecond)
		return post(probe)
	}

	held := paddedBatch(t, 40<<10, e.minimalEvent("checkout"))
	finish, _ := e.holdBatch(t, held)
	r := refusedWhileHeld(int64(len(held)))
	p := requireProblem(t, r, http.StatusServiceUnavailable)
	assert.Equal(t, "5", r.header.Get("Retry-After"))
	assert.Contains(t, p["detail"], "retry later")
	small := paddedBatch(t, 4<<10, e.minimalEvent("checkout"))
	r = post(small)
	assert.Equal(t, http.StatusOK, r.status, "a small batch still fits: %s", r.body)
	assert.Equal(t, int64(len(held)), e.api.BatchBytesInFlight(), "the small batch's bytes are back")
	r = finish()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Contains(t, string(r.body), `"status":202`)
	assert.Zero(t, e.api.BatchBytesInFlight(), "the bytes are back once the answer is decided")

	// Every answer gives the bytes back: each of these needs more than
	// half the budget.
	tooMany := make([]map[string]any, 501)
	for i := range tooMany {
		tooMany[i] = map[string]any{}
	}
	for name, c := range map[string]struct {
		body   []byte
		status int
	}{
		"accepted":      {held, http.StatusOK},
		"no events":     {probe, http.StatusBadRequest},
		"syntax error":  {append(paddedBatch(t, 40<<10-1), '}'), http.StatusBadRequest},
		"501 events":    {paddedBatch(t, 40<<10, tooMany...), http.StatusRequestEntityTooLarge},
		"invalid event": {paddedBatch(t, 40<<10, map[string]any{"type": 1}), http.StatusOK},
	} {
		for range 2 {
			r := post(c.body)
			assert.Equal(t, c.status, r.status, "%s: %s", name, r.body)
			assert.Zero(t, e.api.BatchBytesInFlight(), name)
		}
	}

	// A client that goes away halfway gives its bytes back too.
	_, abandon := e.holdBatch(t, held)
	requireProblem(t, refusedWhileHeld(int64(len(held))), http.StatusServiceUnavailable)
	abandon()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Zero(c, e.api.BatchBytesInFlight())
	}, 10*time.Second, 5*time.Millisecond)
	r = post(held)
	assert.Equal(t, http.StatusOK, r.status, "%s", r.body)

	// Declared over the largest batch (8 MiB): 413 before a byte is read.
	r = post(make([]byte, 8<<20+1))
	requireProblem(t, r, http.StatusRequestEntityTooLarge)
}

// A batch without a declared length (chunked) reserves the largest
// batch's 8 MiB, and gives them back when answered.
func TestChunkedBatchReservesTheLargestBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *apiserver.Options) { o.BatchInflightBytes = 8 << 20 })
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	small := paddedBatch(t, 4<<10, e.minimalEvent("checkout"))
	chunked := func() response {
		t.Helper()
		return e.postBatch(t, io.MultiReader(bytes.NewReader(small)), -1)
	}
	for range 3 {
		r := chunked()
		assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.Zero(t, e.api.BatchBytesInFlight())
	}
	held := paddedBatch(t, 16<<10, e.minimalEvent("checkout"))
	finish, _ := e.holdBatch(t, held)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, int64(len(held)), e.api.BatchBytesInFlight())
	}, 10*time.Second, 5*time.Millisecond)
	requireProblem(t, chunked(), http.StatusServiceUnavailable)
	require.Equal(t, http.StatusOK, finish().status)
	r := chunked()
	assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
}
