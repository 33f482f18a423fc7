// Package devtemporal runs an in-process Temporal dev server (SQLite, all
// services in one process) plus the Temporal Web UI. It backs `touchpoint dev`
// and, through the testtemporal-server helper of internal/testtemporal,
// tests that need a real Temporal server. For tests of production settings
// its frontend can serve TLS (optionally mutual TLS) and it can keep its
// state in PostgreSQL.
package devtemporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"

	"github.com/touchpoint/touchpoint/internal/freeport"
	"github.com/touchpoint/touchpoint/internal/searchattr"
)

// Config configures a dev server. The zero value is a usable in-memory server
// on a free port with namespace "default" and no UI.
type Config struct {
	// DBFile is the SQLite file holding Temporal's state; "" keeps everything
	// in memory (tests). The schema is created only when the file is new.
	DBFile string
	// FrontendAddr is host:port of the frontend gRPC service; port "0" (or
	// "" for the whole address) picks a free port on 127.0.0.1.
	FrontendAddr string
	// UIAddr is host:port for the Temporal Web UI (port "0" picks a free
	// port); "" disables the UI.
	UIAddr string
	// Namespace is registered at start if missing (24h retention); default "default".
	Namespace string
	// Logger receives Temporal's own logs; default slog.Default().
	Logger *slog.Logger
	// LogLevel filters Temporal's logs; default slog.LevelWarn so they do not
	// flood the dev console.
	LogLevel slog.Leveler
	// SearchAttributes to register on Namespace: name -> type. Already
	// registered ones are left alone, so this is safe across restarts.
	SearchAttributes map[string]enumspb.IndexedValueType
	// TLS, when set, serves the frontend over TLS (with mutual TLS when it
	// names client CAs), as production clusters and Temporal Cloud do.
	TLS *TLS
	// Postgres, when set, keeps Temporal's state in PostgreSQL instead of
	// SQLite; DBFile is then ignored.
	Postgres *Postgres
}

// Server is a running dev server. Stop it with Stop.
type Server struct {
	temporal temporal.Server
	ui       *uiserver.Server
	uiDone   chan struct{}
	frontend string
	uiURL    string
	logLevel *quietLevel
	tls      *frontendTLS // nil: plain text
	actions  *actionCounts

	stopOnce sync.Once
	stopErr  error
}

const (
	localIP     = "127.0.0.1"
	clusterName = "active"
	// stopTimeout bounds Stop: Temporal allows each service 5 minutes to stop.
	stopTimeout = 30 * time.Second
	// readyTimeout bounds Start when ctx has no deadline.
	readyTimeout = time.Minute
)

// Start starts Temporal (and the UI if configured) and returns once the
// frontend serves the namespace and the UI answers.
func Start(ctx context.Context, cfg Config) (_ *Server, err error) {
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LogLevel == nil {
		cfg.LogLevel = slog.LevelWarn
	}
	if cfg.FrontendAddr == "" {
		cfg.FrontendAddr = localIP + ":0"
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, readyTimeout)
		defer cancel()
	}
	level := &quietLevel{Leveler: cfg.LogLevel}
	logger := slog.New(minLevel{cfg.Logger.Handler(), level})

	// Check user-chosen ports up front: Temporal reports a busy port through
	// logger.Fatal and ui-server through os.Exit, neither as an error.
	feHost, fePort, err := resolveAddr(cfg.FrontendAddr)
	if err != nil {
		return nil, fmt.Errorf("frontend address: %w", err)
	}
	s := &Server{frontend: net.JoinHostPort(dialHost(feHost), strconv.Itoa(fePort)), logLevel: level, actions: newActionCounts()}
	var uiHost string
	var uiPort int
	if cfg.UIAddr != "" {
		if uiHost, uiPort, err = resolveAddr(cfg.UIAddr); err != nil {
			return nil, fmt.Errorf("UI address: %w", err)
		}
	}

	if cfg.TLS != nil {
		if s.tls, err = newFrontendTLS(cfg.TLS, dialHost(feHost)); err != nil {
			return nil, err
		}
	}
	sqlCfg, err := prepareDB(cfg, serverLogger{logger})
	if err != nil {
		return nil, err
	}
	conf, err := serverConfig(sqlCfg, feHost, fePort)
	if err != nil {
		return nil, err
	}
	staticHosts := map[primitives.ServiceName]static.Hosts{}
	for name, svc := range conf.Services {
		staticHosts[primitives.ServiceName(name)] = static.SingleLocalHost(
			net.JoinHostPort(dialHost(svc.RPC.BindOnIP), strconv.Itoa(svc.RPC.GRPCPort)))
	}
	opts := []temporal.ServerOption{
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		// Static membership: no ringpop, no membership ports, no gossip
		// between servers that share a test process.
		temporal.WithStaticHosts(staticHosts),
		temporal.WithLogger(serverLogger{logger}),
		// Of its metrics only `action`, what Temporal Cloud would bill.
		temporal.WithCustomMetricsHandler(actionHandler{counts: s.actions}),
		temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{
			// Keep memory modest on laptops and let the UI poll visibility freely.
			dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
			dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
			// Production housekeeping a dev DB does not need. Their SDK workers
			// are also never stopped by the server (goroutines leak and keep
			// polling a dead frontend after Stop), so not starting them matters
			// for test binaries that start many servers.
			dynamicconfig.TaskQueueScannerEnabled.Key(): false,
			dynamicconfig.HistoryScannerEnabled.Key():   false,
			// Worker Versioning: a build's drainage shows within seconds
			// (the default waits minutes for visibility), so a dev stack
			// and the tests see an old build drain as it does.
			dynamicconfig.VersionDrainageStatusRefreshInterval.Key():       2 * time.Second,
			dynamicconfig.VersionDrainageStatusVisibilityGracePeriod.Key(): 2 * time.Second,
		}),
	}
	if s.tls != nil {
		opts = append(opts, temporal.WithTLSConfigFactory(s.tls.provider(dialHost(feHost))))
	}
	s.temporal, err = newTemporal(opts...)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()

	if err := s.waitReady(ctx, cfg, logger); err != nil {
		return nil, err
	}
	if cfg.UIAddr != "" {
		if err := s.startUI(ctx, cfg, uiHost, uiPort); err != nil {
			return nil, fmt.Errorf("start UI: %w", err)
		}
	}
	return s, nil
}

// FrontendAddress is the frontend's host:port, usable by client.Dial.
func (s *Server) FrontendAddress() string { return s.frontend }

// UIURL is the Web UI's base URL ("http://host:port"), or "" when disabled.
func (s *Server) UIURL() string { return s.uiURL }

// Stop stops the UI and Temporal. It is idempotent and gives up (returning an
// error) if Temporal takes longer than 30s to stop.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.logLevel.silenced.Store(true)
		if s.ui != nil {
			s.ui.Stop()
			<-s.uiDone
		}
		done := make(chan error, 1)
		go func() { done <- s.temporal.Stop() }()
		select {
		case s.stopErr = <-done:
		case <-time.After(stopTimeout):
			s.stopErr = errors.New("devtemporal: timed out stopping temporal server")
		}
	})
	return s.stopErr
}

// prepareDB builds the persistence config (SQLite, or PostgreSQL when
// configured), creates the schema for a new database and pre-registers the
// namespace, so it exists before any service starts.
func prepareDB(cfg Config, logger log.Logger) (*config.SQL, error) {
	sqlCfg := &config.SQL{PluginName: sqliteplugin.PluginName}
	if cfg.Postgres != nil {
		var err error
		if sqlCfg, err = preparePostgres(*cfg.Postgres, logger); err != nil {
			return nil, err
		}
	} else if cfg.DBFile == "" {
		// Named shared-cache memory DB: all services' connections see the same
		// data, and a unique name keeps servers in one process apart. The
		// plugin creates the schema itself in memory mode.
		sqlCfg.DatabaseName = "devtemporal-" + randomHex()
		sqlCfg.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
	} else {
		path, err := filepath.Abs(cfg.DBFile)
		if err != nil {
			return nil, err
		}
		sqlCfg.DatabaseName = path
		// Non-query-parameter keys become PRAGMAs. WAL + synchronous=normal
		// avoids an fsync per commit (roughly 2x throughput) and is still
		// crash-safe for the app; busy_timeout makes lock waits block rather
		// than fail.
		sqlCfg.ConnectAttributes = map[string]string{
			"mode":         "rwc",
			"journal_mode": "wal",
			"synchronous":  "normal",
			"busy_timeout": "10000",
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if err := sqliteschema.SetupSchema(sqlCfg); err != nil {
				// Do not leave a half-initialized file that the next start would trust.
				for _, suffix := range []string{"", "-wal", "-shm"} {
					_ = os.Remove(path + suffix)
				}
				return nil, fmt.Errorf("set up sqlite schema in %s: %w", path, err)
			}
		} else if err != nil {
			return nil, err
		}
	}
	// A no-op when the namespace exists (restart); new search attributes are
	// then added through the API in waitReady. Despite their package, both
	// functions work through the generic SQL persistence layer, so they
	// serve PostgreSQL as well.
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, cfg.Namespace, false, cfg.SearchAttributes)
	if err != nil {
		return nil, err
	}
	if err := sqliteschema.CreateNamespaces(sqlCfg, ns); err != nil {
		return nil, fmt.Errorf("register namespace %q: %w", cfg.Namespace, err)
	}
	return sqlCfg, nil
}

func serverConfig(sqlCfg *config.SQL, feHost string, fePort int) (*config.Config, error) {
	// Internal services only ever talk to each other, so they stay on loopback.
	ports, err := freeport.Ports(localIP, 4) // history, matching, worker, frontend HTTP
	if err != nil {
		return nil, err
	}
	svc := func(port int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: localIP}}
	}
	frontend := config.Service{RPC: config.RPC{GRPCPort: fePort, HTTPPort: ports[3], BindOnIP: feHost}}
	feAddr := net.JoinHostPort(dialHost(feHost), strconv.Itoa(fePort))

	conf := &config.Config{
		Services: map[string]config.Service{
			"frontend": frontend,
			"history":  svc(ports[0]),
			"matching": svc(ports[1]),
			"worker":   svc(ports[2]),
		},
		Persistence: config.Persistence{
			DefaultStore:     sqlCfg.PluginName,
			VisibilityStore:  sqlCfg.PluginName,
			NumHistoryShards: 1,
			DataStores:       map[string]config.DataStore{sqlCfg.PluginName: {SQL: sqlCfg}},
		},
		ClusterMetadata: &cluster.Config{
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             feAddr,
				HTTPAddress:            net.JoinHostPort(dialHost(feHost), strconv.Itoa(ports[3])),
			}},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		// The worker service's system workflows dial the frontend through this.
		PublicClient: config.PublicClient{HostPort: feAddr},
	}
	conf.Global.Membership.BroadcastAddress = localIP
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	return conf, nil
}

// waitReady polls the frontend until it serves the namespace, then makes sure
// the configured search attributes exist.
func (s *Server) waitReady(ctx context.Context, cfg Config, logger *slog.Logger) error {
	opts := client.Options{
		HostPort:  s.frontend,
		Namespace: cfg.Namespace,
		Logger:    sdklog.NewStructuredLogger(logger),
	}
	if s.tls != nil {
		opts.ConnectionOptions.TLS = s.tls.client
	}
	c, err := client.NewLazyClient(opts)
	if err != nil {
		return err
	}
	defer c.Close()

	err = poll(ctx, func(ctx context.Context) error {
		_, err := c.WorkflowService().DescribeNamespace(ctx,
			&workflowservice.DescribeNamespaceRequest{Namespace: cfg.Namespace})
		return err
	})
	if err != nil {
		return fmt.Errorf("waiting for temporal frontend at %s: %w", s.frontend, err)
	}
	if _, err := searchattr.Register(ctx, c, cfg.Namespace, cfg.SearchAttributes); err != nil {
		return err
	}
	return nil
}

// newTemporal creates and starts the server. Our logger does not exit on
// Fatal, so a startup failure reported that way surfaces as a nil-pointer
// panic during construction instead; turn it into an error.
func newTemporal(opts ...temporal.ServerOption) (srv temporal.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			srv, err = nil, fmt.Errorf("start temporal server: panic: %v (see error log)", r)
		}
	}()
	if srv, err = temporal.NewServer(opts...); err != nil {
		return nil, fmt.Errorf("create temporal server: %w", err)
	}
	if err = srv.Start(); err != nil {
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	return srv, nil
}

// startUI serves the Web UI on host:port (already checked to be bindable;
// ui-server's Start would os.Exit via echo's Logger.Fatal if it could not bind).
func (s *Server) startUI(ctx context.Context, cfg Config, host string, port int) error {
	origin := "http://" + net.JoinHostPort(dialHost(host), strconv.Itoa(port))
	s.ui = uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                host,
		Port:                port,
		TemporalGRPCAddress: s.frontend,
		EnableUI:            true,
		DefaultNamespace:    cfg.Namespace,
		HideLogs:            true, // no echo banner or per-request logs
		TLS:                 s.uiTLS(),
		CORS: uiconfig.CORS{
			// Plain http on loopback: a Secure CSRF cookie would be dropped.
			CookieInsecure: true,
			AllowOrigins:   []string{origin, "http://" + net.JoinHostPort("localhost", strconv.Itoa(port))},
		},
	}))
	s.uiDone = make(chan struct{})
	go func() {
		defer close(s.uiDone)
		_ = s.ui.Start() // returns nil once Stop closes it
	}()
	s.uiURL = origin

	hc := &http.Client{Timeout: time.Second}
	return poll(ctx, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+"/healthz", nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("UI health: %s", resp.Status)
		}
		return nil
	})
}

// uiTLS is how the Web UI reaches the frontend.
func (s *Server) uiTLS() uiconfig.TLS {
	if s.tls == nil {
		return uiconfig.TLS{}
	}
	return s.tls.ui
}

// poll retries f until it succeeds or ctx ends, returning f's last error.
func poll(ctx context.Context, f func(context.Context) error) error {
	for {
		attemptCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := f(attemptCtx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// resolveAddr splits host:port, defaulting the host to 127.0.0.1, picking a
// free port for port 0 and otherwise checking that the port can be bound;
// either way the port is reserved (freeport) until its service binds it.
func resolveAddr(addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	if host == "" || host == "localhost" {
		host = localIP
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", 0, fmt.Errorf("invalid port in %q", addr)
	}
	if port == 0 {
		ports, err := freeport.Ports(host, 1)
		if err != nil {
			return "", 0, err
		}
		return host, ports[0], nil
	}
	// Bindable, and kept from the ports picked for the other services.
	if err := freeport.Reserve(net.JoinHostPort(host, portStr)); err != nil {
		return "", 0, err // typically "address already in use"
	}
	return host, port, nil
}

// dialHost turns a wildcard bind address into one clients can dial.
func dialHost(host string) string {
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return localIP
	}
	return host
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
