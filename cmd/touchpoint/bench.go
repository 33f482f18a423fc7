package main

// `touchpoint bench` (SPEC §9): posts N events at concurrency C to a
// running stack, waits until every invite is sent and prints one JSON line
// of throughput and latency. Without --base-url it starts `touchpoint dev`
// as a child process of its own executable, in a temporary data dir and a
// fresh PostgreSQL database, with the rate limit raised (SPEC §10). With
// --baseline it also measures the bare ceilings of the same PostgreSQL and
// Temporal (bench_baseline.go).

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/config"
)

// benchOptions are the flags of `touchpoint bench`.
type benchOptions struct {
	events, concurrency int
	baseline            bool
	timeout             time.Duration
	target              benchTarget
}

// benchTarget is the stack under measurement. databaseURL and
// temporalAddress are optional against --base-url: without a database
// URL bench polls the API, and --baseline needs both.
type benchTarget struct {
	baseURL, authURL                    string
	clientID, clientSecret, channelID   string
	databaseURL, temporalAddress, space string
}

const benchUsage = `usage: touchpoint bench [--events N] [--concurrency C] [--baseline]
       [--base-url U --auth-url A --client-id … --client-secret … --channel-id …]
       [--database-url …] [--temporal-address …]

Without --base-url, bench starts "touchpoint dev" itself (temporary data dir,
fresh PostgreSQL database on the server of --database-url, free ports, rate
limit raised) and stops it at the end. Before the clock starts it sends C
events of an event type of their own end to end and waits for their invites.
Against --base-url the client's rate limit must allow the run.`

func parseBenchFlags(env *environment, args []string) (benchOptions, error) {
	var o benchOptions
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() { fmt.Fprintln(env.stderr, benchUsage); fs.PrintDefaults() }
	fs.IntVar(&o.events, "events", 1000, "events to post (N); the default takes about a minute on 2 cores")
	fs.IntVar(&o.concurrency, "concurrency", 32, "requests in flight at once (C)")
	fs.BoolVar(&o.baseline, "baseline", false, "also measure bare PostgreSQL inserts and Temporal workflows")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long")
	t := &o.target
	fs.StringVar(&t.baseURL, "base-url", "", "API of a running stack (default: start touchpoint dev)")
	fs.StringVar(&t.authURL, "auth-url", "", "issuer of a running stack")
	fs.StringVar(&t.clientID, "client-id", env.getenv("CLIENT_ID"), "client of a running stack (default $CLIENT_ID)")
	fs.StringVar(&t.clientSecret, "client-secret", env.getenv("CLIENT_SECRET"), "its secret (default $CLIENT_SECRET)")
	fs.StringVar(&t.channelID, "channel-id", env.getenv("CHANNEL_ID"), "channel of the events (default $CHANNEL_ID)")
	fs.StringVar(&t.databaseURL, "database-url", env.getenv("DATABASE_URL"), "PostgreSQL of the stack; without --base-url, the server for the temporary database (default $DATABASE_URL)")
	fs.StringVar(&t.temporalAddress, "temporal-address", env.getenv("TEMPORAL_ADDRESS"), "Temporal of a running stack, for --baseline (default $TEMPORAL_ADDRESS)")
	fs.StringVar(&t.space, "temporal-namespace", "default", "its namespace")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	return o, o.validate()
}

func (o benchOptions) validate() error {
	t := o.target
	switch {
	case o.events < 1 || o.concurrency < 1:
		return errors.New("bench: --events and --concurrency must be at least 1")
	case t.baseURL == "":
		return nil
	case t.authURL == "" || t.clientID == "" || t.clientSecret == "" || t.channelID == "":
		return errors.New("bench: --base-url needs --auth-url, --client-id, --client-secret and --channel-id")
	case o.baseline && (t.databaseURL == "" || t.temporalAddress == ""):
		return errors.New("bench: --baseline against --base-url needs --database-url and --temporal-address")
	}
	return nil
}

// benchResult is the JSON line bench prints.
type benchResult struct {
	Events             int            `json:"events"`
	Concurrency        int            `json:"concurrency"`
	Accepted           int            `json:"accepted"`
	AcceptedPerS       float64        `json:"accepted_per_s"`
	AcceptP50MS        float64        `json:"accept_p50_ms"`
	AcceptP95MS        float64        `json:"accept_p95_ms"`
	AcceptP99MS        float64        `json:"accept_p99_ms"`
	InvitesSent        int            `json:"invites_sent"`
	InvitesPerS        float64        `json:"invites_per_s"`
	InviteLatencyP50MS float64        `json:"invite_latency_p50_ms"`
	InviteLatencyP99MS float64        `json:"invite_latency_p99_ms"`
	Errors             map[string]int `json:"errors"`
	PeakRSSMB          *float64       `json:"peak_rss_mb"`
	Baseline           *benchBaseline `json:"baseline,omitempty"`
	Ratios             *benchRatios   `json:"ratios,omitempty"`
}

type benchRatios struct {
	AcceptedVsInserts          float64 `json:"accepted_vs_inserts"`
	AcceptedVsInsertsUnderLoad float64 `json:"accepted_vs_inserts_under_load"`
	InvitesVsCompletions       float64 `json:"invites_vs_completions"`
}

func (env *environment) runBench(ctx context.Context, args []string) error {
	o, err := parseBenchFlags(env, args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	var dev *devChild
	if o.target.baseURL == "" {
		if dev, err = startDevChild(ctx, env, o.target.databaseURL); err != nil {
			return err
		}
		o.target = dev.target
	}
	res, err := benchMeasure(ctx, env, o)
	if dev != nil {
		if res != nil {
			res.PeakRSSMB = dev.peakRSSMB()
		}
		err = errors.Join(err, dev.stop())
	}
	if res != nil {
		line, jerr := json.Marshal(res)
		if jerr != nil {
			return errors.Join(err, jerr)
		}
		fmt.Fprintln(env.stdout, string(line))
	}
	return err
}

// benchMeasure runs the measurement against o.target. A non-nil result
// comes with an error when the run ended early (not every invite sent);
// it still describes what was measured.
func benchMeasure(ctx context.Context, env *environment, o benchOptions) (*benchResult, error) {
	prog := newProgress(env.stderr)
	runID := benchRunID()
	api, err := newBenchAPI(ctx, o.target, o.concurrency)
	if err != nil {
		return nil, err
	}
	defer api.http.CloseIdleConnections()
	typ := "bench-" + runID
	etID, err := api.immediateEventType(ctx, typ)
	if err != nil {
		return nil, err
	}
	res := &benchResult{Events: o.events, Concurrency: o.concurrency}
	var b benchBaseline
	var ins *insertBaseline
	if o.baseline {
		if ins, err = openInsertBaseline(ctx, o.target.databaseURL, o.concurrency, runID); err != nil {
			return nil, fmt.Errorf("baseline: %w", err)
		}
		defer ins.close()
	}
	if err := api.warmUp(ctx, typ, o.concurrency, prog); err != nil {
		return nil, err
	}
	if err := api.warmPipeline(ctx, runID, o.concurrency, prog); err != nil {
		return nil, err
	}
	posts := api.fire(ctx, benchBodies(typ, o.target.channelID, runID, o.events), o.concurrency, prog)
	posts.summarize(res)
	if ins != nil {
		// The accepts shared the machine with the starter, the worker and
		// Temporal, which are still busy with their invites: bare inserts
		// timed now show what that costs PostgreSQL's own ceiling. This
		// delays the invites by the second or so it takes.
		if b.InsertsUnderLoadPerS, b.InsertUnderLoadP99MS, err = ins.measure(ctx, "pg inserts (load)", o.events, o.concurrency, prog); err != nil {
			return res, fmt.Errorf("baseline: %w", err)
		}
	}
	waitErr := waitInvitesSent(ctx, api, o.target.databaseURL, typ, etID, res.Accepted, prog)
	events, err := api.listEvents(context.WithoutCancel(ctx), typ)
	if err != nil {
		return nil, errors.Join(waitErr, err)
	}
	summarizeInvites(res, events)
	if waitErr != nil || !o.baseline {
		return res, waitErr
	}
	if err := runBaselines(ctx, env, o.target, ins, o.events, o.concurrency, runID, prog, &b); err != nil {
		return res, fmt.Errorf("baseline: %w", err)
	}
	res.Baseline = &b
	res.Ratios = &benchRatios{
		AcceptedVsInserts:          round(ratio(res.AcceptedPerS, b.InsertsPerS), 3),
		AcceptedVsInsertsUnderLoad: round(ratio(res.AcceptedPerS, b.InsertsUnderLoadPerS), 3),
		InvitesVsCompletions:       round(ratio(res.InvitesPerS, b.WorkflowCompletionsPerS), 3),
	}
	return res, nil
}

// benchRunID keeps the names of one run (event type, addresses, workflow
// IDs, scratch table) apart from every other run's.
func benchRunID() string {
	b := make([]byte, 6)
	rand.Read(b)
	return strconv.FormatInt(time.Now().Unix(), 36) + hex.EncodeToString(b)
}

// benchBodies returns n POST /events bodies, each to its own address:
// sends to one address are serialised, which is not what bench measures.
func benchBodies(typ, channelID, runID string, n int) [][]byte {
	bodies := make([][]byte, n)
	date := time.Now().UTC().Format(time.RFC3339)
	for i := range bodies {
		bodies[i], _ = json.Marshal(map[string]any{
			"customer":      map[string]any{"email": fmt.Sprintf("bench-%s-%d@example.com", runID, i), "firstName": "Ann"},
			"type":          typ,
			"channel":       map[string]any{"id": channelID},
			"transaction":   map[string]any{"reference": fmt.Sprintf("order-%d", i), "date": date},
			"system":        "touchpoint-bench",
			"systemVersion": "1.0",
		})
	}
	return bodies
}

// benchAPI is the HTTP client of one run.
type benchAPI struct {
	t     benchTarget
	http  *http.Client
	token string
}

func newBenchAPI(ctx context.Context, t benchTarget, concurrency int) (*benchAPI, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = concurrency // one kept-alive connection per client
	a := &benchAPI{t: t, http: &http.Client{Transport: tr, Timeout: time.Minute}}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {t.clientID},
		"client_secret": {t.clientSecret}, "audience": {t.baseURL}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.authURL+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := a.roundTrip(req, http.StatusOK, &tok); err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	a.token = tok.AccessToken
	return a, a.awaitReady(ctx)
}

// awaitReady waits until the API accepts the token: a fresh API answers
// 503 until it has discovered the issuer (SPEC §10).
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

// roundTrip sends req and decodes the answer into out, unless its status
// is not want.
func (a *benchAPI) roundTrip(req *http.Request, want int, out any) error {
	res, err := a.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, res.Status, bytes.TrimSpace(raw))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// call sends one JSON request with the token.
func (a *benchAPI) call(ctx context.Context, method, path string, in any, want int, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.t.baseURL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return a.roundTrip(req, want, out)
}

// immediateEventType creates the event type, makes its settings send at
// once and never throttle, and returns its id.
func (a *benchAPI) immediateEventType(ctx context.Context, name string) (string, error) {
	var et struct{ ID string }
	if err := a.call(ctx, http.MethodPost, "/event-types", map[string]any{"name": name}, http.StatusCreated, &et); err != nil {
		return "", err
	}
	var settings struct{ Items []struct{ ID string } }
	if err := a.call(ctx, http.MethodGet, "/invite-settings?eventTypeId="+et.ID, nil, http.StatusOK, &settings); err != nil {
		return "", err
	}
	if len(settings.Items) == 0 {
		return "", fmt.Errorf("event type %s has no invite setting", et.ID)
	}
	for _, s := range settings.Items {
		patch := map[string]any{"delay": "PT0S", "minDaysBetweenInvites": 0}
		if err := a.call(ctx, http.MethodPatch, "/invite-settings/"+s.ID, patch, http.StatusOK, nil); err != nil {
			return "", err
		}
	}
	return et.ID, nil
}

// postOutcome is the answer to one POST /events: its status (0 when the
// request failed) and how long it took.
type postOutcome struct {
	status  int
	latency time.Duration
}

// postRun is every answer of the accept phase and how long it lasted.
type postRun struct {
	outcomes []postOutcome
	elapsed  time.Duration
}

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
	etID, err := a.immediateEventType(ctx, typ)
	if err != nil {
		return fmt.Errorf("warm up: %w", err)
	}
	for _, o := range a.fire(ctx, benchBodies(typ, a.t.channelID, runID+"-warm", c), c, prog).outcomes {
		if o.status != http.StatusAccepted {
			return fmt.Errorf("warm up: POST /events answered %d", o.status)
		}
	}
	if err := waitInvitesSent(ctx, a, a.t.databaseURL, typ, etID, c, prog); err != nil {
		return fmt.Errorf("warm up: %w", err)
	}
	return nil
}

// fire posts every body from concurrency clients at once.
func (a *benchAPI) fire(ctx context.Context, bodies [][]byte, concurrency int, prog *progress) postRun {
	out := make([]postOutcome, len(bodies))
	done := prog.phase("accept", len(bodies))
	start := time.Now()
	fanOut(ctx, len(bodies), concurrency, func(i int) {
		t0 := time.Now()
		out[i].status = a.post(ctx, bodies[i])
		out[i].latency = time.Since(t0)
		prog.add(1)
	})
	run := postRun{out, time.Since(start)}
	done()
	return run
}

// post sends one event and returns the answer's status, 0 on failure.
func (a *benchAPI) post(ctx context.Context, body []byte) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.t.baseURL+"/events", bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := a.http.Do(req)
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
func (r postRun) summarize(res *benchResult) {
	res.Errors = map[string]int{"503": 0}
	var lat []time.Duration
	for _, o := range r.outcomes {
		switch o.status {
		case http.StatusAccepted:
			lat = append(lat, o.latency)
		case 0:
			res.Errors["transport"]++
		default:
			res.Errors[strconv.Itoa(o.status)]++
		}
	}
	res.Accepted = len(lat)
	res.AcceptedPerS = round(float64(len(lat))/r.elapsed.Seconds(), 1)
	res.AcceptP50MS = percentileMS(lat, 50)
	res.AcceptP95MS = percentileMS(lat, 95)
	res.AcceptP99MS = percentileMS(lat, 99)
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
		db, err := sqlx.Open("postgres", databaseURL)
		if err != nil {
			return err
		}
		defer db.Close()
		count, interval = dbSentCounter(db, typ, eventTypeID), 50*time.Millisecond
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

// dbSentCounter counts with one query on the index events_by_type.
func dbSentCounter(db *sqlx.DB, typ, eventTypeID string) sentCounter {
	return func(ctx context.Context) (sent, ended int, err error) {
		err = db.QueryRowContext(ctx, `
			SELECT count(*) FILTER (WHERE invite_status = 'sent'),
			       count(*) FILTER (WHERE invite_status IN ('skipped', 'failed', 'cancelled'))
			FROM events
			WHERE account_id = (SELECT account_id FROM event_types WHERE id = $2) AND type = $1`,
			typ, eventTypeID).Scan(&sent, &ended)
		return sent, ended, err
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
	ReceivedAt time.Time `json:"receivedAt"`
	Invite     struct {
		Status string     `json:"status"`
		SentAt *time.Time `json:"sentAt"`
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
// events: sent/s over the span from the first arrival to the last send,
// and the latency sentAt − receivedAt, all by the server's clock.
func summarizeInvites(res *benchResult, events []benchEvent) {
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
}

// progress draws a progress bar on stderr when it is a terminal, and
// nothing otherwise.
type progress struct {
	w     io.Writer
	label string
	total int
	n     atomic.Int64
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	if !ok {
		return &progress{}
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return &progress{}
	}
	return &progress{w: w}
}

// phase starts drawing one phase; the returned func ends it.
func (p *progress) phase(label string, total int) func() {
	if p.w == nil {
		return func() {}
	}
	p.label, p.total = label, total
	p.n.Store(0)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			p.draw()
			select {
			case <-stop:
				p.draw()
				fmt.Fprintln(p.w)
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(stop); <-stopped }
}

func (p *progress) add(n int) { p.n.Add(int64(n)) }
func (p *progress) set(n int) { p.n.Store(int64(n)) }

func (p *progress) draw() {
	n := min(int(p.n.Load()), p.total)
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = n * width / p.total
	}
	fmt.Fprintf(p.w, "\r%-14s [%s%s] %d/%d", p.label, strings.Repeat("#", filled), strings.Repeat(".", width-filled), n, p.total)
}

// benchChildEnv is added to the environment of the `touchpoint dev` that
// bench starts. Tests set it so that their binary, started in its place,
// runs main() (see TestMain).
var benchChildEnv []string

// devChild is a `touchpoint dev` that bench started and stops.
type devChild struct {
	cmd            *exec.Cmd
	stdin          io.Closer   // kept open until the child has exited
	out, logs      *tailBuffer // its stdout (the banner) and the end of its stderr
	done           chan struct{}
	dataDir        string
	server, dbName string // the temporary database and its server's URL
	target         benchTarget
}

// devBanner is the line of dev's banner with the seeded credentials.
var devBanner = regexp.MustCompile(`export CLIENT_ID=(\S+) CLIENT_SECRET=(\S+) CHANNEL_ID=(\S+)`)

// startDevChild starts `touchpoint dev` with a fresh database on the
// server of serverURL (default: the configuration's default) and waits
// for its banner.
func startDevChild(ctx context.Context, env *environment, serverURL string) (*devChild, error) {
	if serverURL == "" {
		serverURL = config.Defaults().DatabaseURL
	}
	d := &devChild{out: &tailBuffer{max: 64 << 10}, logs: &tailBuffer{max: 64 << 10}, done: make(chan struct{}), server: serverURL,
		dbName: "touchpoint_bench_" + benchRunID()}
	vars, err := d.prepare(ctx, env)
	if err == nil {
		err = d.start(vars)
	}
	if err == nil {
		err = d.awaitBanner(ctx)
	}
	if err != nil {
		return nil, errors.Join(err, d.stop())
	}
	return d, nil
}

// prepare makes the data dir and the database and returns the child's
// configuration, on free ports.
func (d *devChild) prepare(ctx context.Context, env *environment) (map[string]string, error) {
	dir, err := os.MkdirTemp("", "touchpoint-bench-")
	if err != nil {
		return nil, err
	}
	d.dataDir = dir
	dbURL, err := withDatabase(d.server, d.dbName)
	if err != nil {
		return nil, err
	}
	if err := ensureDatabase(ctx, dbURL); err != nil {
		return nil, err
	}
	addrs, err := benchFreeAddrs(5)
	if err != nil {
		return nil, err
	}
	d.target = benchTarget{baseURL: "http://" + addrs[0], authURL: "http://" + addrs[1],
		databaseURL: dbURL, temporalAddress: addrs[2], space: "default"}
	return map[string]string{
		"DATABASE_URL":                    dbURL,
		"TEMPORAL_ADDRESS":                addrs[2],
		"TOUCHPOINT_API_ADDR":             addrs[0],
		"TOUCHPOINT_AUTH_ADDR":            addrs[1],
		"TOUCHPOINT_BASE_URL":             d.target.baseURL,
		"TOUCHPOINT_AUTH_URL":             d.target.authURL,
		"TOUCHPOINT_TEMPORAL_UI_ADDR":     addrs[3],
		"TOUCHPOINT_METRICS_ADDR":         addrs[4],
		"TOUCHPOINT_DATA_DIR":             dir,
		"TOUCHPOINT_DEFAULT_INVITE_DELAY": "PT0S",
		"TOUCHPOINT_RATE_LIMIT":           "1000000",
		"TOUCHPOINT_RATE_BURST":           "1000000",
		"TOUCHPOINT_LOG_LEVEL":            env.getenv("TOUCHPOINT_LOG_LEVEL"),
	}, nil
}

// start runs the child: its own executable, `dev`, with vars in place of
// every Touchpoint variable of ours.
func (d *devChild) start(vars map[string]string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	d.cmd = exec.Command(exe, "dev")
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(config.Variables, k) {
			d.cmd.Env = append(d.cmd.Env, kv)
		}
	}
	for k, v := range vars {
		if v != "" {
			d.cmd.Env = append(d.cmd.Env, k+"="+v)
		}
	}
	d.cmd.Env = append(d.cmd.Env, benchChildEnv...)
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.logs
	if d.stdin, err = d.cmd.StdinPipe(); err != nil {
		return err
	}
	if err := d.cmd.Start(); err != nil {
		return fmt.Errorf("start touchpoint dev: %w", err)
	}
	go func() {
		d.cmd.Wait()
		close(d.done)
	}()
	return nil
}

// awaitBanner waits until dev has printed its credentials.
func (d *devChild) awaitBanner(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(3 * time.Minute)
	for {
		if m := devBanner.FindStringSubmatch(d.out.String()); m != nil {
			d.target.clientID, d.target.clientSecret, d.target.channelID = m[1], m[2], m[3]
			return nil
		}
		select {
		case <-d.done:
			return fmt.Errorf("touchpoint dev exited (%v) before it was ready; its output ends:\n%s", d.cmd.ProcessState, d.logs)
		case <-deadline:
			return fmt.Errorf("touchpoint dev not ready within 3 minutes; its output ends:\n%s", d.logs)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// peakRSSMB is the child's peak resident set (VmHWM), nil where /proc
// cannot tell.
func (d *devChild) peakRSSMB() *float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	if err != nil {
		return nil
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return nil
			}
			mb := round(kb/1024, 1)
			return &mb
		}
	}
	return nil
}

// stop ends the child with SIGTERM (SIGKILL after 30 s) and removes its
// data dir and database.
func (d *devChild) stop() error {
	var errs []error
	if d.cmd != nil && d.cmd.Process != nil {
		errs = append(errs, d.terminate())
	}
	if d.dataDir != "" {
		errs = append(errs, os.RemoveAll(d.dataDir))
	}
	errs = append(errs, dropBenchDatabase(d.server, d.dbName))
	return errors.Join(errs...)
}

func (d *devChild) terminate() error {
	defer d.stdin.Close()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-d.done:
		if !d.cmd.ProcessState.Success() {
			return fmt.Errorf("touchpoint dev stopped with %v; its output ends:\n%s", d.cmd.ProcessState, d.logs)
		}
		return nil
	case <-time.After(30 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
		return errors.New("touchpoint dev did not stop within 30 s of SIGTERM; killed it")
	}
}

// withDatabase is serverURL naming the database name instead.
func withDatabase(serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", fmt.Errorf("database URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// dropBenchDatabase drops bench's temporary database.
func dropBenchDatabase(serverURL, name string) error {
	adminURL, err := withDatabase(serverURL, "postgres")
	if err != nil {
		return err
	}
	db, err := sqlx.Open("postgres", adminURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(`DROP DATABASE IF EXISTS ` + pq.QuoteIdentifier(name) + ` WITH (FORCE)`); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// benchFreeAddrs returns n 127.0.0.1 addresses whose ports are free now.
func benchFreeAddrs(n int) ([]string, error) {
	addrs := make([]string, n)
	for i := range addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close() // held until all are chosen, so none repeats
		addrs[i] = ln.Addr().String()
	}
	return addrs, nil
}

// tailBuffer keeps the last max bytes written to it; safe for concurrent
// use.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
