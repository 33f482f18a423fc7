package temporalclient

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// handshakeError is a failed TLS handshake (or a TLS/plain-text mismatch)
// said in terms of the settings to change. It wraps the gRPC error and
// keeps its status code, so the SDK's retries treat it as before.
type handshakeError struct {
	msg string
	// found is what a probe of the server saw, when the gRPC error alone
	// did not tell (see probe).
	found string
	err   error
}

func (e *handshakeError) Error() string {
	if e.found != "" {
		return e.msg + ": " + e.found + " (gRPC: " + e.err.Error() + ")"
	}
	return e.msg + ": " + e.err.Error()
}

func (e *handshakeError) Unwrap() error { return e.err }

// GRPCStatus keeps the cause's code (Unavailable) with the explained
// message, which is what the SDK turns into its service error.
func (e *handshakeError) GRPCStatus() *status.Status {
	return status.New(status.Code(e.err), e.Error())
}

// setup is what an explanation needs to know of the client's options.
type setup struct {
	address    string
	tls        *tls.Config // nil: plain text
	clientCert bool
	serverCA   bool
	serverName string // the name checked, when set apart from the address
}

func setupOf(opts client.Options) setup {
	s := setup{address: opts.HostPort}
	if s.address == "" {
		s.address = client.DefaultHostPort
	}
	if t := opts.ConnectionOptions.TLS; t != nil {
		s.tls = t.Clone()
		s.clientCert = len(t.Certificates) > 0 || t.GetClientCertificate != nil
		s.serverCA = t.RootCAs != nil
		s.serverName = t.ServerName
	}
	return s
}

// explaining adds the interceptor that explains TLS failures to opts,
// innermost, so the SDK's own error handling sees the explained error.
func explaining(opts client.Options) client.Options {
	s := setupOf(opts)
	dial := make([]grpc.DialOption, 0, len(opts.ConnectionOptions.DialOptions)+1)
	dial = append(dial, opts.ConnectionOptions.DialOptions...)
	opts.ConnectionOptions.DialOptions = append(dial, grpc.WithChainUnaryInterceptor(
		func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
			err := invoker(ctx, method, req, reply, cc, callOpts...)
			if err == nil {
				return nil
			}
			return s.explain(ctx, err)
		}))
	return opts
}

// explain returns err as a handshakeError when it is a TLS failure, else
// err itself. gRPC reports a failed handshake only as text inside an
// Unavailable status, and often not even that: under TLS 1.3 the client
// finishes its side of the handshake before the server checks the client
// certificate, so the server's alert races with the client's first write
// and the error may read "broken pipe". When the text does not tell, a
// probe of the server does.
func (s setup) explain(ctx context.Context, err error) error {
	if text := s.diagnose(err.Error()); text != "" {
		return &handshakeError{msg: text, err: err}
	}
	if !connectionLost(err.Error()) {
		return err
	}
	found := s.probe(ctx)
	if found == nil {
		return err
	}
	if text := s.diagnose(found.Error()); text != "" {
		return &handshakeError{msg: text, found: found.Error(), err: err}
	}
	return err
}

// errSpeaksTLS is what probe finds when a plain-text client meets a TLS
// server.
var errSpeaksTLS = errors.New("the server answered a TLS handshake")

// diagnose names the problem in an error text, or returns "".
func (s setup) diagnose(msg string) string {
	msg = strings.ToLower(msg)
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(msg, sub) {
				return true
			}
		}
		return false
	}
	refused := "Temporal at " + s.address + " refused the connection during the TLS handshake: "
	untrusted := "Temporal at " + s.address + " was not trusted during the TLS handshake: "
	switch {
	// The server wants a client certificate and got none (TLS 1.3 says so
	// in its alert; TLS 1.2 servers send "bad certificate" instead).
	case !s.clientCert && has("certificate required", "remote error: tls: bad certificate"):
		return refused + "the server requires a client certificate (set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)"
	// The server did not accept the client certificate. Go's client sends
	// none when its certificate is not from a CA the server asks for, so
	// "certificate required" can mean this too.
	case has("certificate required", "remote error: tls: bad certificate", "remote error: tls: unknown certificate authority",
		"remote error: tls: certificate unknown", "remote error: tls: unsupported certificate",
		"remote error: tls: certificate revoked", "remote error: tls: certificate expired"):
		return refused + "the server did not accept the client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH must hold an unexpired certificate issued by a CA the server trusts, with its key in TEMPORAL_TLS_CLIENT_KEY_PATH)"
	case has("x509: certificate signed by unknown authority"):
		hint := "set TEMPORAL_TLS_SERVER_CA_CERT_PATH to the CA that issued it"
		if s.serverCA {
			hint = "TEMPORAL_TLS_SERVER_CA_CERT_PATH does not hold the CA that issued it"
		}
		return untrusted + "the server's certificate is not signed by a trusted CA (" + hint + ")"
	case has("x509: certificate is valid for", "x509: certificate is not valid for any names", "x509: cannot validate certificate for"):
		name := s.serverName
		if name == "" {
			name = hostOf(s.address)
		}
		return untrusted + "the server's certificate does not name " + name + " (set TEMPORAL_TLS_SERVER_NAME to a name it holds)"
	case has("x509: certificate has expired or is not yet valid"):
		return untrusted + "the server's certificate has expired or is not yet valid"
	case s.tls != nil && has("first record does not look like a tls handshake"):
		return "Temporal at " + s.address + " does not speak TLS (unset TEMPORAL_TLS_* and TEMPORAL_API_KEY, or set TEMPORAL_TLS=false)"
	case s.tls == nil && strings.Contains(msg, strings.ToLower(errSpeaksTLS.Error())):
		return "Temporal at " + s.address + " requires TLS and this client speaks plain text (set TEMPORAL_TLS=true, and for mutual TLS TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH)"
	}
	return ""
}

// connectionLost reports errors of a connection the server dropped, which
// a TLS mismatch produces along with other causes.
func connectionLost(msg string) bool {
	msg = strings.ToLower(msg)
	for _, sub := range []string{"broken pipe", "connection reset by peer", "eof", "server preface", "handshake failed"} {
		if strings.Contains(msg, sub) {
			return true
		}
	}
	return false
}

// probeTimeout bounds a probe; an accepted TLS 1.3 client waits most of it
// for an alert that does not come.
const probeTimeout = 2 * time.Second

// probe connects once more, outside gRPC, to see why: with TLS, it
// completes the handshake and then reads, which is where a TLS 1.3 server's
// verdict on the client certificate arrives; in plain text it tries a TLS
// handshake to see whether the server expects one. A nil result means the
// probe found nothing wrong (or could not connect at all).
func (s setup) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", s.address)
	if err != nil {
		return nil
	}
	defer raw.Close()
	deadline, _ := ctx.Deadline()
	_ = raw.SetDeadline(deadline)

	cfg := s.tls
	if cfg == nil {
		// Only whether the server speaks TLS matters here.
		cfg = &tls.Config{InsecureSkipVerify: true} // sends nothing; only the answer matters
	} else if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName = hostOf(s.address)
	}
	conn := tls.Client(raw, cfg)
	err = conn.HandshakeContext(ctx)
	if s.tls == nil {
		if err == nil || strings.Contains(err.Error(), "remote error: tls:") {
			return errSpeaksTLS
		}
		return nil
	}
	if err != nil {
		return err
	}
	_, err = conn.Read(make([]byte, 1))
	var netErr net.Error
	if err == nil || errors.As(err, &netErr) && netErr.Timeout() {
		return nil // no alert: the server accepted the handshake
	}
	return err
}

func hostOf(address string) string {
	if host, _, err := net.SplitHostPort(address); err == nil {
		return host
	}
	return address
}
