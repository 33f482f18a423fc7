// Command testtemporal-server runs the embedded Temporal dev server
// (devtemporal) in a process of its own, so that test binaries need not
// link the Temporal server: those compile in seconds and can run with the
// race detector. internal/testtemporal starts it; it is usable by hand too:
//
//	go run ./internal/testtemporal/testtemporal-server -search-attribute TouchpointAccountId=Keyword
//
// Once the frontend serves the namespace it prints one JSON line on
// standard output, {"address":"127.0.0.1:PORT","uiURL":""}, and runs until
// SIGTERM or SIGINT (or, with -watch-stdin, until its standard input
// closes), then stops Temporal and exits 0. Anything else goes to standard
// error; a failure to start exits 1.
//
// With -image it runs Temporal the way the temporalio/server image does,
// configured from the environment alone, for the tests of the compose
// file (deploy); -validate-dynamic-config checks a dynamic config file.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/touchpoint/touchpoint/devtemporal"
)

// Ready is the line printed once the server is ready.
type Ready struct {
	Address string `json:"address"`
	UIURL   string `json:"uiURL"`
	// MetricsURL serves the server's `action` metric (with -metrics-addr).
	MetricsURL string `json:"metricsURL,omitempty"`
}

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "testtemporal-server:", err)
		os.Exit(1)
	}
}

// searchAttributes collects repeated -search-attribute Name=Type flags.
type searchAttributes map[string]enumspb.IndexedValueType

func (s searchAttributes) String() string { return fmt.Sprint(map[string]enumspb.IndexedValueType(s)) }

func (s searchAttributes) Set(v string) error {
	name, typ, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q: want Name=Type, e.g. TouchpointAccountId=Keyword", v)
	}
	t, err := enumspb.IndexedValueTypeFromString(typ)
	if err != nil || t == enumspb.INDEXED_VALUE_TYPE_UNSPECIFIED {
		return fmt.Errorf("%q: unknown search attribute type %q (Keyword, Text, Int, Double, Bool, Datetime, KeywordList)", v, typ)
	}
	s[name] = t
	return nil
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("testtemporal-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sas := searchAttributes{}
	var (
		namespace   = fs.String("namespace", "default", "namespace to register")
		frontend    = fs.String("frontend-addr", "127.0.0.1:0", "frontend gRPC host:port (port 0: a free one)")
		uiAddr      = fs.String("ui-addr", "", "Web UI host:port (port 0: a free one); empty: no UI")
		dbFile      = fs.String("db-file", "", "SQLite file for Temporal's state; empty: in memory")
		pgURL       = fs.String("postgres-url", "", "keep state in PostgreSQL: URL of a user that may create databases, e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable")
		pgDB        = fs.String("postgres-db", "", "with -postgres-url: the database to create (when missing) and use")
		tlsCert     = fs.String("tls-cert", "", "PEM certificate (chain) of the frontend; serves TLS")
		tlsKey      = fs.String("tls-key", "", "PEM private key of -tls-cert")
		clientCA    = fs.String("client-ca", "", "PEM CA certificate(s); requires clients to present a certificate they issued (mutual TLS)")
		logLevel    = fs.String("log-level", "warn", "Temporal's log level: debug, info, warn or error")
		watchStdin  = fs.Bool("watch-stdin", false, "stop when standard input closes (the parent process is gone)")
		stopTimeout = fs.Duration("stop-timeout", 30*time.Second, "give up stopping Temporal after this long")
		image       = fs.Bool("image", false, "run Temporal as the temporalio/server image does: the configuration template embedded in the server module, rendered from the environment (DB, POSTGRES_SEEDS, DYNAMIC_CONFIG_FILE_PATH, …); the other flags but -watch-stdin are ignored and no ready line is printed")
		validateDC  = fs.String("validate-dynamic-config", "", "check a dynamic config file (unknown keys and invalid values fail) and exit")
		metricsAddr = fs.String("metrics-addr", "", "serve the server's `action` metric (the Actions Temporal Cloud bills) at /metrics on this host:port (port 0: a free one); empty: none")
	)
	fs.Var(sas, "search-attribute", "custom search attribute Name=Type to register (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *validateDC != "" {
		return validateDynamicConfig(*validateDC, stdout)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	cfg := devtemporal.Config{
		DBFile:           *dbFile,
		FrontendAddr:     *frontend,
		UIAddr:           *uiAddr,
		Namespace:        *namespace,
		SearchAttributes: sas,
		Logger:           slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
		LogLevel:         level,
	}
	if *pgURL != "" || *pgDB != "" {
		if *pgURL == "" || *pgDB == "" {
			return errors.New("-postgres-url and -postgres-db go together")
		}
		cfg.Postgres = &devtemporal.Postgres{AdminURL: *pgURL, Database: *pgDB}
	}
	var err error
	if cfg.TLS, err = loadTLS(*tlsCert, *tlsKey, *clientCA); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *watchStdin {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			_, _ = io.Copy(io.Discard, stdin)
			cancel()
		}()
	}

	if *image {
		return runImage(ctx)
	}

	startCtx, cancelStart := context.WithTimeout(ctx, 2*time.Minute)
	srv, err := devtemporal.Start(startCtx, cfg)
	cancelStart()
	if err != nil {
		return err
	}
	r := Ready{Address: srv.FrontendAddress(), UIURL: srv.UIURL()}
	if *metricsAddr != "" {
		if r.MetricsURL, err = serveActions(ctx, *metricsAddr, srv); err != nil {
			return errors.Join(err, srv.Stop())
		}
	}
	line, err := json.Marshal(r)
	if err != nil {
		return errors.Join(err, srv.Stop())
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		return errors.Join(fmt.Errorf("report ready: %w", err), srv.Stop())
	}

	<-ctx.Done()
	// A stop that hangs must not leave the process behind.
	timer := time.AfterFunc(*stopTimeout, func() {
		fmt.Fprintln(stderr, "testtemporal-server: stop timed out; exiting")
		os.Exit(1)
	})
	defer timer.Stop()
	return srv.Stop()
}

// serveActions serves srv's `action` metric at /metrics on addr until ctx
// ends, and returns its URL.
func serveActions(ctx context.Context, addr string, srv *devtemporal.Server) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("-metrics-addr: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(srv.ActionsCollector())
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	context.AfterFunc(ctx, func() { hs.Close() })
	return "http://" + ln.Addr().String() + "/metrics", nil
}

// loadTLS reads the frontend's TLS files; no certificate means plain text.
func loadTLS(certFile, keyFile, clientCAFile string) (*devtemporal.TLS, error) {
	if certFile == "" && keyFile == "" {
		if clientCAFile != "" {
			return nil, errors.New("-client-ca needs -tls-cert and -tls-key")
		}
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert/-tls-key: %w", err)
	}
	t := &devtemporal.TLS{Certificate: cert}
	if clientCAFile != "" {
		pemData, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("-client-ca: %w", err)
		}
		t.ClientCAs = x509.NewCertPool()
		if !t.ClientCAs.AppendCertsFromPEM(pemData) {
			return nil, fmt.Errorf("-client-ca: no PEM certificate in %s", clientCAFile)
		}
	}
	return t, nil
}
