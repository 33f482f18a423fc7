package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/syncbuf"
)

// child is a touchpoint process that bench started and stops: `dev`, or
// an `api` beside it.
type child struct {
	name      string
	cmd       *exec.Cmd
	stdin     io.Closer       // kept open until the child has exited
	out, logs *syncbuf.Buffer // its stdout and the end of its stderr
	done      chan struct{}
}

// startChild runs `exe command` with vars in place of every Touchpoint
// variable of ours.
func startChild(exe, command string, vars map[string]string) (*child, error) {
	c := &child{name: "touchpoint " + command, cmd: exec.Command(exe, command),
		out: &syncbuf.Buffer{Max: 64 << 10}, logs: &syncbuf.Buffer{Max: 64 << 10}, done: make(chan struct{})}
	c.cmd.SysProcAttr = childProcAttr()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(config.Variables, k) {
			c.cmd.Env = append(c.cmd.Env, kv)
		}
	}
	for k, v := range vars {
		if v != "" {
			c.cmd.Env = append(c.cmd.Env, k+"="+v)
		}
	}
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.logs
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", c.name, err)
	}
	go func() {
		c.cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// peakRSSMB is the child's peak resident set (VmHWM), nil where /proc
// cannot tell.
func (c *child) peakRSSMB() *float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return nil
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				return nil
			}
			mb := round(kb/1024, 1)
			return &mb
		}
	}
	return nil
}

// resetPeakRSS starts the child's peak resident set (VmHWM) afresh, so
// that peakRSSMB tells the peak of what follows; where /proc cannot, the
// peak stays the child's lifetime peak.
func (c *child) resetPeakRSS() {
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", c.cmd.Process.Pid), []byte("5"), 0) // best effort
}

// terminate ends the child with SIGTERM (SIGKILL after 30 s).
func (c *child) terminate() error {
	defer c.stdin.Close()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-c.done:
		if !c.cmd.ProcessState.Success() {
			return fmt.Errorf("%s stopped with %v; its output ends:\n%s", c.name, c.cmd.ProcessState, c.logs)
		}
		return nil
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s did not stop within 30 s of SIGTERM; killed it", c.name)
	}
}
