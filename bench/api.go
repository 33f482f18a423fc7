package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
)

// benchAPI is the HTTP client of one run.
type benchAPI struct {
	t      Target
	http   *http.Client
	tokens *tokenSource
}

// at is a copy of a, with its tokens, that calls the API at baseURL.
func (a *benchAPI) at(baseURL string) *benchAPI {
	b := *a
	b.t.BaseURL = baseURL
	return &b
}

func newBenchAPI(ctx context.Context, t Target, concurrency int) (*benchAPI, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = concurrency // one kept-alive connection per client
	a := &benchAPI{t: t, http: &http.Client{Transport: tr, Timeout: time.Minute}}
	a.tokens = &tokenSource{t: t, http: a.http, now: time.Now}
	if _, err := a.tokens.get(ctx); err != nil {
		return nil, err
	}
	return a, a.awaitReady(ctx)
}

// send sends the request newReq makes, with the run's token; answered
// 401, it gets a new token and sends a new request once more. The
// caller closes the answer's body.
func (a *benchAPI) send(ctx context.Context, newReq func() (*http.Request, error)) (*http.Response, error) {
	for retried := false; ; retried = true {
		tok, err := a.tokens.get(ctx)
		if err != nil {
			return nil, err
		}
		req, err := newReq()
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := a.http.Do(req)
		if err != nil || res.StatusCode != http.StatusUnauthorized || retried {
			return res, err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		a.tokens.rejected(tok)
	}
}

// awaitReady waits until the API accepts the token: a fresh API answers
// 503 until it has discovered the issuer.
func (a *benchAPI) awaitReady(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := a.call(ctx, http.MethodGet, "/event-types?name=touchpoint-bench-probe", nil, http.StatusOK, nil)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// roundTrip sends req with c and reads the answer (readAnswer).
func roundTrip(c *http.Client, req *http.Request, want int, out any) error {
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	return readAnswer(res, want, out)
}

// readAnswer decodes the answer into out, unless its status is not want,
// and closes its body.
func readAnswer(res *http.Response, want int, out any) error {
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %s: %s", res.Request.Method, res.Request.URL.Path, res.Status, bytes.TrimSpace(raw))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// call sends one JSON request with the token.
func (a *benchAPI) call(ctx context.Context, method, path string, in any, want int, out any) error {
	var raw []byte
	if in != nil {
		var err error
		if raw, err = json.Marshal(in); err != nil {
			return err
		}
	}
	res, err := a.send(ctx, func() (*http.Request, error) {
		var body io.Reader
		if raw != nil {
			body = bytes.NewReader(raw)
		}
		req, err := http.NewRequestWithContext(ctx, method, a.t.BaseURL+path, body)
		if err == nil && raw != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req, err
	})
	if err != nil {
		return err
	}
	return readAnswer(res, want, out)
}

// immediateEventType creates the event type, makes its settings send at
// once and never throttle, with a reminder after reminder ("": none), and
// returns its id.
func (a *benchAPI) immediateEventType(ctx context.Context, name, reminder string) (string, error) {
	patch := map[string]any{"delay": "PT0S", "minDaysBetweenInvites": 0}
	if reminder != "" {
		patch["reminder"] = map[string]any{"delay": reminder}
	}
	id, n, err := a.eventType(ctx, name, patch)
	if err == nil && n == 0 {
		return "", fmt.Errorf("event type %s has no invite setting", id)
	}
	return id, err
}

// inactiveEventType creates the event type and deactivates its settings:
// its events get workflows that record "skipped" at once and send
// nothing. It returns the event type's id.
func (a *benchAPI) inactiveEventType(ctx context.Context, name string) (string, error) {
	id, _, err := a.eventType(ctx, name, map[string]any{"active": false})
	return id, err
}

// eventType creates the event type and applies patch to each of its
// invite settings (one a channel of the account). It returns the event
// type's id and how many settings it has.
func (a *benchAPI) eventType(ctx context.Context, name string, patch map[string]any) (string, int, error) {
	var et struct{ ID string }
	if err := a.call(ctx, http.MethodPost, "/event-types", map[string]any{"name": name}, http.StatusCreated, &et); err != nil {
		return "", 0, err
	}
	var settings struct{ Items []struct{ ID string } }
	if err := a.call(ctx, http.MethodGet, "/invite-settings?eventTypeId="+et.ID, nil, http.StatusOK, &settings); err != nil {
		return "", 0, err
	}
	for _, s := range settings.Items {
		if err := a.call(ctx, http.MethodPatch, "/invite-settings/"+s.ID, patch, http.StatusOK, nil); err != nil {
			return "", 0, err
		}
	}
	return et.ID, len(settings.Items), nil
}

// postRun is every answer of the accept phase, each the status of one
// POST /events (0 when the request failed), and how long it lasted.
type postRun timedRun[int]

// warmUp opens the run's c connections before the clock starts, with a
// few reads on each: the bare-insert baseline gets a warm pool too
// (warmPool), and a client that has been posting for a while has them.
// The reads also bring up the API's own database pool.
func (a *benchAPI) warmUp(ctx context.Context, typ string, c int, prog *progress) error {
	_, _, err := timeEach(ctx, "warm up", 4*c, c, prog, func(int) error {
		return a.call(ctx, http.MethodGet, "/event-types?name="+url.QueryEscape(typ), nil, http.StatusOK, nil)
	})
	if err != nil {
		return fmt.Errorf("warm up: %w", err)
	}
	return nil
}

// warmPipeline sends c events of an event type of their own through the
// whole stack — accept, workflow start, workflow, send — and waits until
// their invites are sent. The run then meets a stack that has worked
// (its connections open, its caches and heaps grown), as a running
// service is and as the baselines' warm pool is, rather than one started
// a moment ago. These events count nowhere.
func (a *benchAPI) warmPipeline(ctx context.Context, runID string, c int, prog *progress) error {
	typ := "bench-warm-" + runID
	etID, err := a.immediateEventType(ctx, typ, "")
	if err != nil {
		return fmt.Errorf("warm up: %w", err)
	}
	for _, o := range a.fire(ctx, benchBodies(typ, a.t.ChannelID, runID+"-warm", c), c, prog).outcomes {
		if o.answer != http.StatusAccepted {
			return fmt.Errorf("warm up: POST /events answered %d", o.answer)
		}
	}
	if err := waitInvitesSent(ctx, a, a.t.DatabaseURL, typ, etID, c, prog); err != nil {
		return fmt.Errorf("warm up: %w", err)
	}
	return nil
}

// fire posts every body from concurrency clients at once.
func (a *benchAPI) fire(ctx context.Context, bodies [][]byte, concurrency int, prog *progress) postRun {
	return postRun(timeAll(ctx, "accept", len(bodies), concurrency, prog, func(i int) int { return a.post(ctx, bodies[i]) }))
}

// post sends one event and returns the answer's status, 0 on failure.
func (a *benchAPI) post(ctx context.Context, body []byte) int {
	res, err := a.send(ctx, jsonPost(ctx, a.t.BaseURL+"/events", body))
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// summarize fills the accept figures of res: throughput and latency of
// the 202s, a count of every other answer by status ("transport" for
// requests that got none).
func (r postRun) summarize(res *Result) {
	res.Errors = map[string]int{"503": 0}
	var lat []time.Duration
	for _, o := range r.outcomes {
		switch o.answer {
		case http.StatusAccepted:
			lat = append(lat, o.latency)
		case 0:
			res.Errors["transport"]++
		default:
			res.Errors[strconv.Itoa(o.answer)]++
		}
	}
	res.Accepted = len(lat)
	res.AcceptedPerS = round(float64(len(lat))/r.elapsed.Seconds(), 1)
	res.AcceptP50MS = percentileMS(lat, 50)
	res.AcceptP95MS = percentileMS(lat, 95)
	res.AcceptP99MS = percentileMS(lat, 99)
}

// jsonPost makes POST requests of body to url.
func jsonPost(ctx context.Context, url string, body []byte) func() (*http.Request, error) {
	return func() (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req, err
	}
}

// fanOut calls op(0) … op(n-1) from the given number of goroutines; once
// ctx ends it starts no more calls.
func fanOut(ctx context.Context, n, goroutines int, op func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(goroutines, n) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				op(i)
			}
		})
	}
	wg.Wait()
}

// timed is one call's answer and how long it took.
type timed[T any] struct {
	answer  T
	latency time.Duration
}

// timedRun is every answer of a phase and how long the phase lasted.
type timedRun[T any] struct {
	outcomes []timed[T]
	elapsed  time.Duration
}

// timeAll calls op(0) … op(n-1), c at once, as the progress's phase
// label, and returns each answer with how long it took.
func timeAll[T any](ctx context.Context, label string, n, c int, prog *progress, op func(i int) T) timedRun[T] {
	out := make([]timed[T], n)
	done := prog.phase(label, n)
	start := time.Now()
	fanOut(ctx, n, c, func(i int) {
		t0 := time.Now()
		out[i].answer = op(i)
		out[i].latency = time.Since(t0)
		prog.add(1)
	})
	run := timedRun[T]{out, time.Since(start)}
	done()
	return run
}

// percentileMS is the p-th percentile of lat (nearest rank) in ms; it
// sorts lat.
func percentileMS(lat []time.Duration, p int) float64 {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	rank := max((p*len(lat)+99)/100, 1) // ceil(p/100 · n), 1-based
	return round(float64(lat[rank-1].Microseconds())/1000, 2)
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// waitInvitesSent waits until want invites of type typ are sent: with a
// database URL by one COUNT query every 50 ms (which also notices invites
// that ended otherwise), else by paging GET /events?status=sent.
func waitInvitesSent(ctx context.Context, api *benchAPI, databaseURL, typ, eventTypeID string, want int, prog *progress) error {
	done := prog.phase("send", want)
	defer done()
	count, interval := api.sentCounter(typ), 500*time.Millisecond
	if databaseURL != "" {
		db, err := store.Open(ctx, databaseURL)
		if err != nil {
			return err
		}
		defer db.Close()
		count, interval = dbSentCounter(storeset.New(db, ""), eventTypeID), 50*time.Millisecond
	}
	for {
		sent, ended, err := count(ctx)
		if err != nil {
			return fmt.Errorf("count sent invites: %w", err)
		}
		prog.set(sent)
		switch {
		case sent >= want:
			return nil
		case sent+ended >= want:
			return fmt.Errorf("%d of %d invites ended without being sent", ended, want)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d invites sent: %w", sent, want, ctx.Err())
		case <-time.After(interval):
		}
	}
}

// sentCounter counts what is sent, and what ended otherwise.
type sentCounter func(ctx context.Context) (sent, ended int, err error)

// dbSentCounter counts with one query (store.CountInvitesOfType).
func dbSentCounter(st *store.Store, eventTypeID string) sentCounter {
	return func(ctx context.Context) (sent, ended int, err error) {
		c, err := st.Events.CountInvitesOfType(ctx, eventTypeID)
		return c.Sent, c.Ended, err
	}
}

func (a *benchAPI) sentCounter(typ string) sentCounter {
	return func(ctx context.Context) (int, int, error) {
		n := 0
		err := a.eachEvent(ctx, "type="+url.QueryEscape(typ)+"&status=sent", func(benchEvent) { n++ })
		return n, 0, err
	}
}

// benchEvent is what bench reads of a stored event.
type benchEvent struct {
	ID         string    `json:"id"`
	ReceivedAt time.Time `json:"receivedAt"`
	Invite     struct {
		Status   string     `json:"status"`
		SentAt   *time.Time `json:"sentAt"`
		Reminder *struct {
			Status string `json:"status"`
		} `json:"reminder"`
	} `json:"invite"`
}

// eachEvent calls fn for every event of GET /events?query, page by page.
func (a *benchAPI) eachEvent(ctx context.Context, query string, fn func(benchEvent)) error {
	cursor := ""
	for {
		var page struct {
			Items      []benchEvent `json:"items"`
			NextCursor *string      `json:"nextCursor"`
		}
		path := "/events?limit=200&" + query
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := a.call(ctx, http.MethodGet, path, nil, http.StatusOK, &page); err != nil {
			return err
		}
		for _, e := range page.Items {
			fn(e)
		}
		if page.NextCursor == nil || len(page.Items) == 0 {
			return nil
		}
		cursor = *page.NextCursor
	}
}

func (a *benchAPI) listEvents(ctx context.Context, typ string) ([]benchEvent, error) {
	var events []benchEvent
	err := a.eachEvent(ctx, "type="+url.QueryEscape(typ), func(e benchEvent) { events = append(events, e) })
	return events, err
}

// summarizeInvites fills the invite figures of res from the stored
// events: sent/s over the span from the first arrival to the last send
// (the burst and the drain after it), and the latency sentAt −
// receivedAt, all by the server's clock. The invites are due on arrival,
// so the largest latency is the largest lag past the due time.
func summarizeInvites(res *Result, events []benchEvent) {
	var lat []time.Duration
	var first, last time.Time
	for _, e := range events {
		if first.IsZero() || e.ReceivedAt.Before(first) {
			first = e.ReceivedAt
		}
		if e.Invite.Status != "sent" || e.Invite.SentAt == nil {
			continue
		}
		lat = append(lat, e.Invite.SentAt.Sub(e.ReceivedAt))
		if e.Invite.SentAt.After(last) {
			last = *e.Invite.SentAt
		}
	}
	res.InvitesSent = len(lat)
	if len(lat) > 0 {
		span := max(last.Sub(first), time.Millisecond)
		res.InvitesPerS = round(float64(len(lat))/span.Seconds(), 1)
	}
	res.InviteLatencyP50MS = percentileMS(lat, 50)
	res.InviteLatencyP99MS = percentileMS(lat, 99)
	res.InviteLagMaxMS = percentileMS(lat, 100)
}
