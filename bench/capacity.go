package bench

// The run of `touchpoint bench --capacity`: a realistic mix — invites, a
// reminder for a share of them, reviews through the feedback form, the
// mail provider's reports, a webhook endpoint subscribed to everything —
// and what it cost, measured from outside the processes: the workflows'
// histories, and through package capacity PostgreSQL's catalogue and
// statistics, the Temporal server's `action` metric and the processes'
// CPU. The model that turns it into docs/capacity.md is package
// capacity's.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/bench/capacity"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/mailevents"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/webhook"
	"github.com/touchpoint/touchpoint/workflows"
)

// CapacityOptions are the flags of `touchpoint bench --capacity`.
type CapacityOptions struct {
	On bool
	// ReminderShare and ReviewShare are the shares of the invites whose
	// setting has a reminder, and that are reviewed.
	ReminderShare, ReviewShare float64
	// Doc is where the document is written ("": nowhere; the JSON of the
	// measurements is printed either way).
	Doc string
	// LoadNote is the header's word on the machine; "": the load average
	// read during the run.
	LoadNote string
	// Topology says what ran, for the header; "": said by bench.
	Topology string
	// Against a running stack: the /metrics of its API and worker
	// processes (their CPU), of its Temporal server (its `action`
	// metric), and the process ID of its PostgreSQL server when it runs
	// on this machine (its CPU; 0: not measured).
	APIMetrics, WorkerMetrics []string
	TemporalMetrics           string
	PostgresPID               int
	// SecretKey is the stack's TOUCHPOINT_SECRET_KEY, which signs the
	// feedback links the reviews follow; FeedbackURL their base
	// (default {base URL}/feedback).
	SecretKey, FeedbackURL string
	// PostmarkUser and PostmarkPassword are the stack's credentials of
	// Postmark's webhook, to post the mail provider's reports with.
	PostmarkUser, PostmarkPassword string
}

// capacityReminder is the reminders' delay when --reminder leaves it
// open: long enough that the reviews come before the reminders of their
// invites, as most do, short enough for a run.
const capacityReminder = "PT2M"

func (c CapacityOptions) validate(t Target, dev bool) error {
	switch {
	case !c.On:
		return nil
	case c.ReminderShare < 0 || c.ReminderShare > 1 || c.ReviewShare < 0 || c.ReviewShare > 1:
		return errors.New("bench: --reminder-share and --review-share are shares from 0 to 1")
	case dev:
		return nil
	case t.DatabaseURL == "":
		return errors.New("bench: --capacity against --base-url needs --database-url")
	case c.TemporalMetrics == "":
		return errors.New("bench: --capacity against --base-url needs --temporal-metrics, the Temporal server's /metrics")
	case c.SecretKey == "":
		return errors.New("bench: --capacity against --base-url needs the stack's secret key (--secret-key or $TOUCHPOINT_SECRET_KEY) to follow feedback links")
	case c.PostmarkUser == "" || c.PostmarkPassword == "":
		return errors.New("bench: --capacity against --base-url needs the stack's Postmark webhook credentials (--postmark-user, --postmark-password)")
	}
	return nil
}

// capacityRun is one capacity run's parts.
type capacityRun struct {
	o    Options
	api  *benchAPI
	dev  *devChild
	prog *progress
	// noRedirect is the client of the customer's and the provider's
	// requests: no token, no redirects followed.
	noRedirect *http.Client
	links      *signedlink.Links
	hook       *hookReceiver
	db         *store.Store
	sent       atomic.Int64 // X-Forwarded-For addresses handed out
}

// Capacity runs the capacity mix against o.Target, or a `touchpoint dev`
// it starts and stops when o.Target.BaseURL is empty, and returns what it
// measured; with o.Capacity.Doc set it writes the document there.
func Capacity(ctx context.Context, o Options) (*capacity.Measurements, error) {
	if o.Reminder == "" {
		o.Reminder = capacityReminder
	}
	ctx, cancel, dev, err := begin(ctx, &o)
	if err != nil {
		return nil, err
	}
	defer cancel()
	if dev != nil {
		c := &o.Capacity
		c.SecretKey, c.PostmarkUser, c.PostmarkPassword = dev.vars["TOUCHPOINT_SECRET_KEY"],
			dev.vars["TOUCHPOINT_POSTMARK_WEBHOOK_USER"], dev.vars["TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD"]
		c.TemporalMetrics = "http://" + dev.vars["TOUCHPOINT_METRICS_ADDR"] + "/metrics"
		if c.Topology == "" {
			c.Topology = "`touchpoint dev` (API, worker and an embedded Temporal server in one process) beside PostgreSQL on the same machine"
		}
	}
	m, err := measureCapacity(ctx, o, dev)
	if dev != nil {
		err = errors.Join(err, dev.stop())
	}
	if err != nil {
		return m, err
	}
	if o.Capacity.Doc != "" {
		var b bytes.Buffer
		if err := capacity.WriteDoc(&b, capacity.Model(*m, capacity.DefaultAssumptions, capacity.DailyVolumes)); err != nil {
			return m, err
		}
		if err := os.WriteFile(o.Capacity.Doc, b.Bytes(), 0o644); err != nil {
			return m, fmt.Errorf("write %s: %w", o.Capacity.Doc, err)
		}
	}
	return m, nil
}

func measureCapacity(ctx context.Context, o Options, dev *devChild) (*capacity.Measurements, error) {
	c := o.Capacity
	r := &capacityRun{o: o, dev: dev, prog: newProgress(o.Stderr),
		noRedirect: &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	feedbackURL := c.FeedbackURL
	if feedbackURL == "" {
		feedbackURL = strings.TrimRight(o.Target.BaseURL, "/") + "/feedback"
	}
	var err error
	if r.links, err = signedlink.New(feedbackURL, secretkey.Derive(c.SecretKey, secretkey.FeedbackLink)); err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, o.Target.DatabaseURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r.db = storeset.New(db, "")
	if r.api, err = newBenchAPI(ctx, o.Target, o.Concurrency); err != nil {
		return nil, err
	}
	defer r.api.http.CloseIdleConnections()
	if r.hook, err = startHookReceiver(); err != nil {
		return nil, err
	}
	defer r.hook.close()
	endpointID, err := r.api.webhookEndpoint(ctx, r.hook.url)
	if err != nil {
		return nil, err
	}
	runID := benchRunID()
	plain, reminded := "capacity-"+runID, "capacity-"+runID+"-reminder"
	plainID, err := r.api.immediateEventType(ctx, plain, "")
	if err != nil {
		return nil, err
	}
	remindedID, err := r.api.immediateEventType(ctx, reminded, o.Reminder)
	if err != nil {
		return nil, err
	}
	if err := r.api.warmUp(ctx, plain, o.Concurrency, r.prog); err != nil {
		return nil, err
	}
	if err := r.api.warmPipeline(ctx, runID, o.Concurrency, r.prog); err != nil {
		return nil, err
	}
	if err := r.deliveriesSettled(ctx, endpointID); err != nil {
		return nil, err
	}
	before, err := r.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	earlier, err := r.api.deliveries(ctx, endpointID) // the warm-up's
	if err != nil {
		return nil, err
	}
	load := capacity.LoadAverage()

	// The mix.
	nReminded := int(float64(o.Events)*c.ReminderShare + 0.5)
	bodies := append(benchBodies(reminded, o.Target.ChannelID, runID+"-r", nReminded),
		benchBodies(plain, o.Target.ChannelID, runID, o.Events-nReminded)...)
	for _, p := range r.api.fire(ctx, bodies, o.Concurrency, r.prog).outcomes {
		if p.answer != http.StatusAccepted {
			return nil, fmt.Errorf("POST /events answered %d", p.answer)
		}
	}
	if err := waitInvitesSent(ctx, r.api, o.Target.DatabaseURL, reminded, remindedID, nReminded, r.prog); err != nil {
		return nil, err
	}
	if err := waitInvitesSent(ctx, r.api, o.Target.DatabaseURL, plain, plainID, o.Events-nReminded, r.prog); err != nil {
		return nil, err
	}
	events, err := r.api.listEvents(ctx, reminded)
	if err != nil {
		return nil, err
	}
	rest, err := r.api.listEvents(ctx, plain)
	if err != nil {
		return nil, err
	}
	events = append(events, rest...)
	mix := capacity.Mix{Invites: len(events), ReminderSet: nReminded, Endpoints: 1, Concurrency: o.Concurrency}
	// Reviews, spread over both kinds: every k-th invite.
	var reviewed []string
	if c.ReviewShare > 0 {
		step := 1 / c.ReviewShare
		for f := 0.0; int(f) < len(events); f += step {
			reviewed = append(reviewed, events[int(f)].ID)
		}
	}
	if err := r.each(ctx, "reviews", reviewed, r.review); err != nil {
		return nil, err
	}
	mix.Reviews = len(reviewed)
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	if err := r.each(ctx, "reports", ids, func(ctx context.Context, id string) error { return r.report(ctx, id, false) }); err != nil {
		return nil, err
	}
	// The reminders go out (or are cancelled by the reviews); then every
	// invite's workflow ends.
	tc, err := o.Target.dialTemporal(ctx, o.Stderr)
	if err != nil {
		return nil, err
	}
	defer tc.Close()
	for _, id := range ids {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Minute) // a reminder's delay and then some
		err := tc.GetWorkflow(wctx, workflows.WorkflowID(id), "").Get(wctx, nil)
		cancel()
		if err != nil && wctx.Err() != nil {
			return nil, fmt.Errorf("invite workflow %s still open: %w", id, err)
		}
	}
	remindersSent, err := r.remindersSent(ctx, reminded)
	if err != nil {
		return nil, err
	}
	if err := r.each(ctx, "reminder reports", remindersSent, func(ctx context.Context, id string) error { return r.report(ctx, id, true) }); err != nil {
		return nil, err
	}
	mix.Reminders, mix.Reports = len(remindersSent), len(ids)+len(remindersSent)
	if err := r.deliveriesSettled(ctx, endpointID); err != nil {
		return nil, err
	}
	after, err := r.snapshot(ctx)
	if err != nil {
		return nil, err
	}

	// What it cost.
	all, err := r.api.deliveries(ctx, endpointID)
	if err != nil {
		return nil, err
	}
	var deliveries []string
	for _, id := range all {
		if !slices.Contains(earlier, id) {
			deliveries = append(deliveries, id)
		}
	}
	mix.Deliveries = len(deliveries)
	m := &capacity.Measurements{Taken: time.Now().UTC(), Revision: capacity.Revision(), Topology: c.Topology, Mix: mix}
	m.Load = c.LoadNote
	if m.Load == "" {
		m.Load = capacity.LoadWords(load, capacity.LoadAverage())
	}
	capacity.PerInvite(m, before, after)
	wfIDs := make([]string, 0, len(ids)+len(deliveries))
	for _, id := range ids {
		wfIDs = append(wfIDs, workflows.WorkflowID(id))
	}
	for _, d := range deliveries {
		wfIDs = append(wfIDs, workflows.WebhookWorkflowID(d, 0))
	}
	if err := r.histories(ctx, tc, wfIDs, m); err != nil {
		return m, err
	}
	// This PostgreSQL's own ceiling, once the run's work is measured:
	// its scratch table is no part of it.
	ins, err := openInsertBaseline(ctx, o.Target.DatabaseURL, o.Concurrency, runID)
	if err != nil {
		return m, fmt.Errorf("baseline: %w", err)
	}
	defer ins.close()
	if m.InsertCeiling, _, err = ins.measure(ctx, "pg inserts", max(o.Events, 1000), o.Concurrency, r.prog); err != nil {
		return m, fmt.Errorf("baseline: %w", err)
	}
	return m, nil
}

// snapshot reads what the stack has spent so far.
func (r *capacityRun) snapshot(ctx context.Context) (capacity.Snapshot, error) {
	c := r.o.Capacity
	src := capacity.Sources{DB: r.db.DB(), TemporalMetrics: c.TemporalMetrics, Namespace: r.o.Target.Temporal.Namespace(),
		APIMetrics: c.APIMetrics, WorkerMetrics: c.WorkerMetrics, PostgresPID: c.PostgresPID}
	if r.dev != nil {
		src.CombinedMetrics = "http://" + r.dev.vars["TOUCHPOINT_METRICS_ADDR"] + "/metrics"
	}
	return capacity.Read(ctx, src)
}

// each calls fn for every id, the run's concurrency at once.
func (r *capacityRun) each(ctx context.Context, label string, ids []string, fn func(ctx context.Context, id string) error) error {
	_, _, err := timeEach(ctx, label, len(ids), r.o.Concurrency, r.prog, func(i int) error { return fn(ctx, ids[i]) })
	return err
}

// forwardedFor is an address of its own for each customer and report,
// named to the stack (which must trust the bench's address as a proxy:
// TOUCHPOINT_TRUSTED_PROXIES) so that the per-address limits of the
// customer pages and the reports see many clients, as they do.
func (r *capacityRun) forwardedFor() string {
	n := r.sent.Add(1)
	return fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)
}

// review opens the invite's feedback page and posts a review, as a
// customer does.
func (r *capacityRun) review(ctx context.Context, eventID string) error {
	link := r.links.URL(eventID)
	from := r.forwardedFor()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Forwarded-For", from)
	if err := r.expect(req, http.StatusOK); err != nil {
		return fmt.Errorf("open the feedback page: %w", err)
	}
	u, err := url.Parse(link)
	if err != nil {
		return err
	}
	form := url.Values{"event": {eventID}, "sig": {u.Query().Get("sig")}, "rating": {"5"},
		"comment": {"Arrived on time, well packed. The fit is as described."}}
	u.RawQuery = ""
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", from)
	if err := r.expect(req, http.StatusOK, http.StatusSeeOther); err != nil {
		return fmt.Errorf("post a review: %w", err)
	}
	return nil
}

// report posts the mail provider's report that the invite's (or its
// reminder's) mail was delivered, as Postmark does.
func (r *capacityRun) report(ctx context.Context, eventID string, reminder bool) error {
	body, err := json.Marshal(map[string]any{"RecordType": "Delivery", "MessageID": uuid.NewString(),
		"DeliveredAt": time.Now().UTC().Format(time.RFC3339Nano), "Recipient": "customer@example.com",
		"Metadata": map[string]string{mailevents.MetadataKey: mail.Message{EventID: eventID, Reminder: reminder}.ID()}})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(r.o.Target.BaseURL, "/")+"/mail-events/postmark", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", r.forwardedFor())
	req.SetBasicAuth(r.o.Capacity.PostmarkUser, r.o.Capacity.PostmarkPassword)
	if err := r.expect(req, http.StatusOK); err != nil {
		return fmt.Errorf("post a delivery report: %w", err)
	}
	return nil
}

// expect sends req without a token and checks its status.
func (r *capacityRun) expect(req *http.Request, want ...int) error {
	res, err := r.noRedirect.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	for _, w := range want {
		if res.StatusCode == w {
			return nil
		}
	}
	return fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, res.Status, bytes.TrimSpace(raw))
}

// remindersSent are the events of typ whose reminder went out.
func (r *capacityRun) remindersSent(ctx context.Context, typ string) ([]string, error) {
	var ids []string
	err := r.api.eachEvent(ctx, "type="+url.QueryEscape(typ), func(e benchEvent) {
		if r := e.Invite.Reminder; r != nil && r.Status == "sent" {
			ids = append(ids, e.ID)
		}
	})
	return ids, err
}

// deliveriesSettled waits until the endpoint has no delivery waiting: every
// change of the run has reached it.
func (r *capacityRun) deliveriesSettled(ctx context.Context, endpointID string) error {
	for {
		var page struct{ Items []struct{ ID string } }
		if err := r.api.call(ctx, http.MethodGet, "/webhooks/"+endpointID+"/deliveries?status=pending&limit=1", nil, http.StatusOK, &page); err != nil {
			return fmt.Errorf("webhook deliveries: %w", err)
		}
		if len(page.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("webhook deliveries still pending: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// histories adds the events and bytes of the workflows' histories to m,
// per invite.
func (r *capacityRun) histories(ctx context.Context, tc client.Client, ids []string, m *capacity.Measurements) error {
	var events, size atomic.Int64
	err := r.each(ctx, "histories", ids, func(ctx context.Context, id string) error {
		d, err := tc.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return fmt.Errorf("describe workflow %s: %w", id, err)
		}
		events.Add(d.GetWorkflowExecutionInfo().GetHistoryLength())
		size.Add(d.GetWorkflowExecutionInfo().GetHistorySizeBytes())
		return nil
	})
	n := float64(max(m.Mix.Invites, 1))
	m.Workflows = float64(len(ids)) / n
	m.HistoryEvents = float64(events.Load()) / n
	m.HistoryBytes = float64(size.Load()) / n
	return err
}

// webhookEndpoint subscribes an endpoint at u to every event type.
func (a *benchAPI) webhookEndpoint(ctx context.Context, u string) (string, error) {
	var ep struct{ ID string }
	err := a.call(ctx, http.MethodPost, "/webhooks", map[string]any{"url": u, "events": webhook.EventTypes(),
		"description": "touchpoint bench --capacity"}, http.StatusCreated, &ep)
	return ep.ID, err
}

// deliveries lists the ids of the endpoint's deliveries.
func (a *benchAPI) deliveries(ctx context.Context, endpointID string) ([]string, error) {
	var ids []string
	cursor := ""
	for {
		var page struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
			NextCursor *string `json:"nextCursor"`
		}
		path := "/webhooks/" + endpointID + "/deliveries?limit=200"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := a.call(ctx, http.MethodGet, path, nil, http.StatusOK, &page); err != nil {
			return nil, err
		}
		for _, d := range page.Items {
			ids = append(ids, d.ID)
		}
		if page.NextCursor == nil || len(page.Items) == 0 {
			return ids, nil
		}
		cursor = *page.NextCursor
	}
}

// hookReceiver is the webhook endpoint of the run: it takes every
// delivery.
type hookReceiver struct {
	url string
	srv *http.Server
	n   atomic.Int64
}

func startHookReceiver() (*hookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hookReceiver{url: "http://" + ln.Addr().String() + "/hook"}
	h.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h.n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})}
	go h.srv.Serve(ln)
	return h, nil
}

func (h *hookReceiver) close() { h.srv.Close() }
