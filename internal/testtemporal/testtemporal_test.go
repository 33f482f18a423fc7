package testtemporal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/types/known/durationpb"
)

// postgresAdminURL is the shared test PostgreSQL server.
const postgresAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

var channelKey = temporal.NewSearchAttributeKeyKeyword("TouchpointChannelId")

func dial(t *testing.T, s *Server, namespace string) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  s.Address(),
		Namespace: namespace,
		Logger:    sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func TestServerServesNamespacesAndSearchAttributes(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{
		Namespace: "touchpoint-test",
		SearchAttributes: map[string]enumspb.IndexedValueType{
			channelKey.GetName(): enumspb.INDEXED_VALUE_TYPE_KEYWORD,
			"TouchpointScore":    enumspb.INDEXED_VALUE_TYPE_INT,
		},
	})
	require.True(t, strings.HasPrefix(s.Address(), "127.0.0.1:"), s.Address())
	assert.Empty(t, s.UIURL())
	c := dial(t, s, "touchpoint-test")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, err := c.CheckHealth(ctx, &client.CheckHealthRequest{})
	require.NoError(t, err)
	desc, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "touchpoint-test"})
	require.NoError(t, err)
	assert.Equal(t, enumspb.NAMESPACE_STATE_REGISTERED, desc.GetNamespaceInfo().GetState())

	sas, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "touchpoint-test"})
	require.NoError(t, err)
	assert.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, sas.GetCustomAttributes()[channelKey.GetName()])
	assert.Equal(t, enumspb.INDEXED_VALUE_TYPE_INT, sas.GetCustomAttributes()["TouchpointScore"])

	// A namespace registered through the API is there too.
	_, err = c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "touchpoint-extra"})
	var notFound *serviceerror.NamespaceNotFound
	require.ErrorAs(t, err, &notFound)
	_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace:                        "touchpoint-extra",
		WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	})
	require.NoError(t, err)
	desc, err = c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "touchpoint-extra"})
	require.NoError(t, err)
	assert.Equal(t, "touchpoint-extra", desc.GetNamespaceInfo().GetName())

	// Stop ends the whole process group and is idempotent.
	pid := s.cmd.Process.Pid
	require.NoError(t, s.Stop())
	require.NoError(t, s.Stop())
	assert.ErrorIs(t, syscall.Kill(-pid, 0), syscall.ESRCH, "the helper's process group is gone")
}

// TestPostgresPersistence: the server keeps its state in a fresh
// PostgreSQL database, with standard visibility answering search
// attribute queries, and the database is dropped when it stops.
func TestPostgresPersistence(t *testing.T) {
	t.Parallel()
	admin, err := sql.Open("postgres", postgresAdminURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })

	s := Start(t, Options{
		PostgresURL:      postgresAdminURL,
		SearchAttributes: map[string]enumspb.IndexedValueType{channelKey.GetName(): enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	})
	require.True(t, strings.HasPrefix(s.Database(), "testtemporal_"), s.Database())
	c := dial(t, s, "default")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	channel := "chl-" + randomHex()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    "evt-" + randomHex(),
		TaskQueue:             "nobody-polls",
		TypedSearchAttributes: temporal.NewSearchAttributes(channelKey.ValueSet(channel)),
	}, "Invite")
	require.NoError(t, err)

	// The workflow is in the server's own database.
	var rows int
	require.NoError(t, queryIn(t, s.Database(), "SELECT count(*) FROM executions_visibility WHERE workflow_id = $1", run.GetID()).Scan(&rows))
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("%s = '%s'", channelKey.GetName(), channel),
		})
		require.NoError(col, err)
		require.Len(col, resp.GetExecutions(), 1)
		assert.Equal(col, run.GetID(), resp.GetExecutions()[0].GetExecution().GetWorkflowId())
		assert.Equal(col, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, resp.GetExecutions()[0].GetStatus())
	}, 30*time.Second, 100*time.Millisecond)

	require.NoError(t, s.Stop())
	var exists bool
	require.NoError(t, admin.QueryRow("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", s.Database()).Scan(&exists))
	assert.False(t, exists, "the database is dropped")
}

// TestPostgresRestartKeepsWorkflows: a server started on a database that
// already holds Temporal's state (a named one, which Stop leaves in place)
// continues with it.
func TestPostgresRestartKeepsWorkflows(t *testing.T) {
	t.Parallel()
	name := "testtemporal_restart_" + randomHex()
	t.Cleanup(func() { assert.NoError(t, dropDatabase(postgresAdminURL, name)) })
	opts := Options{PostgresURL: postgresAdminURL, PostgresDatabase: name, Namespace: "touchpoint-restart"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	first := Start(t, opts)
	run, err := dial(t, first, "touchpoint-restart").ExecuteWorkflow(ctx,
		client.StartWorkflowOptions{ID: "evt-" + randomHex(), TaskQueue: "nobody-polls"}, "Invite")
	require.NoError(t, err)
	var conns int
	require.NoError(t, queryIn(t, "postgres", "SELECT count(*) FROM pg_stat_activity WHERE datname = $1", name).Scan(&conns))
	t.Logf("PostgreSQL connections of one server: %d", conns)
	require.NoError(t, first.Stop())

	second := Start(t, opts)
	assert.Equal(t, name, second.Database())
	desc, err := dial(t, second, "touchpoint-restart").DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.GetWorkflowExecutionInfo().GetStatus())
}

// queryIn runs one query in database name of the test PostgreSQL server.
func queryIn(t *testing.T, name, query string, args ...any) *sql.Row {
	t.Helper()
	db, err := sql.Open("postgres", strings.Replace(postgresAdminURL, "/postgres?", "/"+name+"?", 1))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db.QueryRow(query, args...)
}

// TestStopReportsADeadServer: a server that died during the test (here:
// killed) makes Stop fail, so the test that used it learns why its calls
// failed.
func TestStopReportsADeadServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, err := New(ctx, Options{LogLevel: "error"})
	require.NoError(t, err)
	require.NoError(t, s.cmd.Process.Kill())
	<-s.exited
	err = s.Stop()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited before Stop")
}

// childEnv makes the test binary, run again, act as a test process that
// starts a server, reports the helper's pid and waits to be killed.
const childEnv = "TESTTEMPORAL_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	os.Exit(m.Run())
}

func runChild() int {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, err := New(ctx, Options{LogLevel: "error"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(s.cmd.Process.Pid)
	select {} // until killed
}

// TestHelperDiesWithTestProcess: a test process killed outright (no
// cleanup runs) takes its server with it.
func TestHelperDiesWithTestProcess(t *testing.T) {
	t.Parallel()
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"=1")
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })

	var pid int
	_, err = fmt.Fscanln(out, &pid)
	require.NoError(t, err, "the child reports its helper's pid")
	require.NoError(t, syscall.Kill(pid, 0), "the helper runs")

	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	require.Eventually(t, func() bool {
		// Gone, or a zombie waiting for init to reap it.
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || isZombie(pid)
	}, 30*time.Second, 50*time.Millisecond, "helper %d outlived its test process", pid)
}

func isZombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...; comm may hold spaces, so look after the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && strings.HasPrefix(s[i+1:], " Z")
}

// TestNoServerDependency: neither this package nor temporalclient may
// link the Temporal server, or their tests lose -race and compile for
// minutes.
func TestNoServerDependency(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{
		"github.com/touchpoint/touchpoint/internal/testtemporal",
		"github.com/touchpoint/touchpoint/temporalclient",
	} {
		out, err := exec.Command("go", "list", "-test", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		for dep := range strings.FieldsSeq(string(out)) {
			assert.False(t, strings.HasPrefix(dep, "go.temporal.io/server"), "%s depends on %s", pkg, dep)
		}
	}
}

// TestMetricsServeActions: with Metrics the server serves its `action`
// metric, which counts a workflow start; without, there is no URL.
func TestMetricsServeActions(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Metrics: true})
	require.True(t, strings.HasPrefix(s.MetricsURL(), "http://127.0.0.1:"), s.MetricsURL())
	c := dial(t, s, "default")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "metrics-test", TaskQueue: "nobody"}, "Nothing")
	require.NoError(t, err)
	res, err := http.Get(s.MetricsURL())
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), `action{action_type="grpc_StartWorkflowExecution",namespace="default"} 1`)

	assert.Empty(t, Start(t, Options{}).MetricsURL())
}
