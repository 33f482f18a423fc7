package webhook

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/freeport"
)

// The tests below talk only to servers on loopback. Every test client goes
// through newTestClient, whose dialer refuses any other address whatever
// the code under test decides, so a broken check fails a test instead of
// sending a packet elsewhere.

// dialLog records the addresses a client's dialer was about to connect to.
type dialLog struct {
	mu      sync.Mutex
	seen    []string
	refused []string
}

func (l *dialLog) record(address string, refused bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, address)
	if refused {
		l.refused = append(l.refused, address)
	}
}

func (l *dialLog) snapshot() (seen, refused []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...), append([]string(nil), l.refused...)
}

func newTestClient(t *testing.T, opts Options) (*Client, *dialLog) {
	t.Helper()
	c := NewClient(opts)
	log := &dialLog{}
	check := c.dialer.Control
	c.dialer.Control = func(network, address string, raw syscall.RawConn) error {
		if check != nil {
			if err := check(network, address, raw); err != nil {
				log.record(address, true)
				return err
			}
		}
		log.record(address, false)
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !ap.Addr().Unmap().IsLoopback() {
			t.Errorf("the client was about to connect to %s", address)
			return errors.New("test guard: only loopback")
		}
		return nil
	}
	t.Cleanup(c.transport.CloseIdleConnections)
	return c, log
}

// resolveTo is a LookupIP hook: every name resolves to ips.
func resolveTo(ips ...string) func(context.Context, string) ([]netip.Addr, error) {
	return func(context.Context, string) ([]netip.Addr, error) {
		addrs := make([]netip.Addr, len(ips))
		for i, ip := range ips {
			addrs[i] = netip.MustParseAddr(ip)
		}
		return addrs, nil
	}
}

// request is what a receiver got.
type request struct {
	host   string
	header http.Header
	body   []byte
	// verifyErr is the reference library's verdict, nil when the
	// signature verified.
	verifyErr error
}

// receiver is a webhook endpoint on 127.0.0.1 that verifies signatures
// with the Standard Webhooks reference library and keeps every request.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []request
}

// newReceiver starts a receiver on 127.0.0.1; secret "" skips
// verification. respond answers request n (0-based); nil answers 204 when
// the signature verified and 401 when not.
func newReceiver(t *testing.T, tlsServer bool, secret string, respond func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	return startReceiver(t, nil, tlsServer, secret, respond)
}

// startReceiver is newReceiver on a given listener (nil: 127.0.0.1).
func startReceiver(t *testing.T, ln net.Listener, tlsServer bool, secret string, respond func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	var wh *standardwebhooks.Webhook
	if secret != "" {
		var err error
		wh, err = standardwebhooks.NewWebhook(secret)
		require.NoError(t, err)
	}
	rc := &receiver{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		req := request{host: r.Host, header: r.Header.Clone(), body: body}
		if wh != nil {
			req.verifyErr = wh.Verify(body, r.Header)
		}
		rc.mu.Lock()
		n := len(rc.reqs)
		rc.reqs = append(rc.reqs, req)
		rc.mu.Unlock()
		switch {
		case respond != nil:
			respond(n, w, r)
		case req.verifyErr != nil:
			w.WriteHeader(http.StatusUnauthorized)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	rc.Server = httptest.NewUnstartedServer(handler)
	if ln != nil {
		rc.Listener.Close()
		rc.Listener = ln
	}
	// Refused TLS handshakes are expected here; they need not be logged.
	rc.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tlsServer {
		rc.StartTLS()
	} else {
		rc.Start()
	}
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.reqs...)
}

// port is the receiver's port, for URLs that name another host.
func (rc *receiver) port(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(rc.URL)
	require.NoError(t, err)
	return u.Port()
}

func mustSecret(t *testing.T) string {
	t.Helper()
	s, err := NewSecret()
	require.NoError(t, err)
	return s
}

// deliverWithin runs Deliver and fails the test if it has not returned
// within limit: the bound a hung attempt must respect.
func deliverWithin(t *testing.T, c *Client, d Delivery, limit time.Duration) Result {
	t.Helper()
	done := make(chan Result, 1)
	go func() { done <- c.Deliver(t.Context(), d) }()
	select {
	case r := <-done:
		return r
	case <-time.After(limit):
		t.Fatalf("Deliver did not return within %s", limit)
		return Result{}
	}
}

func TestDeliverSignedAndVerified(t *testing.T) {
	t.Parallel()
	current, previous, unrelated := mustSecret(t), mustSecret(t), mustSecret(t)
	body := []byte(`{"type":"invite.sent","timestamp":"2026-11-22T06:00:00.000Z","data":{"eventId":"evt-1"}}`)
	tests := []struct {
		name          string
		secrets       []string
		receiverKnows string
		tls           bool
		want          Outcome
		wantStatus    int
	}{
		{"one secret", []string{current}, current, false, Succeeded, 204},
		{"one secret over TLS", []string{current}, current, true, Succeeded, 204},
		{"rotation, receiver on the new secret", []string{current, previous}, current, false, Succeeded, 204},
		{"rotation, receiver still on the old secret", []string{current, previous}, previous, false, Succeeded, 204},
		{"receiver knows another secret", []string{current, previous}, unrelated, false, Failed, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, tt.tls, tt.receiverKnows, nil)
			c, _ := newTestClient(t, Options{AllowPrivate: true, UserAgent: "Touchpoint-Test/1"})
			if tt.tls {
				pool := x509.NewCertPool()
				pool.AddCert(rc.Certificate())
				c.transport.TLSClientConfig.RootCAs = pool
			}
			ts := time.Now().Truncate(time.Second)
			r := c.Deliver(t.Context(), Delivery{URL: rc.URL + "/hooks?shop=1", MsgID: "msg-0f1e", Timestamp: ts, Body: body, Secrets: tt.secrets})
			assert.Equal(t, tt.want, r.Outcome, r.Err)
			assert.Equal(t, tt.wantStatus, r.StatusCode)
			if tt.want == Succeeded {
				assert.Empty(t, r.Err)
			} else {
				assert.Equal(t, "401 Unauthorized", r.Err)
			}

			reqs := rc.requests()
			require.Len(t, reqs, 1)
			got := reqs[0]
			if tt.want == Succeeded {
				assert.NoError(t, got.verifyErr)
			} else {
				assert.ErrorIs(t, got.verifyErr, standardwebhooks.ErrNoMatchingSignature)
			}
			assert.Equal(t, body, got.body)
			assert.Equal(t, "msg-0f1e", got.header.Get("webhook-id"))
			assert.Equal(t, strconv.FormatInt(ts.Unix(), 10), got.header.Get("webhook-timestamp"))
			assert.Equal(t, "application/json", got.header.Get("Content-Type"))
			assert.Equal(t, "Touchpoint-Test/1", got.header.Get("User-Agent"))
			assert.Len(t, got.header.Values("webhook-signature"), 1)
		})
	}
}

func TestDeliverDefaults(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t)
	rc := newReceiver(t, false, secret, nil)
	c, _ := newTestClient(t, Options{AllowPrivate: true})
	assert.Equal(t, DefaultTimeout, c.http.Timeout)
	assert.Nil(t, c.transport.Proxy, "proxies from the environment would connect past the address check")

	before := time.Now().Unix()
	r := c.Deliver(t.Context(), Delivery{URL: rc.URL, MsgID: "msg-1", Body: []byte(`{}`), Secrets: []string{secret}})
	require.Equal(t, Succeeded, r.Outcome, r.Err)
	got := rc.requests()[0]
	assert.NoError(t, got.verifyErr)
	assert.Equal(t, DefaultUserAgent, got.header.Get("User-Agent"))
	sent, err := strconv.ParseInt(got.header.Get("webhook-timestamp"), 10, 64)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, sent, before, "a zero Timestamp means now")
	assert.LessOrEqual(t, sent, time.Now().Unix())
}

// A receiver that fails and then recovers sees the same webhook-id twice,
// because the caller passes the delivery's ID on every attempt; each
// attempt is signed afresh for its own timestamp.
func TestDeliverRetryKeepsID(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t)
	rc := newReceiver(t, false, secret, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			http.Error(w, "database down", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	c, _ := newTestClient(t, Options{AllowPrivate: true})
	d := Delivery{URL: rc.URL, MsgID: "msg-7c1d", Body: []byte(`{"type":"review.created"}`), Secrets: []string{secret}}

	d.Timestamp = time.Now().Add(-30 * time.Second)
	first := c.Deliver(t.Context(), d)
	assert.Equal(t, Result{StatusCode: 500, Outcome: Failed, Err: "500 Internal Server Error"}, first)

	d.Timestamp = time.Now()
	second := c.Deliver(t.Context(), d)
	assert.Equal(t, Result{StatusCode: 200, Outcome: Succeeded}, second)

	reqs := rc.requests()
	require.Len(t, reqs, 2)
	for i, req := range reqs {
		assert.Equal(t, "msg-7c1d", req.header.Get("webhook-id"), "attempt %d", i+1)
		assert.NoError(t, req.verifyErr, "attempt %d", i+1)
	}
	assert.NotEqual(t, reqs[0].header.Get("webhook-timestamp"), reqs[1].header.Get("webhook-timestamp"))
	assert.NotEqual(t, reqs[0].header.Get("webhook-signature"), reqs[1].header.Get("webhook-signature"))
}

func TestDeliverStatusCodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code    int
		want    Outcome
		wantErr string
	}{
		{200, Succeeded, ""},
		{201, Succeeded, ""},
		{202, Succeeded, ""},
		{204, Succeeded, ""},
		{299, Succeeded, ""},
		{410, Gone, "410 Gone: the endpoint asked to receive no more webhooks"},
		{300, Failed, "300 Multiple Choices: redirects are not followed; use the final URL"},
		{304, Failed, "304 Not Modified: redirects are not followed; use the final URL"},
		{400, Failed, "400 Bad Request"},
		{401, Failed, "401 Unauthorized"},
		{404, Failed, "404 Not Found"},
		{409, Failed, "409 Conflict"},
		{429, Failed, "429 Too Many Requests"},
		{500, Failed, "500 Internal Server Error"},
		{502, Failed, "502 Bad Gateway"},
		{503, Failed, "503 Service Unavailable"},
		{599, Failed, "HTTP status 599"},
	}
	secret := mustSecret(t)
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.code), func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, false, secret, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.code)
			})
			c, _ := newTestClient(t, Options{AllowPrivate: true})
			r := c.Deliver(t.Context(), Delivery{URL: rc.URL, MsgID: "msg-1", Body: []byte(`{}`), Secrets: []string{secret}})
			assert.Equal(t, Result{StatusCode: tt.code, Outcome: tt.want, Err: tt.wantErr}, r)
			require.Len(t, rc.requests(), 1)
		})
	}
}

func TestDeliverDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t)
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			target := newReceiver(t, false, secret, nil)
			origin := newReceiver(t, false, secret, func(_ int, w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/moved", code)
			})
			c, _ := newTestClient(t, Options{AllowPrivate: true})
			r := c.Deliver(t.Context(), Delivery{URL: origin.URL, MsgID: "msg-1", Body: []byte(`{}`), Secrets: []string{secret}})
			assert.Equal(t, Failed, r.Outcome)
			assert.Equal(t, code, r.StatusCode)
			assert.Contains(t, r.Err, "redirects are not followed")
			assert.Len(t, origin.requests(), 1)
			assert.Empty(t, target.requests(), "the redirect target was requested")
		})
	}
}

// A receiver that never answers costs one timeout, not more.
func TestDeliverTimeout(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t)
	tests := []struct {
		name string
		// hang holds the request until the client gives up.
		hang       func(w http.ResponseWriter, r *http.Request)
		want       Outcome
		wantStatus int
	}{
		{
			name: "no answer at all",
			hang: func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			want: Failed,
		},
		{
			name: "status sent, body trickles forever",
			hang: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				w.Write([]byte("a"))
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			},
			// The status decides; the unread body only must not hold us.
			want: Succeeded, wantStatus: 200,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := newReceiver(t, false, secret, func(_ int, w http.ResponseWriter, r *http.Request) { tt.hang(w, r) })
			const timeout = 300 * time.Millisecond
			c, _ := newTestClient(t, Options{AllowPrivate: true, Timeout: timeout})
			r := deliverWithin(t, c, Delivery{URL: rc.URL, MsgID: "msg-1", Body: []byte(`{}`), Secrets: []string{secret}}, 10*time.Second)
			assert.Equal(t, tt.want, r.Outcome)
			assert.Equal(t, tt.wantStatus, r.StatusCode)
			if tt.want == Failed {
				assert.Equal(t, "no answer within 300ms", r.Err)
			}
		})
	}
}

// An endless answer is read only up to a few KiB: Deliver returns long
// before its (here generous) timeout would cut the reading short.
func TestDeliverReadsLittleOfTheAnswer(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t)
	chunk := make([]byte, 32<<10)
	rc := newReceiver(t, false, secret, func(_ int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	c, _ := newTestClient(t, Options{AllowPrivate: true, Timeout: time.Minute})
	r := deliverWithin(t, c, Delivery{URL: rc.URL, MsgID: "msg-1", Body: []byte(`{}`), Secrets: []string{secret}}, 20*time.Second)
	assert.Equal(t, Result{StatusCode: 200, Outcome: Succeeded}, r)
}

// Without AllowPrivate every non-public address is refused by the dialer's
// Control, after the socket is made and before it connects. The receivers
// on loopback show that nothing arrived; the dial log shows the check (not
// a failed connection) stopped the attempt.
func TestDeliverRefusesNonPublicAddresses(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t)
	v4 := newReceiver(t, true, secret, nil)
	v6 := newReceiver6(t, secret)
	roots := x509.NewCertPool()
	roots.AddCert(v4.Certificate())
	roots.AddCert(v6.Certificate())

	tests := []struct {
		name        string
		url         string
		lookup      func(context.Context, string) ([]netip.Addr, error)
		wantRefused string // the address the Control hook refused
		wantKind    string
	}{
		{
			name:        "127.0.0.1",
			url:         v4.URL + "/hooks",
			wantRefused: "127.0.0.1:" + v4.port(t), wantKind: "loopback",
		},
		{
			name:        "[::1]",
			url:         v6.URL + "/hooks",
			wantRefused: "[::1]:" + v6.port(t), wantKind: "loopback",
		},
		{
			name:        "IPv4-mapped 127.0.0.1",
			url:         "https://[::ffff:127.0.0.1]:" + v4.port(t) + "/hooks",
			wantRefused: "127.0.0.1:" + v4.port(t), wantKind: "loopback",
		},
		{
			name:        "cloud metadata 169.254.169.254",
			url:         "https://169.254.169.254/latest/meta-data/",
			wantRefused: "169.254.169.254:443", wantKind: "link-local",
		},
		{
			name:        "a name that resolves to 10.0.0.1",
			url:         "https://hooks.example.com/touchpoint",
			lookup:      resolveTo("10.0.0.1"),
			wantRefused: "10.0.0.1:443", wantKind: "private",
		},
		{
			name:        "a name that resolves to a loopback receiver",
			url:         "https://example.com:" + v4.port(t) + "/touchpoint", // a name in the test certificate
			lookup:      resolveTo("127.0.0.1"),
			wantRefused: "127.0.0.1:" + v4.port(t), wantKind: "loopback",
		},
		{
			name:        "a name that resolves to IPv4-mapped 169.254.169.254",
			url:         "https://metadata.example.com/",
			lookup:      resolveTo("::ffff:169.254.169.254"),
			wantRefused: "169.254.169.254:443", wantKind: "link-local",
		},
	}
	// The group returns when its parallel cases are done.
	t.Run("cases", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				c, log := newTestClient(t, Options{LookupIP: tt.lookup, Timeout: 5 * time.Second})
				// Trusting the receivers' certificate means that only the
				// address check stands between the client and them.
				c.transport.TLSClientConfig.RootCAs = roots
				r := deliverWithin(t, c, Delivery{URL: tt.url, MsgID: "msg-1", Body: []byte(`{}`), Secrets: []string{secret}}, 20*time.Second)
				assert.Equal(t, Failed, r.Outcome)
				assert.Zero(t, r.StatusCode)
				assert.Equal(t, "the endpoint's host is not a public address ("+tt.wantKind+"); deliveries to it are refused", r.Err)
				seen, refused := log.snapshot()
				assert.Equal(t, []string{tt.wantRefused}, refused)
				assert.Equal(t, refused, seen, "every address dialled was refused")
			})
		}
	})
	assert.Empty(t, v4.requests(), "a refused delivery arrived")
	assert.Empty(t, v6.requests(), "a refused delivery arrived")
}

// newReceiver6 is a TLS receiver on [::1].
func newReceiver6(t *testing.T, secret string) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp6", "[::1]:0")
	require.NoError(t, err)
	return startReceiver(t, ln, true, secret, nil)
}

// When a name resolves to several addresses and one cannot be reached, the
// next is tried, in the resolver's order; the URL's host stays the Host.
func TestDeliverTriesEachResolvedAddress(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t)
	rc := newReceiver(t, false, secret, nil)
	c, log := newTestClient(t, Options{AllowPrivate: true, LookupIP: func(_ context.Context, host string) ([]netip.Addr, error) {
		if host != "hooks.example.com" {
			return nil, fmt.Errorf("unexpected host %q", host)
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.1")}, nil
	}})
	// Nothing listens on 127.0.0.2 at this port (the receiver is bound to
	// 127.0.0.1), so the first address is refused by the kernel.
	r := c.Deliver(t.Context(), Delivery{URL: "http://hooks.example.com:" + rc.port(t) + "/x", MsgID: "msg-1", Body: []byte(`{}`), Secrets: []string{secret}})
	assert.Equal(t, Succeeded, r.Outcome, r.Err)
	seen, _ := log.snapshot()
	assert.Equal(t, []string{"127.0.0.2:" + rc.port(t), "127.0.0.1:" + rc.port(t)}, seen)
	require.Len(t, rc.requests(), 1)
	assert.Equal(t, "hooks.example.com:"+rc.port(t), rc.requests()[0].host, "the URL's host is kept for the Host header")
}

// Without AllowPrivate only https is used, even for a URL stored while
// http was allowed; with it, the same URL is delivered.
func TestDeliverHTTPSOnly(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t)
	rc := newReceiver(t, false, secret, nil)
	url := "http://hooks.example.com:" + rc.port(t) + "/x"
	d := Delivery{URL: url, MsgID: "msg-1", Body: []byte(`{}`), Secrets: []string{secret}}

	strict, log := newTestClient(t, Options{LookupIP: resolveTo("127.0.0.1")})
	r := strict.Deliver(t.Context(), d)
	assert.Equal(t, Result{Outcome: Failed, Err: "endpoint URL must use https"}, r)
	seen, _ := log.snapshot()
	assert.Empty(t, seen, "nothing is dialled for a URL that cannot be used")
	assert.Empty(t, rc.requests())

	dev, _ := newTestClient(t, Options{AllowPrivate: true, LookupIP: resolveTo("127.0.0.1")})
	assert.Equal(t, Result{Outcome: Succeeded, StatusCode: 204}, dev.Deliver(t.Context(), d))
	assert.Len(t, rc.requests(), 1)
}

// Failures without an answer say what went wrong in a few words, with no
// addresses or internal detail.
func TestDeliverFailuresWithoutAnswer(t *testing.T) {
	t.Parallel()
	secret := mustSecret(t)
	tlsReceiver := newReceiver(t, true, secret, nil)
	plainReceiver := newReceiver(t, false, secret, nil)

	// A port nothing listens on: listen, note it, close.
	ports, err := freeport.Ports("127.0.0.1", 1) // nobody listens there
	require.NoError(t, err)
	closedPort := strconv.Itoa(ports[0])

	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancelExpired := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	t.Cleanup(cancelExpired)

	tests := []struct {
		name    string
		ctx     context.Context
		opts    Options
		url     string
		secrets []string
		msgID   string
		want    string
	}{
		{name: "connection refused", url: "http://127.0.0.1:" + closedPort + "/", want: "connection refused"},
		{name: "unknown certificate authority", url: tlsReceiver.URL, want: "TLS: certificate signed by an unknown authority"},
		{name: "plain http answer to TLS", url: "https://127.0.0.1:" + plainReceiver.port(t) + "/", want: "TLS: the endpoint did not answer with TLS"},
		{
			name: "name does not resolve",
			opts: Options{LookupIP: func(context.Context, string) ([]netip.Addr, error) { return nil, nil }},
			url:  "https://nowhere.example.com/", want: "the endpoint's host name does not resolve",
		},
		{
			name: "resolver fails",
			opts: Options{LookupIP: func(context.Context, string) ([]netip.Addr, error) {
				return nil, errors.New("lookup nowhere.example.com on 10.1.2.3:53: server misbehaving")
			}},
			url: "https://nowhere.example.com/", want: "the endpoint's host name could not be resolved",
		},
		{name: "cancelled by the caller", ctx: cancelled, url: plainReceiver.URL, want: "cancelled"},
		{name: "the caller's deadline passed", ctx: expired, url: plainReceiver.URL, want: "timed out"},
		{name: "not a URL", url: "::", want: "endpoint URL must be an absolute URL such as https://example.com/webhooks"},
		{name: "bad secret", url: plainReceiver.URL, secrets: []string{"whsec_short"}, want: "cannot sign: sign webhook: secret 1: invalid webhook secret: not standard base64"},
		{name: "no secret", url: plainReceiver.URL, secrets: []string{}, want: "cannot sign: sign webhook: no secret"},
		{name: "bad message id", url: plainReceiver.URL, msgID: "msg.1", want: `cannot sign: sign webhook: message id "msg.1" must be printable ASCII without '.'`},
	}
	// The group returns when its parallel cases are done.
	t.Run("cases", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				opts := tt.opts
				opts.AllowPrivate = true
				c, _ := newTestClient(t, opts)
				ctx := tt.ctx
				if ctx == nil {
					ctx = t.Context()
				}
				d := Delivery{URL: tt.url, MsgID: "msg-1", Body: []byte(`{}`), Secrets: []string{secret}}
				if tt.secrets != nil {
					d.Secrets = tt.secrets
				}
				if tt.msgID != "" {
					d.MsgID = tt.msgID
				}
				assert.Equal(t, Result{Outcome: Failed, Err: tt.want}, c.Deliver(ctx, d))
			})
		}
	})
	assert.Empty(t, plainReceiver.requests())
	assert.Empty(t, tlsReceiver.requests())
}
