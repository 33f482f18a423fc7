package e2e_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/touchpoint/touchpoint/internal/smtptest"
)

// gracefulEvents are posted through the load balancer, about
// gracefulRate a second, while processes are stopped.
const (
	gracefulEvents = 150
	gracefulRate   = 20
)

// TestGracefulStop stops processes of the production topology with
// SIGTERM, as Kubernetes does, while clients post events through a load
// balancer that follows the APIs' readiness, and while invites are being
// sent:
//
//   - api1 fails its readiness at once, goes on serving while the load
//     balancer lets go of it (TOUCHPOINT_SHUTDOWN_DRAIN), finishes the
//     requests it has in hand — held inside it past the drain — and exits
//     0. No client sees an answer other than 202, nor a failed connection.
//   - worker1 stops polling, finishes the send it is in the middle of —
//     held at the SMTP server — while its /healthz still answers (a
//     liveness probe must not kill it) and its /readyz does not, and
//     exits 0.
//
// Afterwards every event has exactly one mail, no invite failed, and no
// start order is left behind.
func TestGracefulStop(t *testing.T) {
	// Not parallel: one whole topology at a time fits the suite's
	// connection budget (internal/testdb).
	const drain = 2 * time.Second
	s := startStack(t, stackVars{"TOUCHPOINT_SHUTDOWN_DRAIN": drain.String()})
	lb := startBalancer(t, s.apiURL(0), s.apiURL(1))
	c := s.newClient()
	s.immediateEventType(c, "checkout")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// Clients post through the load balancer, each event once: any answer
	// but 202 is a failure.
	var (
		mu      sync.Mutex
		refs    []string
		refused []string
	)
	post := func(base string, i int) {
		code, res, err := c.do(http.MethodPost, base+"/events", s.event("checkout", i),
			map[string]string{"Idempotency-Key": gracefulKey(i)})
		mu.Lock()
		defer mu.Unlock()
		ref, _ := res["EventRef"].(string)
		if err != nil || code != http.StatusAccepted || ref == "" {
			refused = append(refused, fmt.Sprintf("event %d via %s: %d %v %v", i, base, code, res, err))
			return
		}
		refs = append(refs, ref)
	}
	accepted := func() int { mu.Lock(); defer mu.Unlock(); return len(refs) }
	var posting errgroup.Group
	posting.Go(func() error {
		tick := time.NewTicker(time.Second / gracefulRate)
		defer tick.Stop()
		var wg sync.WaitGroup
		defer wg.Wait()
		for i := range gracefulEvents {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return ctx.Err()
			}
			wg.Go(func() { post(lb.URL, i) })
		}
		return nil
	})
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		assert.GreaterOrEqual(col, accepted(), 30)
		assert.NotEmpty(col, s.smtp.Messages(), "invites are being sent")
	}, time.Minute, 10*time.Millisecond)

	// worker2 stops first, so that the send held next is worker1's.
	stopped := s.terminate("worker2")
	waitExit(t, stopped, 90*time.Second)

	// A send of worker1 in the middle of its SMTP transaction, held there.
	sending := make(chan struct{}, 1)
	release := make(chan struct{})
	s.smtp.OnMessage(func(smtptest.Message) {
		select {
		case sending <- struct{}{}:
		default:
		}
		<-release
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	select {
	case <-sending:
	case <-ctx.Done():
		t.Fatal("no send reached the SMTP server")
	}

	// Requests held inside api1, sent past the load balancer: the test
	// writes their Idempotency-Keys first, uncommitted, so each accept
	// waits on its key until the test lets go (and then finds it free).
	// Nothing else waits: the posters' keys are others.
	tx, err := s.db.BeginTxx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	const held = 3
	for i := range held {
		_, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (account_id, key, request_hash, event_id, created_at, expires_at)
			SELECT $1, $2, '\x00', id, now(), now() FROM events WHERE account_id = $1 LIMIT 1`, s.creds.AccountID, gracefulKey(gracefulEvents+i))
		require.NoError(t, err)
	}
	var direct sync.WaitGroup
	var answered atomic.Int32
	for i := range held {
		direct.Go(func() { post(s.apiURL(0), gracefulEvents+i); answered.Add(1) })
	}
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		var waiting int
		assert.NoError(col, tx.GetContext(ctx, &waiting, `
			SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pg_backend_pid() = ANY(pg_blocking_pids(pid))`))
		// Concurrent accepts may share a statement: at least one waits.
		assert.Positive(col, waiting, "accepts waiting on their keys")
	}, 30*time.Second, 10*time.Millisecond)

	terminated := time.Now()
	api1, worker1 := s.terminate("api1"), s.terminate("worker1")

	// worker1 finishes its send: alive, not ready, while the send is held.
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		live, _, err := getJSON("http://" + s.workerAddr[0] + "/healthz")
		assert.NoError(col, err)
		assert.Equal(col, http.StatusOK, live, "/healthz while the send is under way")
		ready, body, err := getJSON("http://" + s.workerAddr[0] + "/readyz")
		assert.NoError(col, err)
		assert.Equal(col, http.StatusServiceUnavailable, ready, "/readyz: %v", body)
	}, 10*time.Second, 20*time.Millisecond)

	// api1 drains: the load balancer sees it unready at once and takes it
	// out; its listener closes only once the drain is over.
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		assert.True(col, lb.backends[0].drained.Load(), "the load balancer saw api1 draining")
	}, drain, 10*time.Millisecond)
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		conn, err := net.DialTimeout("tcp", s.apiAddrs[0], time.Second)
		if err == nil {
			conn.Close()
		}
		assert.Error(col, err, "api1's listener is closed")
	}, 30*time.Second, 20*time.Millisecond)
	assert.GreaterOrEqual(t, time.Since(terminated), drain, "api1 served on for its drain time")
	require.Zero(t, answered.Load(), "the held requests are still in api1's hands")
	select {
	case <-api1.done:
		t.Fatal("api1 exited with requests in hand")
	default:
	}
	require.NoError(t, tx.Rollback()) // the held requests go on
	close(release)                    // and so does the held send
	direct.Wait()
	waitExit(t, api1, time.Minute)
	waitExit(t, worker1, 90*time.Second)

	require.NoError(t, posting.Wait())
	s.start("worker2")
	s.waitReady("worker2")

	mu.Lock()
	assert.Empty(t, refused, "every request answered 202")
	all := append([]string(nil), refs...)
	mu.Unlock()
	assert.Zero(t, lb.errors.Load(), "no request of the load balancer failed")
	assert.Len(t, all, gracefulEvents+held)

	require.EventuallyWithT(t, func(col *assert.CollectT) {
		var sent int
		if assert.NoError(col, s.db.Get(&sent, `SELECT count(*) FROM events WHERE invite_status = 'sent'`)) {
			assert.Equal(col, len(all), sent, "invites sent")
		}
	}, 3*time.Minute, 200*time.Millisecond)
	mails, err := s.mailsByEvent()
	require.NoError(t, err)
	assert.Len(t, s.smtp.Messages(), len(all), "one mail per event, no more")
	for _, ref := range all {
		assert.Equal(t, 1, mails[ref], "mails for %s", ref)
	}
	var pending int
	require.NoError(t, s.db.Get(&pending, `SELECT count(*) FROM outbox WHERE done_at IS NULL`))
	assert.Zero(t, pending, "no start order left behind")
}

func gracefulKey(i int) string { return "graceful-" + strconv.Itoa(i) }

// terminate sends SIGTERM to a process of the stack.
func (s *stack) terminate(name string) *proc {
	s.tb.Helper()
	s.mu.Lock()
	p := s.procs[name]
	s.mu.Unlock()
	require.NoError(s.tb, p.cmd.Process.Signal(syscall.SIGTERM))
	return p
}

// waitExit waits for a stopping process and requires it to exit 0.
func waitExit(t *testing.T, p *proc, within time.Duration) {
	t.Helper()
	select {
	case <-p.done:
		require.NoError(t, p.err, "%s exits 0 on SIGTERM:\n%s", p.name, p.out.Tail(4<<10))
	case <-time.After(within):
		t.Fatalf("%s did not exit within %s of SIGTERM:\n%s", p.name, within, p.out.Tail(4<<10))
	}
}

// balancer is a load balancer in front of the APIs, as a cloud's or an
// ingress controller is: it sends each request to a ready backend in
// turn, and asks each backend's /readyz every half second.
type balancer struct {
	*httptest.Server
	backends []*backend
	next     atomic.Uint64
	errors   atomic.Int32 // requests it could not pass on
}

type backend struct {
	url     *url.URL
	ready   atomic.Bool
	drained atomic.Bool // it answered "draining" once
}

func startBalancer(t *testing.T, urls ...string) *balancer {
	t.Helper()
	b := &balancer{}
	for _, u := range urls {
		parsed, err := url.Parse(u)
		require.NoError(t, err)
		be := &backend{url: parsed}
		be.ready.Store(true)
		b.backends = append(b.backends, be)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			be := b.pick()
			if be == nil {
				r.Out.URL.Host = "" // fails: nothing is ready
				return
			}
			r.SetURL(be.url)
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			b.errors.Add(1)
			t.Logf("load balancer: %s %s: %v", r.Method, r.URL, err)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	b.Server = httptest.NewServer(proxy)
	t.Cleanup(b.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go b.check(ctx)
	return b
}

func (b *balancer) pick() *backend {
	for range b.backends {
		be := b.backends[b.next.Add(1)%uint64(len(b.backends))]
		if be.ready.Load() {
			return be
		}
	}
	return nil
}

// check asks every backend's /readyz every half second.
func (b *balancer) check(ctx context.Context) {
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, be := range b.backends {
			code, body, err := getJSONWith(client, be.url.String()+"/readyz")
			be.ready.Store(err == nil && code == http.StatusOK)
			if body["status"] == "draining" {
				be.drained.Store(true)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
