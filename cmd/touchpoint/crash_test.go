package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/internal/syncbuf"
	"github.com/touchpoint/touchpoint/internal/testbin"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/workflows"
)

// crashVars make a send attempt on a dead worker time out, and so be
// retried, within seconds instead of the default two minutes.
var crashVars = map[string]string{"TOUCHPOINT_SEND_TIMEOUT": "3s"}

// A worker killed (SIGKILL) after the SMTP server took the invite but
// before the worker heard its 250 leaves the invite marked sending. The
// next attempt must not send again (at most once per attempt window): the invite fails as delivery_uncertain, the run is Failed, and
// only an explicit retry by ops sends the second mail.
func TestCrashBetweenSendAndRecord(t *testing.T) {
	t.Parallel()
	s := newStack(t, crashVars)
	c := s.client()
	s.eventType(c, "checkout")
	s.stop("worker") // from here on only worker processes poll the task queue
	w := s.startProcess("worker")
	var once sync.Once
	s.smtp.OnMessage(func(smtptest.Message) { once.Do(w.kill) })

	ref := s.accept(c, s.event("checkout", "ann@example.com"))
	w.waitExited()
	s.smtp.OnMessage(nil)
	require.Len(t, s.smtp.Messages(), 1, "the mail was delivered before the kill")
	st, err := s.direct.Invites.LoadInviteState(context.Background(), ref)
	require.NoError(t, err)
	require.Equal(t, invite.Sending, st.Status, "the worker died before it could record the send")
	require.Equal(t, 1, st.Attempts)

	s.startWorker()
	s.waitStatus(c, "failed", ref)
	assert.Equal(t, "Failed", s.waitClosed(ref), "a failed invite fails the run")
	err = s.temporal.GetWorkflow(context.Background(), workflows.WorkflowID(ref), "").Get(context.Background(), nil)
	assert.ErrorContains(t, err, "invite failed: delivery_uncertain")
	_, ev := c.do(http.MethodGet, "/events/"+ref, nil)
	inv := inviteOf(ev)
	assert.Equal(t, string(invite.DeliveryUncertain), inv["reason"])
	assert.Contains(t, inv["lastError"], "interrupted after it began; the invite may have been delivered")
	assert.EqualValues(t, 1, inv["attempts"], "the second attempt did not send")
	assert.Equal(t, map[string]int{ref: 1}, s.mailsByEvent(), "exactly one mail")

	// Sending it again is an explicit decision of ops.
	status, res := c.do(http.MethodPost, "/events/"+ref+"/retry", nil)
	require.Equal(t, http.StatusAccepted, status, "%v", res)
	s.waitStatus(c, "sent", ref)
	assert.Equal(t, "Completed", s.waitClosed(ref), "the retry run")
	assert.Equal(t, map[string]int{ref: 2}, s.mailsByEvent(), "the retry sent the one more mail")
}

// A worker killed while a send waits out its back-off (the SMTP server is
// down; no attempt is under way) leaves the invite scheduled: after a
// restart it is sent, exactly once.
func TestCrashBeforeSend(t *testing.T) {
	t.Parallel()
	vars := map[string]string{
		// Back-offs long enough that no attempt can start between seeing the
		// first one's failure recorded and the kill.
		"TOUCHPOINT_SEND_RETRY_INITIAL": "2s",
		"TOUCHPOINT_SEND_RETRY_MAX":     "2s",
	}
	for k, v := range crashVars {
		vars[k] = v
	}
	s := newStack(t, vars)
	c := s.client()
	s.eventType(c, "checkout")
	s.stop("worker")
	w := s.startProcess("worker")

	s.smtp.Stop()
	ref := s.accept(c, s.event("checkout", "ann@example.com"))
	require.EventuallyWithT(t, func(col *assert.CollectT) {
		st, err := s.direct.Invites.LoadInviteState(context.Background(), ref)
		if assert.NoError(col, err) {
			assert.Equal(col, invite.Scheduled, st.Status)
			assert.Equal(col, 1, st.Attempts)
			assert.NotEmpty(col, st.LastError, "the first attempt has failed and recorded so")
		}
	}, time.Minute, 10*time.Millisecond)
	w.kill()
	st, err := s.direct.Invites.LoadInviteState(context.Background(), ref)
	require.NoError(t, err)
	require.Equal(t, invite.Scheduled, st.Status, "killed between attempts, not in one")

	require.NoError(t, s.smtp.Restart())
	s.startWorker()
	s.waitStatus(c, "sent", ref)
	assert.Equal(t, "Completed", s.waitClosed(ref))
	assert.Equal(t, map[string]int{ref: 1}, s.mailsByEvent(), "exactly one mail")
	_, ev := c.do(http.MethodGet, "/events/"+ref, nil)
	assert.EqualValues(t, 2, inviteOf(ev)["attempts"])
}

// process is a touchpoint command running as a child process of the test
// binary (see TestMain), so a test can kill it with SIGKILL.
type process struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	out    *syncbuf.Buffer // everything it printed
	stderr *syncbuf.Buffer // its logs alone
	done   chan struct{}   // closed when it has exited
}

// startProcess runs `touchpoint <args>` with the stack's configuration
// until it exits, is killed, or the test ends (it is killed then).
func (s *stack) startProcess(args ...string) *process {
	s.t.Helper()
	return startChild(s.t, s.processEnv(), args...)
}

// startChild runs the touchpoint binary (internal/testbin: the one `make
// test` built, with `dev`) as `touchpoint args…` in env; the process is
// killed when the test ends, and by the kernel if the test process dies.
func startChild(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	p := &process{t: t, name: strings.Join(args, " "), out: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(testbin.Touchpoint(t), args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.out, io.MultiWriter(p.out, p.stderr)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, p.cmd.Start())
	go func() {
		err := p.cmd.Wait() // "signal: killed" after kill
		t.Logf("%s (pid %d) exited: %v", p.name, p.cmd.Process.Pid, err)
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s output:\n%s", p.name, p.out)
		}
	})
	return p
}

// kill sends SIGKILL — no shutdown, no last words — and waits until the
// process is gone. It is safe to call more than once.
func (p *process) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	if err := p.cmd.Process.Kill(); err != nil {
		p.t.Logf("kill %s: %v", p.name, err)
	}
	p.waitExited()
}

// waitExited waits until the process has exited.
func (p *process) waitExited() {
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		p.t.Errorf("%s did not exit within a minute", p.name)
	}
}

// processEnv is the environment of a child process with the stack's
// configuration.
func (s *stack) processEnv() []string {
	c := s.cfg
	return childEnv(map[string]string{
		"DATABASE_URL":                  c.DatabaseURL,
		"TEMPORAL_ADDRESS":              c.TemporalAddress,
		"TEMPORAL_NAMESPACE":            c.TemporalNamespace,
		"TOUCHPOINT_BASE_URL":           c.BaseURL,
		"TOUCHPOINT_AUTH_URL":           c.AuthURL,
		"TOUCHPOINT_SMTP_URL":           c.SMTPURL,
		"TOUCHPOINT_MAIL_FROM":          c.MailFrom,
		"TOUCHPOINT_FEEDBACK_URL":       c.FeedbackURL,
		"TOUCHPOINT_SECRET_KEY":         c.SecretKey,
		"TOUCHPOINT_SEND_TIMEOUT":       c.SendTimeout.String(),
		"TOUCHPOINT_SEND_RETRY_INITIAL": c.SendRetryInitial.String(),
		"TOUCHPOINT_SEND_RETRY_MAX":     c.SendRetryMax.String(),
		"TOUCHPOINT_SEND_GIVE_UP_AFTER": c.SendGiveUpAfter.String(),
	})
}

// childEnv is the environment of a child process: the test's own minus
// every Touchpoint variable, plus vars.
func childEnv(vars map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(config.Variables, k) {
			env = append(env, kv)
		}
	}
	// The suite's connection budget (internal/testdb), unless the test
	// says otherwise.
	if _, ok := vars["TOUCHPOINT_DB_MAX_CONNS"]; !ok {
		env = append(env, "TOUCHPOINT_DB_MAX_CONNS="+strconv.Itoa(testdb.ProcessMaxConns))
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}
