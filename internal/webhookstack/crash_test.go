package webhookstack_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/internal/tcpproxy"
	"github.com/touchpoint/touchpoint/internal/testbin"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/webhook"
	"github.com/touchpoint/touchpoint/workflows"
)

// TestWorkerCrashBetweenChangeAndDelivery: a state change commits with
// its delivery, and the `touchpoint worker` process that would start the
// delivery's workflow dies (SIGKILL) before it could. A worker started
// afterwards delivers it: a change is never left unreported.
//
// Temporal is kept out of the first worker's reach (a cut TCP proxy), so
// the test knows its starter has seen the delivery, tried, and not started
// it when the kill comes.
func TestWorkerCrashBetweenChangeAndDelivery(t *testing.T) {
	t.Parallel()
	bin := testbin.Touchpoint(t)
	ctx := context.Background()
	db := testdb.New(t)
	st := storeset.New(db, "P1D")
	ts := testtemporal.Start(t, testtemporal.Options{SearchAttributes: workflows.SearchAttributes()})
	proxy := tcpproxy.Start(t, ts.Address())
	proxy.Cut()
	smtp := smtptest.Start(t, smtptest.Options{})

	// An account with a waiting invite and an endpoint that hears of
	// cancels, its secret sealed as the API seals it.
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{Delay: "P1D"})
	ev := a.Event(t, eventfixture.Event{Status: invite.Scheduled, CustomerReference: "C-900"})
	rc := newReceiver(t)
	secret, err := webhook.NewSecret()
	require.NoError(t, err)
	box, err := webhook.NewSecretBox(secretkey.Derive(secretKey, secretkey.WebhookSecret))
	require.NoError(t, err)
	hookID := store.NewID("whk")
	sealed, err := box.Seal(hookID, secret)
	require.NoError(t, err)
	_, err = st.Webhooks.CreateWebhookEndpoint(ctx, webhookdb.WebhookEndpoint{ID: hookID, AccountID: a.AccountID, URL: rc.URL,
		Events: []string{webhook.InviteCancelled}, Secret: sealed})
	require.NoError(t, err)
	rc.trust(t, secret)

	env := []string{
		"DATABASE_URL=" + testdb.URL(t, db),
		"TEMPORAL_ADDRESS=" + proxy.Addr(),
		"TOUCHPOINT_SMTP_URL=" + smtp.URL(),
		"TOUCHPOINT_SECRET_KEY=" + secretKey,
		"TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE=true",
		"TOUCHPOINT_LOG_LEVEL=warn",
	}
	first := startWorker(t, bin, env, "first")

	// The change: the API's cancel, which writes invite.cancelled's
	// delivery in its transaction.
	_, err = st.Invites.CancelInvite(ctx, a.AccountID, ev)
	require.NoError(t, err)
	var msgID string
	require.NoError(t, db.Get(&msgID, `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1`, hookID))

	// The worker's starter finds it and cannot start its workflow.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		var r struct {
			Attempts int  `db:"start_attempts"`
			Started  bool `db:"started"`
		}
		if assert.NoError(c, db.Get(&r, `SELECT start_attempts, started_at IS NOT NULL AS started FROM webhook_deliveries WHERE id = $1`, msgID)) {
			assert.GreaterOrEqual(c, r.Attempts, 1, "the starter has tried")
			assert.False(c, r.Started)
		}
	}, time.Minute, 50*time.Millisecond)
	first.kill(t)
	assert.Empty(t, rc.requests())

	// Temporal is reachable again; a new worker delivers the change.
	require.NoError(t, proxy.Restore())
	startWorker(t, bin, env, "second")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		reqs := rc.requests()
		if assert.Len(c, reqs, 1) {
			assert.Equal(c, msgID, reqs[0].ID)
			assert.Equal(c, webhook.InviteCancelled, reqs[0].Type)
			assert.NoError(c, reqs[0].VerifyErr)
		}
		var status string
		assert.NoError(c, db.Get(&status, `SELECT status FROM webhook_deliveries WHERE id = $1`, msgID))
		assert.Equal(c, webhookdb.DeliverySucceeded, status)
	}, time.Minute, 50*time.Millisecond)
	assert.Equal(t, ev, rc.requests()[0].Data["eventId"])
	assert.Equal(t, "C-900", rc.requests()[0].Data["customerReference"])
}

// workerProcess is a `touchpoint worker` child process.
type workerProcess struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// startWorker runs `touchpoint worker` with env until it is killed or the
// test ends; its log is shown when the test fails.
func startWorker(t *testing.T, bin string, env []string, name string) *workerProcess {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, "worker")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	require.NoError(t, cmd.Start())
	p := &workerProcess{cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		logFile.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.kill(t)
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("%s worker's log:\n%s", name, b)
			}
		}
	})
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *workerProcess) kill(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		return
	default:
	}
	require.NoError(t, p.cmd.Process.Kill())
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not die")
	}
}
