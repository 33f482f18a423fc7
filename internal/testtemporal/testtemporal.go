// Package testtemporal runs a real Temporal server for tests in a process
// of its own (the testtemporal-server command beside this package), so a
// test binary links only the Temporal SDK: it compiles in seconds and runs
// under the race detector, while the server itself is never rebuilt with
// -race. This package must not import go.temporal.io/server; a test
// guards that.
//
// The helper binary is the one named by TOUCHPOINT_TEST_TEMPORAL_BIN (make
// test builds it once), else it is built here with `go build` into the
// user's cache directory, under a file lock shared by test processes that
// run in parallel; the go command's build cache makes that cheap when
// nothing changed. The server listens on free loopback ports and dies with
// the test process.
package testtemporal

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"
	enumspb "go.temporal.io/api/enums/v1"
)

// BinaryEnv names the environment variable that points at a prebuilt
// testtemporal-server binary.
const BinaryEnv = "TOUCHPOINT_TEST_TEMPORAL_BIN"

// Options configure a server. The zero value is an in-memory server with
// namespace "default", no TLS and no UI.
type Options struct {
	// Namespace is registered at start; default "default".
	Namespace string
	// SearchAttributes to register on Namespace.
	SearchAttributes map[string]enumspb.IndexedValueType
	// TLS serves the frontend over TLS (PEM files); nil: plain text.
	TLS *TLS
	// PostgresURL, when set, keeps Temporal's state in PostgreSQL: a URL of
	// a user that may create databases, e.g.
	// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable.
	PostgresURL string
	// PostgresDatabase is the database to use. Empty: a fresh one with a
	// unique name, dropped when the server stops. A named one is created
	// when missing and left in place, so a later server can continue on it.
	PostgresDatabase string
	// UI serves the Temporal Web UI on a free port (see Server.UIURL).
	UI bool
	// LogLevel of Temporal's own logs, written to the test process's
	// standard error: "debug", "info", "warn" (default) or "error".
	LogLevel string
	// Stderr receives the server's logs; default os.Stderr.
	Stderr io.Writer
	// Metrics serves the server's `action` metric (the Actions Temporal
	// Cloud bills) on a free port (see Server.MetricsURL).
	Metrics bool
}

// TLS names the PEM files of a TLS frontend.
type TLS struct {
	// CertFile and KeyFile are the frontend's certificate (chain) and key.
	CertFile, KeyFile string
	// ClientCAFile, when set, requires clients to present a certificate
	// issued by a CA in it (mutual TLS).
	ClientCAFile string
}

// Server is a running helper process.
type Server struct {
	cmd      *exec.Cmd
	stdin    io.Closer
	exited   chan struct{} // closed once the process has been waited for
	waitErr  error
	address  string
	uiURL    string
	metrics  string
	pgURL    string
	database string
	dropDB   bool

	stopOnce sync.Once
	stopErr  error
}

const (
	startTimeout = 2 * time.Minute
	// stopGrace is how long Stop waits after SIGTERM before SIGKILL; the
	// helper itself gives Temporal 30s.
	stopGrace = 40 * time.Second
)

// Start starts a server for t and stops it when t's cleanup runs. It fails
// t when the server does not start.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, err := New(ctx, opts)
	if err != nil {
		t.Fatalf("start temporal: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop temporal: %v", err)
		}
	})
	return s
}

// New starts a server and returns once its frontend serves the namespace;
// ctx bounds the start. The caller must Stop it. It is for TestMain, where
// there is no testing.TB; tests use Start.
func New(ctx context.Context, opts Options) (_ *Server, err error) {
	s := &Server{exited: make(chan struct{}), pgURL: opts.PostgresURL, database: opts.PostgresDatabase}
	if opts.PostgresURL != "" && s.database == "" {
		s.database, s.dropDB = "testtemporal_"+randomHex(), true
	}
	args, err := opts.args(s.database)
	if err != nil {
		return nil, err
	}
	ready, err := s.start(ctx, args, opts.Stderr)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err == nil {
			return
		}
		select {
		case <-s.exited: // nothing to stop; Stop would only repeat the error
			if s.dropDB {
				err = errors.Join(err, dropDatabase(s.pgURL, s.database))
			}
		default:
			err = errors.Join(err, s.Stop())
		}
	}()
	select {
	case r, ok := <-ready:
		if !ok {
			<-s.exited
			return nil, fmt.Errorf("testtemporal-server exited before it was ready (%v); its log is above", s.waitErr)
		}
		s.address, s.uiURL, s.metrics = r.Address, r.UIURL, r.MetricsURL
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("testtemporal-server exited before it was ready (%v); its log is above", s.waitErr)
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for testtemporal-server to be ready: %w", ctx.Err())
	}
}

// Address is the frontend's host:port.
func (s *Server) Address() string { return s.address }

// UIURL is the Web UI's base URL, or "" without Options.UI.
func (s *Server) UIURL() string { return s.uiURL }

// MetricsURL is where the server's `action` metric is served ("" without
// Options.Metrics).
func (s *Server) MetricsURL() string { return s.metrics }

// Database is the PostgreSQL database holding the server's state, or ""
// for an in-memory server.
func (s *Server) Database() string { return s.database }

// Stop stops the server (SIGTERM to its process group, SIGKILL if it does
// not exit in time) and drops the database it created. It is idempotent,
// and reports a server that had died before it or did not stop cleanly.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		select {
		case <-s.exited:
			s.stopErr = fmt.Errorf("testtemporal-server exited before Stop (%v); its log is above", s.waitErr)
		default:
		}
		_ = s.stdin.Close()
		_ = signalGroup(s.cmd.Process.Pid, sigTerm)
		select {
		case <-s.exited:
			if s.stopErr == nil && s.waitErr != nil {
				s.stopErr = fmt.Errorf("testtemporal-server did not stop cleanly (%v); its log is above", s.waitErr)
			}
		case <-time.After(stopGrace):
			_ = signalGroup(s.cmd.Process.Pid, sigKill)
			<-s.exited
			s.stopErr = fmt.Errorf("testtemporal-server did not stop within %v; killed", stopGrace)
		}
		if s.dropDB {
			s.stopErr = errors.Join(s.stopErr, dropDatabase(s.pgURL, s.database))
		}
	})
	return s.stopErr
}

// args are the helper's command line for these options.
func (o Options) args(database string) ([]string, error) {
	args := []string{"-watch-stdin"}
	if o.Namespace != "" {
		args = append(args, "-namespace", o.Namespace)
	}
	names := make([]string, 0, len(o.SearchAttributes))
	for name := range o.SearchAttributes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		typ := o.SearchAttributes[name]
		short, ok := shortTypeNames[typ]
		if !ok {
			return nil, fmt.Errorf("search attribute %s: unsupported type %v", name, typ)
		}
		args = append(args, "-search-attribute", name+"="+short)
	}
	if o.TLS != nil {
		args = append(args, "-tls-cert", o.TLS.CertFile, "-tls-key", o.TLS.KeyFile)
		if o.TLS.ClientCAFile != "" {
			args = append(args, "-client-ca", o.TLS.ClientCAFile)
		}
	}
	if o.PostgresURL != "" {
		args = append(args, "-postgres-url", o.PostgresURL, "-postgres-db", database)
	}
	if o.UI {
		args = append(args, "-ui-addr", "127.0.0.1:0")
	}
	if o.LogLevel != "" {
		args = append(args, "-log-level", o.LogLevel)
	}
	if o.Metrics {
		args = append(args, "-metrics-addr", "127.0.0.1:0")
	}
	return args, nil
}

var shortTypeNames = map[enumspb.IndexedValueType]string{
	enumspb.INDEXED_VALUE_TYPE_TEXT:         "Text",
	enumspb.INDEXED_VALUE_TYPE_KEYWORD:      "Keyword",
	enumspb.INDEXED_VALUE_TYPE_INT:          "Int",
	enumspb.INDEXED_VALUE_TYPE_DOUBLE:       "Double",
	enumspb.INDEXED_VALUE_TYPE_BOOL:         "Bool",
	enumspb.INDEXED_VALUE_TYPE_DATETIME:     "Datetime",
	enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST: "KeywordList",
}

// ready is the helper's one line on standard output.
type ready struct {
	Address    string `json:"address"`
	UIURL      string `json:"uiURL"`
	MetricsURL string `json:"metricsURL"`
}

// start runs the helper. The returned channel yields its ready line, or is
// closed without one when its output ends first.
func (s *Server) start(ctx context.Context, args []string, stderr io.Writer) (<-chan ready, error) {
	if stderr == nil {
		stderr = os.Stderr
	}
	bin, unlock, err := helperBinary(ctx)
	if err != nil {
		return nil, err
	}
	// Held until the process runs: another test process must not replace
	// the binary between our build and our exec.
	defer unlock()

	s.cmd = exec.Command(bin, args...)
	s.cmd.Stderr = stderr
	s.cmd.SysProcAttr = sysProcAttr()
	stdin, err := s.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	s.stdin = stdin

	out := make(chan ready, 1)
	lines := make(chan struct{})
	go func() {
		defer close(out)
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var r ready
			if json.Unmarshal(sc.Bytes(), &r) == nil && r.Address != "" {
				out <- r
				break
			}
			fmt.Fprintf(stderr, "testtemporal-server: %s\n", sc.Bytes())
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		<-lines // Wait must not run before the pipe is read to its end
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	return out, nil
}

// dropDatabase removes a database the server created, closing any
// connection still open on it.
func dropDatabase(adminURL, name string) error {
	db, err := sql.Open("postgres", adminURL)
	if err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
