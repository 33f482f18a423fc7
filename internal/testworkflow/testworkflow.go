// Package testworkflow is Temporal's test workflow environment as every
// workflow test runs it: in process, without a Temporal server.
package testworkflow

import (
	"io"
	"log/slog"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

// IdleTimeout is how long a test workflow environment (New)
// waits for its next event — an activity's result, a timer — before it
// calls the workflow stuck and panics. The SDK's default, 3 s, is a stall
// a loaded machine reaches: an activity's goroutine can wait that long for
// a core when two cores run a suite under -race beside other builds. A
// workflow that is really stuck still fails, a minute later.
const IdleTimeout = time.Minute

// New is Temporal's test workflow environment, quiet, with IdleTimeout:
// the one every workflow test runs in.
func New() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(IdleTimeout)
	return env
}
