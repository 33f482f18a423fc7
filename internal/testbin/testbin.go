// Package testbin gives tests the path of a binary built from this
// module, so a test can run the real program as a child process instead
// of linking it (and everything it embeds) into the test binary.
//
// A binary named by an environment variable is used as it is: `make test`
// builds it once for every package. Otherwise the binary is built with
// `go build` into a per-user cache directory. It is rebuilt every time —
// with a warm build cache that takes a moment and is never stale — under a
// file lock, since test packages run in parallel processes that would
// otherwise write the same file at once. Each checkout of the module has
// its own directory, so two checkouts tested side by side never run each
// other's binaries.
package testbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TouchpointEnv names a prebuilt touchpoint binary to use instead of
// building one.
const TouchpointEnv = "TOUCHPOINT_TEST_BIN"

// Touchpoint returns the path of a `touchpoint` binary built from
// ./cmd/touchpoint (the default build, with `touchpoint dev`).
func Touchpoint(tb testing.TB) string {
	tb.Helper()
	return Build(tb, "github.com/touchpoint/touchpoint/cmd/touchpoint", TouchpointEnv)
}

// builds remembers what this test process built already: one build per
// package and process is enough.
var builds sync.Map // import path → *build

type build struct {
	once sync.Once
	path string
	err  error
}

// Build returns the path of the binary of importPath (a main package of
// this module): the file named by the environment variable envVar when it
// is set, else a fresh build in os.UserCacheDir()/touchpoint-test. It
// fails tb when the binary cannot be had.
func Build(tb testing.TB, importPath, envVar string) string {
	tb.Helper()
	if p := os.Getenv(envVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("testbin: $%s: %v", envVar, err)
		}
		return p
	}
	v, _ := builds.LoadOrStore(importPath, &build{})
	b := v.(*build)
	b.once.Do(func() { b.path, b.err = goBuild(importPath) })
	if b.err != nil {
		tb.Fatalf("testbin: %v", b.err)
	}
	return b.path
}

// goBuild builds importPath into the cache directory, holding an
// exclusive lock on a file beside the binary while it builds.
func goBuild(importPath string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "touchpoint-test", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := strings.ReplaceAll(strings.Trim(importPath, "/"), "/", "_")
	out := filepath.Join(dir, name)
	unlock, err := lock(out + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	// A build of minutes (the embedded Temporal server, cold cache) is
	// normal; one that never ends is not.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// Built beside it and renamed into place: another test process may
	// be running the previous binary, whose file must not change under it.
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, importPath)
	if raw, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("go build %s: %v\n%s", importPath, err, raw)
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return out, nil
}

// moduleRoot is the directory of the go.mod above the working directory
// (a test runs in its package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// lock takes an exclusive flock on path, waiting for other processes.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
