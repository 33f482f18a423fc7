package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

// TestWorkerVersionsCLI: a versioned `touchpoint worker` (the real
// binary) joins the worker deployment with its build, and as the
// deployment's first build makes itself current; `touchpoint worker
// versions` shows it, and `set-current` refuses a build no worker runs.
func TestWorkerVersionsCLI(t *testing.T) {
	t.Parallel()
	temporal := testtemporal.Start(t, testtemporal.Options{SearchAttributes: workflows.SearchAttributes(), LogLevel: "error"})
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TEMPORAL_ADDRESS": temporal.Address(),
		"TOUCHPOINT_SECRET_KEY": adminSecretKey, "TOUCHPOINT_SMTP_URL": smtptest.Start(t, smtptest.Options{}).URL(),
		"TOUCHPOINT_WORKER_ADDR": freeAddr(t), "TOUCHPOINT_WORKER_VERSIONING": "true"}
	_, err := runCLI(t, vars, "migrate", "--schema-only")
	require.NoError(t, err)

	_, err = runCLI(t, vars, "worker", "versions")
	require.ErrorIs(t, err, worker.ErrNoDeployment)
	assert.ErrorContains(t, err, "TOUCHPOINT_WORKER_VERSIONING=true", "says how to get one")

	startChild(t, childEnv(vars), "worker")
	var d worker.Deployment
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		out, err := runCLI(t, vars, "worker", "versions", "--json")
		if assert.NoError(c, err) && assert.NoError(c, json.Unmarshal([]byte(out), &d)) {
			assert.NotEmpty(c, d.Current, "the first build makes itself current")
		}
	}, time.Minute, 100*time.Millisecond)
	require.Len(t, d.Versions, 1)
	assert.Equal(t, worker.Version{BuildID: d.Current, Created: d.Versions[0].Created, Status: worker.VersionCurrent}, d.Versions[0])

	out, err := runCLI(t, vars, "worker", "versions")
	require.NoError(t, err)
	assert.Contains(t, out, "current  "+d.Current+"\n")
	assert.Regexp(t, `(?m)^`+d.Current+`\s+current\s+\d{4}-`, out)

	_, err = runCLI(t, vars, "worker", "versions", "set-current", "no-such-build")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no worker of build "no-such-build" has polled`)
	out, err = runCLI(t, vars, "worker", "versions", "set-current", d.Current)
	require.NoError(t, err)
	assert.Contains(t, out, "current version of touchpoint: "+d.Current+" → "+d.Current)

	_, err = runCLI(t, vars, "worker", "versions", "promote")
	assert.ErrorContains(t, err, "usage: touchpoint worker versions")
}
