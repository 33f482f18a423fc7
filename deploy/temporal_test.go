package deploy_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/touchpoint/touchpoint/internal/syncbuf"
	"github.com/touchpoint/touchpoint/internal/testbin"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
)

// temporalServerHelper is the command that runs Temporal in-process as the
// temporalio/server image runs it (its -image mode).
const temporalServerHelper = "github.com/touchpoint/touchpoint/internal/testtemporal/testtemporal-server"

// temporalSQLTool is temporal-sql-tool, the schema tool of
// temporalio/admin-tools, from the same module as the server.
const temporalSQLTool = "go.temporal.io/server/cmd/tools/sql"

// mountedPath maps a path inside a container of service s to the file of
// this repository mounted there, or "" when nothing is mounted there.
func mountedPath(t *testing.T, s service, inContainer string) string {
	t.Helper()
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || !strings.HasPrefix(parts[0], ".") {
			continue // a named volume
		}
		if rest, ok := strings.CutPrefix(inContainer, parts[1]); ok && (rest == "" || strings.HasPrefix(rest, "/")) {
			return filepath.Join(repoRoot, parts[0], rest)
		}
	}
	return ""
}

// freePort is a port nothing listens on at the moment, on every
// interface, below 32768: Temporal keeps its services' ports in a
// smallint column of its membership table.
func freePort(t *testing.T) string {
	t.Helper()
	for range 1000 {
		port := strconv.Itoa(20000 + mrand.IntN(12000))
		ln, err := net.Listen("tcp", ":"+port)
		if err == nil {
			ln.Close()
			return port
		}
	}
	t.Fatal("no free port below 32768")
	return ""
}

// environ turns a service's environment into a process environment,
// with nothing of this process's own but PATH and HOME.
func environ(env map[string]string, path string) []string {
	out := []string{"PATH=" + path, "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// TestComposeTemporalBootsFromItsFiles runs the compose stack's Temporal
// without Docker, from the go.temporal.io/server module this repository
// pins (the version of the images): the temporal-schema job's script with
// temporal-sql-tool, then the server as the temporalio/server image starts
// it — the configuration template embedded in the module, rendered from
// the temporal service's environment, with the files compose mounts into
// it — then the namespace the temporal-namespace job creates, and
// `touchpoint migrate` as the migrate service runs it. Only what a
// container would see differently is changed: PostgreSQL's address and
// credentials and the databases' names (this test's own), the ports
// (free ones), and paths inside the containers (the repository's files
// mounted there, the module's schema directory the admin-tools image
// copies to /etc/temporal/schema).
func TestComposeTemporalBootsFromItsFiles(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := mustLoadCompose(t)

	pg, err := url.Parse(testdb.ServerURL())
	require.NoError(t, err)
	pgPassword, _ := pg.User.Password()
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	names := map[string]string{
		"DBNAME":            "compose_temporal_" + hex.EncodeToString(suffix),
		"VISIBILITY_DBNAME": "compose_temporal_visibility_" + hex.EncodeToString(suffix),
	}
	admin, err := sqlx.Open("postgres", testdb.ServerURL())
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, db := range names {
			_, _ = admin.Exec(`DROP DATABASE IF EXISTS ` + db + ` WITH (FORCE)`)
		}
		admin.Close()
	})

	// The schema job: Temporal's databases and their schema, twice (it
	// runs at every `docker compose up`).
	job := c.Services["temporal-schema"]
	sqlTool := testbin.Build(t, temporalSQLTool, "TOUCHPOINT_TEST_TEMPORAL_SQL_TOOL_BIN")
	toolDir := t.TempDir()
	require.NoError(t, os.Symlink(sqlTool, filepath.Join(toolDir, "temporal-sql-tool")))
	moduleDir, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "go.temporal.io/server").Output()
	require.NoError(t, err)
	schemaDir := filepath.Join(strings.TrimSpace(string(moduleDir)), "schema")
	require.DirExists(t, filepath.Join(schemaDir, "postgresql", "v12"))
	require.Equal(t, []string{"/bin/sh", "-c"}, args(job.Entrypoint))
	script := args(job.Command)
	require.Len(t, script, 1, "one script for sh -c")
	jobEnv := envCopy(job.Environment)
	for k, v := range map[string]string{"SQL_HOST": pg.Hostname(), "SQL_PORT": pg.Port(), "SQL_USER": pg.User.Username(), "SQL_PASSWORD": pgPassword} {
		require.Contains(t, jobEnv, k)
		jobEnv[k] = v
	}
	for k, v := range names {
		require.Contains(t, jobEnv, k, "the schema job creates the databases the server uses")
		jobEnv[k] = v
	}
	for run := 1; run <= 2; run++ {
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", strings.ReplaceAll(script[0], "/etc/temporal/schema/", schemaDir+"/"))
		cmd.Env = environ(jobEnv, toolDir+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "temporal-schema, run %d:\n%s", run, out)
	}

	// The server, with the temporal service's environment.
	svc := c.Services["temporal"]
	env := envCopy(svc.Environment)
	require.NotEmpty(t, env["DYNAMIC_CONFIG_FILE_PATH"], "the image's default dynamic config file does not exist in the image: name one")
	dynamicConfig := mountedPath(t, svc, env["DYNAMIC_CONFIG_FILE_PATH"])
	require.NotEmpty(t, dynamicConfig, "DYNAMIC_CONFIG_FILE_PATH %s is a file compose mounts", env["DYNAMIC_CONFIG_FILE_PATH"])
	require.FileExists(t, dynamicConfig)
	env["DYNAMIC_CONFIG_FILE_PATH"] = dynamicConfig
	for k, v := range map[string]string{"POSTGRES_SEEDS": pg.Hostname(), "DB_PORT": pg.Port(), "POSTGRES_USER": pg.User.Username(), "POSTGRES_PWD": pgPassword} {
		require.Contains(t, env, k)
		env[k] = v
	}
	for k, v := range names {
		env[k] = v
	}
	// The pools compose sizes for a deployment (their sum is checked
	// against postgres' max_connections elsewhere), kept small here: the
	// test suite shares its PostgreSQL server (internal/testdb).
	for _, k := range []string{"SQL_MAX_CONNS", "SQL_MAX_IDLE_CONNS", "SQL_VIS_MAX_CONNS", "SQL_VIS_MAX_IDLE_CONNS"} {
		require.Contains(t, env, k)
		env[k] = "2"
	}
	// The image's entrypoint: bound to every interface, the server
	// announces the container's address to its peers.
	if env["BIND_ON_IP"] == "0.0.0.0" && env["TEMPORAL_BROADCAST_ADDRESS"] == "" {
		env["TEMPORAL_BROADCAST_ADDRESS"] = "127.0.0.1"
	}
	for _, p := range []string{"FRONTEND_GRPC_PORT", "FRONTEND_HTTP_PORT", "FRONTEND_MEMBERSHIP_PORT", "HISTORY_GRPC_PORT",
		"HISTORY_MEMBERSHIP_PORT", "MATCHING_GRPC_PORT", "MATCHING_MEMBERSHIP_PORT", "WORKER_GRPC_PORT", "WORKER_MEMBERSHIP_PORT"} {
		require.NotContains(t, env, p, "compose keeps Temporal's default ports")
		env[p] = freePort(t)
	}
	_, promPort, err := net.SplitHostPort(env["PROMETHEUS_ENDPOINT"])
	require.NoError(t, err, "the server serves metrics for Prometheus")
	env["PROMETHEUS_ENDPOINT"] = "127.0.0.1:" + freePort(t)

	helper := testbin.Build(t, temporalServerHelper, testtemporal.BinaryEnv)
	out, err := exec.CommandContext(ctx, helper, "-validate-dynamic-config", dynamicConfig).CombinedOutput()
	require.NoError(t, err, "the dynamic config holds known keys with valid values:\n%s", out)

	var logs syncbuf.Buffer
	server := exec.Command(helper, "-image")
	server.Env = environ(env, os.Getenv("PATH"))
	server.Stdout, server.Stderr = &logs, &logs
	require.NoError(t, server.Start())
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	t.Cleanup(func() {
		_ = server.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			_ = server.Process.Kill()
			<-exited
		}
	})

	frontend := net.JoinHostPort("127.0.0.1", env["FRONTEND_GRPC_PORT"])
	tc, err := client.NewLazyClient(client.Options{HostPort: frontend, Namespace: "default"})
	require.NoError(t, err)
	defer tc.Close()
	for {
		checkCtx, cancelCheck := context.WithTimeout(ctx, 2*time.Second)
		_, err := tc.CheckHealth(checkCtx, &client.CheckHealthRequest{})
		cancelCheck()
		if err == nil {
			break
		}
		select {
		case exitErr := <-exited:
			exited <- exitErr
			t.Fatalf("Temporal exited at boot (%v):\n%s", exitErr, logs.Tail(4000))
		case <-ctx.Done():
			t.Fatalf("Temporal did not answer at %s: %v\n%s", frontend, err, logs.Tail(4000))
		case <-time.After(500 * time.Millisecond):
		}
	}

	// The namespace, as the temporal-namespace job creates it.
	nsJob := c.Services["temporal-namespace"]
	require.Contains(t, strings.Join(args(nsJob.Command), " "), "--retention 30d")
	_, err = tc.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: nsJob.Environment["TEMPORAL_NAMESPACE"], WorkflowExecutionRetentionPeriod: durationpb.New(30 * 24 * time.Hour)})
	require.NoError(t, err)

	// `touchpoint migrate` with the migrate service's environment:
	// PostgreSQL schema, search attributes, the reconciler's schedule.
	mig := c.Services["migrate"]
	migEnv := envCopy(mig.Environment)
	migEnv["DATABASE_URL"] = testdb.NewURL(t)
	migEnv["TEMPORAL_ADDRESS"] = frontend
	// A namespace just created reaches the frontend's cache within
	// seconds; migrate waits for it itself (--temporal-wait).
	cmd := exec.CommandContext(ctx, testbin.Touchpoint(t), args(mig.Command)...)
	cmd.Env = environ(migEnv, os.Getenv("PATH"))
	migOut, err := cmd.CombinedOutput()
	require.NoError(t, err, "touchpoint migrate:\n%s", migOut)
	assert.Contains(t, string(migOut), "registered search attribute TouchpointInviteStatus")

	// Temporal's own metrics, where deploy/prometheus.yml scrapes them.
	assert.Equal(t, "8000", promPort)
	resp, err := http.Get("http://" + env["PROMETHEUS_ENDPOINT"] + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), "# TYPE")

	require.NoError(t, server.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		exited <- err
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			t.Errorf("Temporal stopped with %v:\n%s", err, logs.Tail(20))
		}
	case <-time.After(time.Minute):
		t.Errorf("Temporal did not stop within a minute of SIGTERM")
	}
}

func envCopy(e envMap) map[string]string {
	out := make(map[string]string, len(e))
	for k, v := range e {
		out[k] = v
	}
	return out
}
