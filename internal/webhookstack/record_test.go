//go:build record

package webhookstack_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/recordhistory"
	"github.com/touchpoint/touchpoint/webhook"
	"github.com/touchpoint/touchpoint/workflows"
)

// webhookTestdata is where the delivery workflow's recorded histories
// live, for its replay test (workflows/webhook_replay_test.go).
const webhookTestdata = "../../workflows/testdata/webhook"

// TestRecordWebhookHistories records real runs of the delivery workflow:
//
//	go test -tags record -count=1 -run TestRecordWebhookHistories ./internal/webhookstack/
//
// A history recorded before is kept unless TOUCHPOINT_RECORD_OVERWRITE=1.
func TestRecordWebhookHistories(t *testing.T) {
	opts := fast
	opts.Workflow.GiveUpAfter = 3 * time.Second
	s := newStack(t, opts)
	require.NoError(t, os.MkdirAll(webhookTestdata, 0o755))

	record := func(name string, answer func(n int, w http.ResponseWriter, r *http.Request), wantStatus string) {
		t.Run(name, func(t *testing.T) {
			rc := newReceiver(t)
			hook, secret := s.webhook(t, rc.URL, webhook.InviteScheduled)
			rc.trust(t, secret)
			rc.respond(answer)
			s.event(t, name+"@example.com", "C-"+name)
			var msgID string
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				ds := s.deliveries(t, hook)
				if assert.Len(c, ds, 1) {
					assert.Equal(c, wantStatus, ds[0]["status"])
					msgID = ds[0]["id"].(string)
				}
			}, time.Minute, 50*time.Millisecond)
			run := s.temporal.GetWorkflow(context.Background(), workflows.WebhookWorkflowID(msgID, 0), "")
			_ = run.Get(context.Background(), nil) // the run has ended; failed ones too
			save(t, s, name, msgID)
		})
	}
	record("delivered_after_retries", func(n int, w http.ResponseWriter, _ *http.Request) {
		if n < 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}, "succeeded")
	record("gone", func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) }, "failed")
	record("given_up", func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, "failed")
}

func save(t *testing.T, s *stack, name, workflowID string) {
	t.Helper()
	path := filepath.Join(webhookTestdata, name+".json")
	if recordhistory.Kept(path) {
		t.Logf("%s: kept the history recorded before", name)
		return
	}
	recordhistory.Save(context.Background(), t, s.temporal, path, workflowID, "")
}
