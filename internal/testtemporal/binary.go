package testtemporal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// helperPackage is the testtemporal-server command.
const helperPackage = "github.com/touchpoint/touchpoint/internal/testtemporal/testtemporal-server"

// helperBinary returns the path of the testtemporal-server binary and a
// function to call once the process has been started. A binary named by
// BinaryEnv is used as it is. Otherwise it is (re)built into the user's
// cache directory, one per checkout of the module, under an exclusive file
// lock held until unlock: parallel test processes then build it once, and
// none replaces it while another is about to exec it. `go build` relinks
// only when a source changed, so an up-to-date binary costs a few seconds
// of hashing.
func helperBinary(ctx context.Context) (path string, unlock func(), err error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", nil, fmt.Errorf("%s: %w", BinaryEnv, err)
		}
		return p, func() {}, nil
	}
	gomod, err := goEnv(ctx, "GOMOD")
	if err != nil {
		return "", nil, err
	}
	if gomod == "" || gomod == os.DevNull {
		return "", nil, fmt.Errorf("building testtemporal-server: not inside the touchpoint module; set %s to a built binary", BinaryEnv)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", nil, fmt.Errorf("building testtemporal-server: %w (or set %s)", err, BinaryEnv)
	}
	sum := sha256.Sum256([]byte(gomod))
	dir := filepath.Join(cache, "touchpoint-testtemporal", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	unlock, err = lockFile(ctx, filepath.Join(dir, "lock"))
	if err != nil {
		return "", nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	path = filepath.Join(dir, "testtemporal-server")
	build := exec.CommandContext(ctx, "go", "build", "-o", path, helperPackage)
	build.Dir = filepath.Dir(gomod)
	if out, err := build.CombinedOutput(); err != nil {
		unlock()
		return "", nil, fmt.Errorf("go build %s: %w\n%s", helperPackage, err, out)
	}
	return path, unlock, nil
}

// goEnv reads one variable of `go env` as seen from the working directory.
func goEnv(ctx context.Context, name string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "env", name)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("building testtemporal-server needs the go command; or set %s", BinaryEnv)
		}
		return "", fmt.Errorf("go env %s: %w: %s", name, err, errOut.String())
	}
	return strings.TrimSpace(out.String()), nil
}
