package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/temporalclient"
)

// devChild is a `touchpoint dev` that bench started and stops.
type devChild struct {
	cmd            *exec.Cmd
	stdin          io.Closer   // kept open until the child has exited
	out, logs      *tailBuffer // its stdout (the banner) and the end of its stderr
	done           chan struct{}
	dataDir        string
	server, dbName string // the temporary database and its server's URL
	target         Target
}

// devBanner is the line of dev's banner with the seeded credentials.
var devBanner = regexp.MustCompile(`export CLIENT_ID=(\S+) CLIENT_SECRET=(\S+) CHANNEL_ID=(\S+)`)

// startDevChild starts `exe dev` with a fresh database on the server of
// serverURL (default: the configuration's default) and waits for its
// banner. logLevel is the child's TOUCHPOINT_LOG_LEVEL.
func startDevChild(ctx context.Context, exe, serverURL, logLevel string) (*devChild, error) {
	if serverURL == "" {
		serverURL = config.Defaults().DatabaseURL
	}
	d := &devChild{out: &tailBuffer{max: 64 << 10}, logs: &tailBuffer{max: 64 << 10}, done: make(chan struct{}), server: serverURL,
		dbName: "touchpoint_bench_" + benchRunID()}
	vars, err := d.prepare(ctx, logLevel)
	if err == nil {
		err = d.start(exe, vars)
	}
	if err == nil {
		err = d.awaitBanner(ctx)
	}
	if err != nil {
		return nil, errors.Join(err, d.stop())
	}
	return d, nil
}

// prepare makes the data dir and the database and returns the child's
// configuration, on free ports.
func (d *devChild) prepare(ctx context.Context, logLevel string) (map[string]string, error) {
	dir, err := os.MkdirTemp("", "touchpoint-bench-")
	if err != nil {
		return nil, err
	}
	d.dataDir = dir
	dbURL, err := store.DatabaseURL(d.server, d.dbName)
	if err != nil {
		return nil, err
	}
	if err := store.EnsureDatabase(ctx, dbURL); err != nil {
		return nil, err
	}
	addrs, err := benchFreeAddrs(5)
	if err != nil {
		return nil, err
	}
	d.target = Target{BaseURL: "http://" + addrs[0], AuthURL: "http://" + addrs[1],
		DatabaseURL: dbURL, Temporal: temporalclient.Plain(addrs[2], "default")}
	return map[string]string{
		"DATABASE_URL":                    dbURL,
		"TEMPORAL_ADDRESS":                addrs[2],
		"TOUCHPOINT_API_ADDR":             addrs[0],
		"TOUCHPOINT_AUTH_ADDR":            addrs[1],
		"TOUCHPOINT_BASE_URL":             d.target.BaseURL,
		"TOUCHPOINT_AUTH_URL":             d.target.AuthURL,
		"TOUCHPOINT_TEMPORAL_UI_ADDR":     addrs[3],
		"TOUCHPOINT_METRICS_ADDR":         addrs[4],
		"TOUCHPOINT_DATA_DIR":             dir,
		"TOUCHPOINT_DEFAULT_INVITE_DELAY": "PT0S",
		"TOUCHPOINT_RATE_LIMIT":           "1000000",
		"TOUCHPOINT_RATE_BURST":           "1000000",
		"TOUCHPOINT_DAILY_SEND_QUOTA":     "0", // a run sends more than a tenant's daily quota
		"TOUCHPOINT_RECIPIENT_DAILY_CAP":  "0",
		"TOUCHPOINT_LOG_LEVEL":            logLevel,
	}, nil
}

// start runs the child, `exe dev`, with vars in place of every
// Touchpoint variable of ours.
func (d *devChild) start(exe string, vars map[string]string) error {
	d.cmd = exec.Command(exe, "dev")
	d.cmd.SysProcAttr = childProcAttr()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !slices.Contains(config.Variables, k) {
			d.cmd.Env = append(d.cmd.Env, kv)
		}
	}
	for k, v := range vars {
		if v != "" {
			d.cmd.Env = append(d.cmd.Env, k+"="+v)
		}
	}
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.logs
	var err error
	if d.stdin, err = d.cmd.StdinPipe(); err != nil {
		return err
	}
	if err := d.cmd.Start(); err != nil {
		return fmt.Errorf("start touchpoint dev: %w", err)
	}
	go func() {
		d.cmd.Wait()
		close(d.done)
	}()
	return nil
}

// awaitBanner waits until dev has printed its credentials.
func (d *devChild) awaitBanner(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(3 * time.Minute)
	for {
		if m := devBanner.FindStringSubmatch(d.out.String()); m != nil {
			d.target.ClientID, d.target.ClientSecret, d.target.ChannelID = m[1], m[2], m[3]
			return nil
		}
		select {
		case <-d.done:
			return fmt.Errorf("touchpoint dev exited (%v) before it was ready; its output ends:\n%s", d.cmd.ProcessState, d.logs)
		case <-deadline:
			return fmt.Errorf("touchpoint dev not ready within 3 minutes; its output ends:\n%s", d.logs)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// peakRSSMB is the child's peak resident set (VmHWM), nil where /proc
// cannot tell.
func (d *devChild) peakRSSMB() *float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
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
func (d *devChild) resetPeakRSS() {
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", d.cmd.Process.Pid), []byte("5"), 0) // best effort
}

// stop ends the child with SIGTERM (SIGKILL after 30 s) and removes its
// data dir and database.
func (d *devChild) stop() error {
	var errs []error
	if d.cmd != nil && d.cmd.Process != nil {
		errs = append(errs, d.terminate())
	}
	if d.dataDir != "" {
		errs = append(errs, os.RemoveAll(d.dataDir))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs = append(errs, store.DropDatabase(ctx, d.server, d.dbName))
	return errors.Join(errs...)
}

func (d *devChild) terminate() error {
	defer d.stdin.Close()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-d.done:
		if !d.cmd.ProcessState.Success() {
			return fmt.Errorf("touchpoint dev stopped with %v; its output ends:\n%s", d.cmd.ProcessState, d.logs)
		}
		return nil
	case <-time.After(30 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
		return errors.New("touchpoint dev did not stop within 30 s of SIGTERM; killed it")
	}
}

// benchFreeAddrs returns n 127.0.0.1 addresses whose ports are free now.
func benchFreeAddrs(n int) ([]string, error) {
	addrs := make([]string, n)
	for i := range addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close() // held until all are chosen, so none repeats
		addrs[i] = ln.Addr().String()
	}
	return addrs, nil
}

// tailBuffer keeps the last max bytes written to it; safe for concurrent
// use.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
