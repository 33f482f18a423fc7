// Package pgcluster starts PostgreSQL servers of a test's own on
// 127.0.0.1 — a primary, and streaming replicas of it made with
// pg_basebackup — from Debian's PostgreSQL binaries, for what the shared
// test server does not allow (replication, stopping a server). Each runs
// in a temporary folder on a free port as the postgres user when the test
// runs as root (PostgreSQL refuses to run as root), and is stopped and
// removed when the test ends. Never imported by production code.
package pgcluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // the driver

	"github.com/touchpoint/touchpoint/internal/freeport"
)

// BinEnv names the folder of the PostgreSQL binaries (initdb, postgres,
// pg_basebackup) when they are not DefaultBin.
const BinEnv = "TOUCHPOINT_PG_BIN"

// DefaultBin is where Debian's postgresql-15 package puts them.
const DefaultBin = "/usr/lib/postgresql/15/bin"

// startTimeout bounds initdb, a base backup and a server's start: the
// machines that run the tests are often loaded.
const startTimeout = 2 * time.Minute

// Bin returns the folder of the PostgreSQL binaries. Without them the
// test is skipped, but under CI=true it fails: CI installs them, and a
// skip there would pass a test that never ran.
func Bin(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv(BinEnv)
	if dir == "" {
		dir = DefaultBin
	}
	for _, name := range []string{"initdb", "postgres", "pg_basebackup"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			msg := fmt.Sprintf("pgcluster: %s is missing (install postgresql-15, or set %s): %v", name, BinEnv, err)
			if os.Getenv("CI") == "true" {
				tb.Fatal(msg + "; CI=true requires it")
			}
			tb.Skip(msg)
		}
	}
	return dir
}

// Server is one PostgreSQL server of the test.
type Server struct {
	// Port is where it listens on 127.0.0.1.
	Port int
	bin  string
	root string // the test's folder: data folders, sockets, logs
	data string // this server's data folder
	log  string // its log file
	run  *runAs

	mu   sync.Mutex
	proc *exec.Cmd
	done chan struct{} // closed when proc has exited
}

// Primary initialises and starts a primary server, with every database
// a test makes on it replicated to its replicas.
func Primary(tb testing.TB) *Server {
	tb.Helper()
	bin := Bin(tb)
	run := lookupRunAs(tb)
	root, err := os.MkdirTemp("", "pgcluster-")
	if err != nil {
		tb.Fatalf("pgcluster: %v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(root) })
	if err := run.own(root); err != nil {
		tb.Fatalf("pgcluster: %v", err)
	}
	s := &Server{bin: bin, root: root, data: filepath.Join(root, "primary"), log: filepath.Join(root, "primary.log"), run: run}
	// trust on 127.0.0.1 only: initdb's pg_hba.conf also admits
	// replication connections from there.
	s.exec(tb, "initdb", "--pgdata", s.data, "--username", "postgres", "--auth", "trust",
		"--encoding", "UTF8", "--locale", "C", "--no-sync")
	s.start(tb)
	return s
}

// Replica makes a streaming replica of s with pg_basebackup -R (which
// writes standby.signal and primary_conninfo) and starts it.
func (s *Server) Replica(tb testing.TB) *Server {
	tb.Helper()
	n := 1
	for {
		if _, err := os.Stat(filepath.Join(s.root, "replica"+strconv.Itoa(n))); errors.Is(err, os.ErrNotExist) {
			break
		}
		n++
	}
	name := "replica" + strconv.Itoa(n)
	r := &Server{bin: s.bin, root: s.root, data: filepath.Join(s.root, name), log: filepath.Join(s.root, name+".log"), run: s.run}
	r.exec(tb, "pg_basebackup", "--host", "127.0.0.1", "--port", strconv.Itoa(s.Port), "--username", "postgres",
		"--pgdata", r.data, "--write-recovery-conf", "--wal-method", "stream", "--checkpoint", "fast", "--no-sync")
	r.start(tb)
	return r
}

// URL is the address of database on s.
func (s *Server) URL(database string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)),
		Path: "/" + database, RawQuery: "sslmode=disable"}
	return u.String()
}

// PID is the process ID of the server's postmaster, 0 while it is
// stopped: its backends are its children.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.Process.Pid
}

// Stop shuts s down (fast shutdown: sessions are ended) and waits for it.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	s.mu.Lock()
	proc, done := s.proc, s.done
	s.proc = nil
	s.mu.Unlock()
	if proc == nil {
		return
	}
	proc.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(startTimeout):
		proc.Process.Kill()
		<-done
		tb.Errorf("pgcluster: %s did not stop; killed it\n%s", s.data, s.logTail())
	}
}

// Start starts s again after Stop, on the same port.
func (s *Server) Start(tb testing.TB) {
	tb.Helper()
	s.start(tb)
}

// start runs the server (on a new free port the first time) and waits
// until it takes connections.
func (s *Server) start(tb testing.TB) {
	tb.Helper()
	for attempt := 0; ; attempt++ {
		first := s.Port == 0
		if first {
			s.Port = freePort(tb)
		}
		err := s.launch(tb)
		if err == nil {
			return
		}
		if first && attempt < 3 && strings.Contains(s.logTail(), "could not bind") {
			s.Port = 0 // taken meanwhile: another port
			continue
		}
		tb.Fatalf("pgcluster: start %s: %v\n%s", s.data, err, s.logTail())
	}
}

func (s *Server) launch(tb testing.TB) error {
	tb.Helper()
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	// Small and fast: a test's data needs no durability (fsync off),
	// and several clusters may run side by side. The WAL is written as
	// in production (full-page writes on), for what is measured of it.
	cmd := s.run.command(filepath.Join(s.bin, "postgres"), "-D", s.data, "-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+s.root,
		"-c", "fsync=off", "-c", "shared_buffers=16MB", "-c", "max_connections=100",
		"-c", "wal_keep_size=64MB")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.proc, s.done = cmd, done
	s.mu.Unlock()
	tb.Cleanup(func() { s.Stop(tb) })

	db, err := sql.Open("postgres", s.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("postgres exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no connection after %s: %v", startTimeout, err)
		}
	}
}

// exec runs one of the binaries to its end, failing the test with its
// output.
func (s *Server) exec(tb testing.TB, name string, args ...string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := s.run.command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.root
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			if cmd.Process != nil {
				cmd.Process.Kill()
			}
		case <-done:
		}
	}()
	out, err := cmd.CombinedOutput()
	close(done)
	if err != nil {
		tb.Fatalf("pgcluster: %s: %v\n%s", name, err, out)
	}
}

// logTail is the end of the server's log, for a failure's message.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// freePort is a free port on 127.0.0.1, kept from other picks until the
// server binds it (freeport; PostgreSQL sets SO_REUSEADDR too).
func freePort(tb testing.TB) int {
	tb.Helper()
	ports, err := freeport.Ports("127.0.0.1", 1)
	if err != nil {
		tb.Fatalf("pgcluster: free port: %v", err)
	}
	return ports[0]
}

// runAs is the user the servers run as: the postgres user when the test
// runs as root, else the test's own.
type runAs struct {
	cred *syscall.Credential // nil: the test's own user
}

func lookupRunAs(tb testing.TB) *runAs {
	tb.Helper()
	if os.Geteuid() != 0 {
		return &runAs{}
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		tb.Fatalf("pgcluster: running as root, and PostgreSQL refuses root: no postgres user to run as: %v", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		tb.Fatalf("pgcluster: the postgres user's ids: %v", err)
	}
	return &runAs{cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
}

// own gives dir to the user the servers run as.
func (r *runAs) own(dir string) error {
	if r.cred == nil {
		return nil
	}
	return os.Chown(dir, int(r.cred.Uid), int(r.cred.Gid))
}

func (r *runAs) command(path string, args ...string) *exec.Cmd {
	cmd := exec.Command(path, args...)
	// The servers' own environment: no PG* variable of the test's leaks in.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C", "TZ=UTC"}
	if r.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
		cmd.Env = append(cmd.Env, "HOME=/tmp")
	}
	return cmd
}

// CaughtUp waits until the replica r has replayed everything its primary
// had written when it was called.
func (r *Server) CaughtUp(tb testing.TB, primary *Server) {
	tb.Helper()
	var lsn string
	queryOne(tb, primary, `SELECT pg_current_wal_lsn()::text`, &lsn)
	r.await(tb, `SELECT pg_last_wal_replay_lsn() >= '`+lsn+`'::pg_lsn`)
}

// PauseReplay stops the replica r from applying the changes it receives
// (they keep arriving): what the primary writes from now on is missing on
// r until ResumeReplay.
func (r *Server) PauseReplay(tb testing.TB) {
	tb.Helper()
	var ignored string
	queryOne(tb, r, `SELECT pg_wal_replay_pause()::text`, &ignored)
	r.await(tb, `SELECT pg_get_wal_replay_pause_state() = 'paused'`)
}

// ResumeReplay lets the replica r apply changes again.
func (r *Server) ResumeReplay(tb testing.TB) {
	tb.Helper()
	var ignored string
	queryOne(tb, r, `SELECT pg_wal_replay_resume()::text`, &ignored)
}

// queryOne reads one value of on's "postgres" database.
func queryOne(tb testing.TB, on *Server, query string, dest any) {
	tb.Helper()
	db, err := sql.Open("postgres", on.URL("postgres"))
	if err != nil {
		tb.Fatalf("pgcluster: %v", err)
	}
	defer db.Close()
	if err := db.QueryRow(query).Scan(dest); err != nil {
		tb.Fatalf("pgcluster: %s: %v", query, err)
	}
}

// await waits until query (one boolean) is true on s.
func (s *Server) await(tb testing.TB, query string) {
	tb.Helper()
	db, err := sql.Open("postgres", s.URL("postgres"))
	if err != nil {
		tb.Fatalf("pgcluster: %v", err)
	}
	defer db.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		var ok bool
		err := db.QueryRow(query).Scan(&ok)
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("pgcluster: %s still not true after %s (%v)", query, startTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
