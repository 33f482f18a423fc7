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

// heldBatch is a batch being posted whose body has been sent only in
// part: the server has read what was sent, and waits for the rest.
type heldBatch struct {
	t      testing.TB
	pw     *io.PipeWriter
	rest   []byte
	answer chan response
	gone   chan struct{}
}

// holdBatch starts posting body with token (its length declared), and
// sends its first sent bytes (over 8 KiB, so that they leave the client's
// write buffer).
func (e *env) holdBatch(t testing.TB, token string, body []byte, sent int) *heldBatch {
	t.Helper()
	pr, pw := io.Pipe()
	h := &heldBatch{t: t, pw: pw, rest: body[sent:], answer: make(chan response, 1), gone: make(chan struct{})}
	go func() {
		defer close(h.gone)
		req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/events/batch", pr)
		if err != nil {
			return
		}
		req.ContentLength = int64(len(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := e.srv.Client().Do(req)
		if err != nil {
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		h.answer <- response{status: res.StatusCode, header: res.Header, body: b}
	}()
	go pw.Write(body[:sent]) // returns once the server has read it, or refused it
	return h
}

// finish sends the rest of the body and returns the answer.
func (h *heldBatch) finish() response {
	h.t.Helper()
	go func() {
		h.pw.Write(h.rest)
		h.pw.Close()
	}()
	return h.wait()
}

// wait returns the answer the server gives without more of the body.
func (h *heldBatch) wait() response {
	h.t.Helper()
	select {
	case r := <-h.answer:
		h.pw.Close()
		return r
	case <-time.After(30 * time.Second):
		h.t.Fatal("the held batch got no answer")
		return response{}
	}
}

// abandon makes the client go away.
func (h *heldBatch) abandon() {
	h.pw.CloseWithError(io.ErrUnexpectedEOF)
	<-h.gone
}

// heldBytes waits until the server holds want bytes of batches of the
// account.
func (e *env) heldBytes(t testing.TB, account string, want int64) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, want, e.api.BatchBytesOf(account))
	}, 10*time.Second, 5*time.Millisecond)
}

// The request bytes of batches in flight are capped per process and per
// account, and counted as they are read: a client that declares a large
// body and sends a little of it holds what it sent. A batch whose bytes
// no longer fit is refused with 503 and Retry-After; the bytes come back
// when a batch is answered, whatever the answer, and when its client goes
// away.
func TestBatchBytesCountAsRead(t *testing.T) {
	t.Parallel()
	const budget = 256 << 10 // an account's share: 64 KiB
	e := newEnv(t, func(o *apiserver.Options) { o.BatchInflightBytes = budget })
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	post := func(body []byte) response {
		t.Helper()
		return e.postBatch(t, bytes.NewReader(body), int64(len(body)))
	}

	// Five batches that declare 60 KiB each (more than the process's
	// 256 KiB together) and send 10 KiB hold 50 KiB.
	declared := paddedBatch(t, 60<<10, e.minimalEvent("checkout"))
	var held []*heldBatch
	for i := range 5 {
		held = append(held, e.holdBatch(t, e.token, declared, 10<<10))
		e.heldBytes(t, e.account, int64(i+1)*10<<10)
	}
	assert.Equal(t, int64(50<<10), e.api.BatchBytesInFlight())
	small := paddedBatch(t, 12<<10, e.minimalEvent("checkout"))
	r := post(small)
	assert.Equal(t, http.StatusOK, r.status, "the account's share still has room: %s", r.body)
	e.heldBytes(t, e.account, 50<<10)

	// One more read past the account's share is refused, unread beyond.
	r = post(paddedBatch(t, 20<<10))
	p := requireProblem(t, r, http.StatusServiceUnavailable)
	assert.Equal(t, "5", r.header.Get("Retry-After"))
	assert.Contains(t, p["detail"], "as many bytes as one account may in this API process (65536, a quarter of its 262144)")
	e.heldBytes(t, e.account, 50<<10)

	// Clients that go away give their bytes back; the last batch, alone,
	// has room for the rest of its body.
	for _, h := range held[1:] {
		h.abandon()
	}
	e.heldBytes(t, e.account, 10<<10)
	r = held[0].finish()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Contains(t, string(r.body), `"status":202`)
	assert.Zero(t, e.api.BatchBytesInFlight(), "the bytes are back once the answer is decided")

	// Every answer gives the bytes back.
	tooMany := make([]map[string]any, 501)
	for i := range tooMany {
		tooMany[i] = map[string]any{}
	}
	for name, c := range map[string]struct {
		body   []byte
		status int
	}{
		"accepted":      {declared, http.StatusOK},
		"no events":     {paddedBatch(t, 40<<10), http.StatusBadRequest},
		"syntax error":  {append(paddedBatch(t, 40<<10-1), '}'), http.StatusBadRequest},
		"501 events":    {paddedBatch(t, 60<<10, tooMany...), http.StatusRequestEntityTooLarge},
		"invalid event": {paddedBatch(t, 40<<10, map[string]any{"type": 1}), http.StatusOK},
	} {
		for range 2 {
			r := post(c.body)
			assert.Equal(t, c.status, r.status, "%s: %s", name, r.body)
			assert.Zero(t, e.api.BatchBytesInFlight(), name)
		}
	}

	// Declared over the largest batch (8 MiB): 413 before a byte is read.
	requireProblem(t, post(make([]byte, 8<<20+1)), http.StatusRequestEntityTooLarge)
	assert.Zero(t, e.api.BatchBytesInFlight())
}

// A batch without a declared length (chunked) holds what it has sent,
// gives it back when answered, and is 413 once it has sent more than the
// largest batch.
func TestChunkedBatchHoldsWhatItSent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	chunked := func(body []byte) response {
		t.Helper()
		return e.postBatch(t, io.MultiReader(bytes.NewReader(body)), -1)
	}
	small := paddedBatch(t, 4<<10, e.minimalEvent("checkout"))
	for range 3 {
		r := chunked(small)
		assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.Zero(t, e.api.BatchBytesInFlight())
	}
	requireProblem(t, chunked(make([]byte, 8<<20+1)), http.StatusRequestEntityTooLarge)
	assert.Zero(t, e.api.BatchBytesInFlight())
}

// TestOneAccountCannotCrowdOutAnother: one account's slow uploads hold at
// most a quarter of the process's batch bytes. Its connections past that
// share are refused (503), and another account's batch still gets in
// while the first account's are held.
func TestOneAccountCannotCrowdOutAnother(t *testing.T) {
	t.Parallel()
	const budget = 256 << 10 // an account's share: 64 KiB
	e := newEnv(t, func(o *apiserver.Options) { o.BatchInflightBytes = budget })
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	other, otherTok := e.otherAccount(t)
	require.Equal(t, http.StatusCreated, e.do(t, http.MethodPost, "/event-types", otherTok, map[string]any{"name": "checkout"}).status)

	// Six slow connections of the first account, each declaring 60 KiB
	// and sending 40 KiB: the first is held, each other one refused.
	slow := paddedBatch(t, 60<<10, e.minimalEvent("checkout"))
	first := e.holdBatch(t, e.token, slow, 40<<10)
	e.heldBytes(t, e.account, 40<<10)
	for range 5 {
		r := e.holdBatch(t, e.token, slow, 40<<10).wait()
		p := requireProblem(t, r, http.StatusServiceUnavailable)
		assert.Contains(t, p["detail"], "as many bytes as one account may")
		assert.LessOrEqual(t, e.api.BatchBytesOf(e.account), int64(budget/4))
	}
	e.heldBytes(t, e.account, 40<<10)

	// The other account's batch of 60 KiB fits in what the first
	// account's connections could not take: they would hold 240 KiB of
	// the process's 256 KiB without the share.
	theirs := e.minimalEvent("checkout")
	theirs["channel"] = map[string]any{"id": defaultChannel(t, e, otherTok)}
	big := paddedBatch(t, 60<<10, theirs)
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/events/batch", bytes.NewReader(big))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+otherTok)
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, res.StatusCode, "%s", b)
	assert.Contains(t, string(b), `"status":202`)
	assert.Zero(t, e.api.BatchBytesOf(other))

	r := first.finish()
	assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Zero(t, e.api.BatchBytesInFlight())
}

// TestStalledBatchBodyGets408: a batch whose body has not arrived whole
// within the read timeout is answered 408 and its connection closed;
// its bytes come back. A batch that arrives in time is unaffected.
func TestStalledBatchBodyGets408(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *apiserver.Options) { o.BatchReadTimeout = 300 * time.Millisecond })
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	body := paddedBatch(t, 40<<10, e.minimalEvent("checkout"))
	stalled := e.holdBatch(t, e.token, body, 10<<10)
	r := stalled.wait()
	p := requireProblem(t, r, http.StatusRequestTimeout)
	assert.Contains(t, p["detail"], "did not arrive within 300ms")
	e.heldBytes(t, e.account, 0)

	r = e.postBatch(t, bytes.NewReader(body), int64(len(body)))
	assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
}
