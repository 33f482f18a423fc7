package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout bounds one delivery attempt when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// DefaultUserAgent is sent when Options.UserAgent is empty.
const DefaultUserAgent = "Touchpoint-Webhooks/1.0"

// responseBodyLimit is how much of an answer is read (and discarded): the
// status decides, and a receiver must not make us read megabytes.
const responseBodyLimit = 4 << 10

// Options configure a Client.
type Options struct {
	// AllowPrivate lets deliveries reach loopback, private and link-local
	// addresses and use http (TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE, for
	// development and tests). Never in production: a shop could point an
	// endpoint at the metadata service or an internal admin port.
	AllowPrivate bool
	// Timeout bounds a whole attempt: connecting, TLS, sending, the answer's
	// headers and the part of its body that is read. Zero: DefaultTimeout.
	Timeout time.Duration
	// LookupIP resolves host names; nil uses the system resolver. Tests set
	// it to make a name resolve to a chosen address. Whatever it returns
	// passes the same dial-time check.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// UserAgent is sent with every request. Empty: DefaultUserAgent.
	UserAgent string
}

// Client posts signed webhooks to shop-given URLs. It is safe for
// concurrent use; make one per process and share it.
//
// It never follows redirects, ignores proxy settings from the environment
// (a proxy would connect on our behalf, past the address check) and, unless
// AllowPrivate, refuses at dial time every address that is not public:
// the check runs in the dialer's Control hook on the address about to be
// connected, before any packet is sent, so a name that resolves (or later
// re-resolves) to an internal address cannot reach it.
type Client struct {
	http         *http.Client
	transport    *http.Transport
	dialer       *net.Dialer
	lookup       func(ctx context.Context, host string) ([]netip.Addr, error)
	allowPrivate bool
	timeout      time.Duration
	userAgent    string
}

// NewClient builds a Client.
func NewClient(opts Options) *Client {
	c := &Client{
		lookup:       opts.LookupIP,
		allowPrivate: opts.AllowPrivate,
		timeout:      opts.Timeout,
		userAgent:    opts.UserAgent,
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	c.dialer = &net.Dialer{Timeout: c.timeout, KeepAlive: 30 * time.Second}
	if !c.allowPrivate {
		c.dialer.Control = refuseNonPublic
	}
	c.transport = &http.Transport{
		Proxy:                  nil,
		DialContext:            c.dial,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    c.timeout,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	c.http = &http.Client{
		Transport: c.transport,
		Timeout:   c.timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return c
}

// Delivery is one attempt to deliver one message to one endpoint.
type Delivery struct {
	URL string
	// MsgID is the webhook-id: the delivery's ID ("msg-…"), the same on
	// every attempt, so receivers can drop duplicates.
	MsgID string
	// Timestamp is the attempt's time, sent as webhook-timestamp and
	// signed. Zero: now.
	Timestamp time.Time
	// Body is the marshalled Message, the same bytes on every attempt.
	Body []byte
	// Secrets sign the attempt: the endpoint's secret, and during a
	// rotation the previous one too.
	Secrets []string
}

// Outcome is what an attempt means for the delivery and the endpoint.
type Outcome string

const (
	// Succeeded: the receiver answered 2xx; the delivery is done.
	Succeeded Outcome = "succeeded"
	// Gone: the receiver answered 410; disable the endpoint and stop.
	Gone Outcome = "gone"
	// Failed: anything else; try again later. Also returned for a URL or
	// secret that cannot work, which the retry schedule gives up on.
	Failed Outcome = "failed"
)

// Result describes one attempt.
type Result struct {
	// StatusCode is the HTTP status answered, 0 when there was no answer.
	StatusCode int
	Outcome    Outcome
	// Err says briefly why the attempt did not succeed; "" when it did.
	// It names no internal detail and is meant to be stored and shown to
	// the shop.
	Err string
}

// Deliver makes one attempt: it signs, posts once and classifies the
// answer. It never retries and never follows a redirect. The answer's body
// is read up to a few KiB and discarded.
func (c *Client) Deliver(ctx context.Context, d Delivery) Result {
	if _, err := checkURLForm(d.URL, c.allowPrivate); err != nil {
		return Result{Outcome: Failed, Err: "endpoint URL " + err.Error()}
	}
	ts := d.Timestamp
	if ts.IsZero() {
		ts = time.Now()
	}
	sig, err := Sign(d.MsgID, ts, d.Body, d.Secrets...)
	if err != nil {
		return Result{Outcome: Failed, Err: "cannot sign: " + err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return Result{Outcome: Failed, Err: "cannot build the request"}
	}
	req.Header.Set(HeaderID, d.MsgID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", c.userAgent)

	resp, err := c.http.Do(req)
	if err != nil {
		return Result{Outcome: Failed, Err: c.describe(ctx, err)}
	}
	defer resp.Body.Close()
	// Reading a little lets a short answer finish cleanly; an error here
	// changes nothing, the status has been answered.
	io.CopyN(io.Discard, resp.Body, responseBodyLimit)

	r := Result{StatusCode: resp.StatusCode}
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
		r.Outcome = Succeeded
	case code == http.StatusGone:
		r.Outcome, r.Err = Gone, "410 Gone: the endpoint asked to receive no more webhooks"
	case code >= 300 && code <= 399:
		r.Outcome, r.Err = Failed, fmt.Sprintf("%s: redirects are not followed; use the final URL", status(code))
	default:
		r.Outcome, r.Err = Failed, status(code)
	}
	return r
}

func status(code int) string {
	if text := http.StatusText(code); text != "" {
		return strconv.Itoa(code) + " " + text
	}
	return "HTTP status " + strconv.Itoa(code)
}

// dial connects to addr. With a LookupIP hook it resolves names itself and
// tries each address in turn; otherwise the dialer resolves (and races IPv4
// and IPv6). Either way every address goes through the dialer's Control.
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if c.lookup == nil {
		return c.dialer.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return c.dialer.DialContext(ctx, network, addr)
	}
	ips, err := c.lookup(ctx, host)
	if err != nil {
		return nil, &net.DNSError{Err: err.Error(), Name: host}
	}
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
	}
	var first error
	for _, ip := range ips {
		conn, err := c.dialer.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// refusedError is a connection refused by the address check.
type refusedError struct{ kind string }

func (e *refusedError) Error() string {
	return "refused to connect to a " + e.kind + " address"
}

// refuseNonPublic is the dialer's Control: it runs after the socket is
// made and before it connects, on the very address about to be connected.
func refuseNonPublic(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return &refusedError{kind: "non-TCP"}
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &refusedError{kind: "unparsable"}
	}
	if kind := nonPublic(ap.Addr()); kind != "" {
		return &refusedError{kind: kind}
	}
	return nil
}

// describe turns a transport error into Result.Err: short, and free of
// internal detail such as the addresses a name resolved to.
func (c *Client) describe(ctx context.Context, err error) string {
	var (
		refused *refusedError
		dnsErr  *net.DNSError
		netErr  net.Error
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		verify  *tls.CertificateVerificationError
		record  tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &refused):
		return "the endpoint's host is not a public address (" + refused.kind + "); deliveries to it are refused"
	case errors.Is(ctx.Err(), context.Canceled):
		return "cancelled"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "no answer within " + c.timeout.String()
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "the endpoint's host name does not resolve"
		}
		return "the endpoint's host name could not be resolved"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &unknown):
		return "TLS: certificate signed by an unknown authority"
	case errors.As(err, &host):
		return "TLS: certificate is not valid for the endpoint's host"
	case errors.As(err, &invalid):
		return "TLS: certificate is invalid or expired"
	case errors.As(err, &verify):
		return "TLS: certificate could not be verified"
	case errors.As(err, &record),
		// net/http turns a RecordHeaderError that starts like an HTTP
		// answer into this plain error.
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "TLS: the endpoint did not answer with TLS"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed without an answer"
	}
	return "connection failed"
}
