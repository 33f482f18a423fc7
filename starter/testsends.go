package starter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/workflows"
)

// TestSendStarter starts one workflow per test send of a template, from
// the rows POST /templates/test-send writes. It runs in `touchpoint
// worker` beside the invite worker, safe with any number of replicas in
// the same way as WebhookStarter: rows are claimed with FOR UPDATE SKIP
// LOCKED, and a start Temporal rejects as a duplicate of the workflow ID
// (the test send's ID) counts as done. It polls every Sweep (default
// 1 s), so a test leaves about a second after it was asked for.
type TestSendStarter struct {
	Store    *store.Store
	Temporal client.Client
	Logger   *slog.Logger // nil: discard
	Tuning
}

// Run starts test send workflows until ctx is cancelled.
func (s *TestSendStarter) Run(ctx context.Context) error {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	s.defaults(time.Second)
	p := pump[store.TestSendStart]{what: "test send", logger: s.Logger, tuning: &s.Tuning, claim: s.claim, start: s.start}
	return p.run(ctx, nil)
}

func (s *TestSendStarter) claim(ctx context.Context, limit int) (claimed[store.TestSendStart], error) {
	b, err := s.Store.ClaimTestSendStarts(ctx, limit)
	if err != nil {
		return claimed[store.TestSendStart]{}, err
	}
	finish := func(ctx context.Context, ok []store.TestSendStart, failed []failedStart[store.TestSendStart]) error {
		done := make([]string, len(ok))
		for i, t := range ok {
			done[i] = t.ID
		}
		retries := make([]store.StartRetry, len(failed))
		for i, f := range failed {
			retries[i] = store.StartRetry{ID: f.item.ID, After: s.backoff(f.item.StartAttempts), Error: f.err.Error()}
		}
		return b.Finish(ctx, done, retries)
	}
	return claimed[store.TestSendStart]{items: b.Starts, finish: finish, release: b.Release}, nil
}

func (s *TestSendStarter) start(ctx context.Context, t store.TestSendStart) error {
	ctx, cancel := context.WithTimeout(ctx, s.StartTimeout)
	defer cancel()
	_, err := s.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                                       workflows.TestSendWorkflowID(t.ID),
		TaskQueue:                                workflows.TaskQueue,
		WorkflowIDReusePolicy:                    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            fmt.Sprintf("Test of the %s template of account %s", t.Kind, t.AccountID),
	}, workflows.TestSendWorkflowType, workflows.TestSendInput{TestSendID: t.ID, AccountID: t.AccountID})
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &already) {
		return fmt.Errorf("start test send workflow %s: %w", t.ID, err)
	}
	return nil
}
