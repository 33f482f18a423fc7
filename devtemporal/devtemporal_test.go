package devtemporal_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	_ "modernc.org/sqlite" // pure-Go driver the Temporal server already uses

	"github.com/touchpoint/touchpoint/devtemporal"
)

var testLogger = slog.New(slog.NewTextHandler(os.Stderr, nil))

func start(t *testing.T, cfg devtemporal.Config) *devtemporal.Server {
	t.Helper()
	cfg.Logger = testLogger
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	begin := time.Now()
	s, err := devtemporal.Start(ctx, cfg)
	require.NoError(t, err)
	t.Logf("server started in %v at %s (UI %q)", time.Since(begin).Round(time.Millisecond), s.FrontendAddress(), s.UIURL())
	t.Cleanup(func() { assert.NoError(t, s.Stop()) })
	return s
}

func dial(t *testing.T, s *devtemporal.Server, ns string) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  s.FrontendAddress(),
		Namespace: ns,
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func Greet(ctx workflow.Context, name string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, Hello, name).Get(ctx, &out)
	return out, err
}

func Hello(_ context.Context, name string) (string, error) { return "hello " + name, nil }

func Sleeper(ctx workflow.Context) error { return workflow.Sleep(ctx, time.Hour) }

func runWorker(t *testing.T, c client.Client, taskQueue string) worker.Worker {
	t.Helper()
	w := worker.New(c, taskQueue, worker.Options{})
	w.RegisterWorkflow(Greet)
	w.RegisterWorkflow(Sleeper)
	w.RegisterActivity(Hello)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return w
}

func customSearchAttributes(t *testing.T, c client.Client, ns string) map[string]enumspb.IndexedValueType {
	t.Helper()
	resp, err := c.OperatorService().ListSearchAttributes(context.Background(),
		&operatorservice.ListSearchAttributesRequest{Namespace: ns})
	require.NoError(t, err)
	return resp.GetCustomAttributes()
}

func TestInMemoryWorkflowAndSearchAttributes(t *testing.T) {
	t.Parallel()
	s := start(t, devtemporal.Config{
		FrontendAddr: "127.0.0.1:0",
		Namespace:    "default",
		SearchAttributes: map[string]enumspb.IndexedValueType{
			"TouchpointChannel": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
			"TouchpointScore":   enumspb.INDEXED_VALUE_TYPE_INT,
		},
	})
	assert.Empty(t, s.UIURL())
	c := dial(t, s, "default")
	runWorker(t, c, "tq-greet")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "greet-1",
		TaskQueue: "tq-greet",
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword("TouchpointChannel").ValueSet("email"),
		),
	}, Greet, "touchpoint")
	require.NoError(t, err)
	var out string
	require.NoError(t, run.Get(ctx, &out))
	assert.Equal(t, "hello touchpoint", out)
	// The server counts its Actions, what Temporal Cloud would bill.
	assert.Equal(t, int64(1), s.Actions()[devtemporal.Action{Namespace: "default", Type: "grpc_StartWorkflowExecution"}])

	sas := customSearchAttributes(t, c, "default")
	assert.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, sas["TouchpointChannel"])
	assert.Equal(t, enumspb.INDEXED_VALUE_TYPE_INT, sas["TouchpointScore"])
}

func TestUI(t *testing.T) {
	t.Parallel()
	s := start(t, devtemporal.Config{Namespace: "ui-ns", UIAddr: "127.0.0.1:0"})
	require.True(t, strings.HasPrefix(s.UIURL(), "http://127.0.0.1:"), s.UIURL())

	resp, err := http.Get(s.UIURL() + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	assert.Contains(t, strings.ToLower(string(body)), "<html")

	resp, err = http.Get(s.UIURL() + "/api/v1/namespaces")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var list struct {
		Namespaces []struct {
			NamespaceInfo struct{ Name string } `json:"namespaceInfo"`
		} `json:"namespaces"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	var names []string
	for _, ns := range list.Namespaces {
		names = append(names, ns.NamespaceInfo.Name)
	}
	assert.Contains(t, names, "ui-ns")

	resp, err = http.Get(s.UIURL() + "/api/v1/settings")
	require.NoError(t, err)
	defer resp.Body.Close()
	var settings struct{ DefaultNamespace string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&settings))
	assert.Equal(t, "ui-ns", settings.DefaultNamespace)
}

func TestFileDurability(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "temporal.db")
	cfg := devtemporal.Config{
		DBFile:           db,
		Namespace:        "durable",
		SearchAttributes: map[string]enumspb.IndexedValueType{"TouchpointChannel": enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	}

	s1 := start(t, cfg)
	c1 := dial(t, s1, "durable")
	runWorker(t, c1, "tq-sleep")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := c1.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "sleeper-1", TaskQueue: "tq-sleep"}, Sleeper)
	require.NoError(t, err)
	// Wait until the worker has scheduled the 1h timer.
	require.Eventually(t, func() bool { return hasEvent(ctx, c1, run.GetID(), enumspb.EVENT_TYPE_TIMER_STARTED) },
		20*time.Second, 50*time.Millisecond)

	assert.FileExists(t, db+"-wal")

	c1.Close()
	require.NoError(t, s1.Stop())
	require.NoError(t, s1.Stop(), "double Stop")

	// Look at the file through a separate connection: WAL mode is recorded in
	// the database header, and the workflow row must be on disk. (The server's
	// SQLite plugin keeps its connection in a process-wide pool, so the restart
	// below reuses it; this check is what proves the data is in the file.)
	conn, err := sql.Open("sqlite", "file:"+db)
	require.NoError(t, err)
	var mode string
	require.NoError(t, conn.QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
	var status int
	require.NoError(t, conn.QueryRow("SELECT status FROM current_executions WHERE workflow_id = ?", "sleeper-1").Scan(&status))
	assert.Equal(t, int(enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING), status)
	require.NoError(t, conn.Close())

	// Restart on the same file with new ports and one more search attribute.
	cfg.SearchAttributes = map[string]enumspb.IndexedValueType{
		"TouchpointChannel": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		"TouchpointScore":   enumspb.INDEXED_VALUE_TYPE_INT,
	}
	s2 := start(t, cfg)
	assert.NotEqual(t, s1.FrontendAddress(), s2.FrontendAddress())
	c2 := dial(t, s2, "durable")
	desc, err := c2.DescribeWorkflowExecution(ctx, "sleeper-1", "")
	require.NoError(t, err)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.GetWorkflowExecutionInfo().GetStatus())
	assert.True(t, hasEvent(ctx, c2, "sleeper-1", enumspb.EVENT_TYPE_TIMER_STARTED))
	assert.False(t, hasEvent(ctx, c2, "sleeper-1", enumspb.EVENT_TYPE_TIMER_FIRED))

	sas := customSearchAttributes(t, c2, "durable")
	assert.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, sas["TouchpointChannel"])
	assert.Equal(t, enumspb.INDEXED_VALUE_TYPE_INT, sas["TouchpointScore"])
}

func hasEvent(ctx context.Context, c client.Client, workflowID string, typ enumspb.EventType) bool {
	it := c.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return false
		}
		if ev.GetEventType() == typ {
			return true
		}
	}
	return false
}

func TestTwoServersAreIsolated(t *testing.T) {
	t.Parallel()
	// Start both at once: port picking and DB naming must not collide.
	servers := make([]*devtemporal.Server, 2)
	errs := make([]error, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := range servers {
		wg.Go(func() { servers[i], errs[i] = devtemporal.Start(ctx, devtemporal.Config{Logger: testLogger}) })
	}
	wg.Wait()
	for i, s := range servers {
		require.NoError(t, errs[i])
		t.Cleanup(func() { assert.NoError(t, s.Stop()) })
	}
	require.NotEqual(t, servers[0].FrontendAddress(), servers[1].FrontendAddress())

	a, b := dial(t, servers[0], "default"), dial(t, servers[1], "default")
	opts := client.StartWorkflowOptions{ID: "same-id", TaskQueue: "nobody-polls"}
	_, err := a.ExecuteWorkflow(ctx, opts, Sleeper)
	require.NoError(t, err)

	_, err = b.DescribeWorkflowExecution(ctx, "same-id", "")
	var notFound *serviceerror.NotFound
	require.ErrorAs(t, err, &notFound, "server B must not see server A's workflow")
	_, err = b.ExecuteWorkflow(ctx, opts, Sleeper)
	require.NoError(t, err, "same workflow ID must be free on server B")
}

func TestBusyPortIsAnError(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Without the up-front check these would crash the process (Temporal's
	// logger.Fatal, ui-server's os.Exit) instead of returning an error.
	_, err = devtemporal.Start(ctx, devtemporal.Config{Logger: testLogger, FrontendAddr: l.Addr().String()})
	require.ErrorContains(t, err, "address already in use")
	_, err = devtemporal.Start(ctx, devtemporal.Config{Logger: testLogger, UIAddr: l.Addr().String()})
	require.ErrorContains(t, err, "address already in use")
}
