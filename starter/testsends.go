package starter

import (
	"context"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/templatedb"
	"github.com/touchpoint/touchpoint/workflows"
)

// TestSendStarter starts one workflow per test send of a template, from
// the rows POST /templates/test-send writes, as a one-shot starter (the
// workflow ID is the test send's). It runs in `touchpoint worker` beside
// the invite worker, safe with any number of replicas: rows are claimed
// with FOR UPDATE SKIP LOCKED. It polls every Sweep (default 1 s), so a
// test leaves about a second after it was asked for.
type TestSendStarter struct {
	Store interface {
		ClaimTestSendStarts(ctx context.Context, limit int) (*pg.StartBatch[templatedb.TestSendStart], error)
	}
	Temporal client.Client
	Logger   *slog.Logger // nil: discard
	Tuning
}

// Run starts test send workflows until ctx is cancelled.
func (s *TestSendStarter) Run(ctx context.Context) error {
	return runOnce(ctx, &s.Logger, &s.Tuning, oneShot[templatedb.TestSendStart]{
		what:     "test send",
		claim:    s.Store.ClaimTestSendStarts,
		id:       func(t templatedb.TestSendStart) string { return t.ID },
		attempts: func(t templatedb.TestSendStart) int { return t.StartAttempts },
		start:    s.start,
	})
}

func (s *TestSendStarter) start(ctx context.Context, t templatedb.TestSendStart) error {
	err := startOnce(ctx, s.Temporal, s.StartTimeout, client.StartWorkflowOptions{
		ID:            workflows.TestSendWorkflowID(t.ID),
		TaskQueue:     workflows.TaskQueue,
		StaticSummary: fmt.Sprintf("Test of the %s template of account %s", t.Kind, t.AccountID),
	}, workflows.TestSendWorkflowType, workflows.TestSendInput{TestSendID: t.ID, AccountID: t.AccountID})
	if err != nil {
		return fmt.Errorf("start test send workflow %s: %w", t.ID, err)
	}
	return nil
}
