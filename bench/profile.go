package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sync/errgroup"
)

// profileSeconds is how long bench profiles dev once the timed accepts
// begin: a profile lasts whole seconds, so a run that profiles should
// post enough events (5,000 or more on two cores) that the accepts
// outlast it.
const profileSeconds = 1

// profileDev starts taking dev's CPU, block and mutex profiles of the next
// profileSeconds from its /debug/pprof/ (TOUCHPOINT_PPROF) and writes them
// to dir as dev-cpu.pprof, dev-block.pprof and dev-mutex.pprof; Wait on
// the group returns once they are written.
func profileDev(ctx context.Context, dev *devChild, dir string) *errgroup.Group {
	var g errgroup.Group
	for file, path := range map[string]string{"dev-cpu.pprof": "profile", "dev-block.pprof": "block", "dev-mutex.pprof": "mutex"} {
		g.Go(func() error {
			body, err := dev.fromMetricsAddr(ctx, fmt.Sprintf("/debug/pprof/%s?seconds=%d", path, profileSeconds))
			if err == nil {
				err = writeFile(filepath.Join(dir, file), body)
			}
			if err != nil {
				return fmt.Errorf("bench: profile %s: %w", path, err)
			}
			return nil
		})
	}
	return &g
}

// writeFile copies body, which it closes, to a new file.
func writeFile(file string, body io.ReadCloser) error {
	defer body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, body)
	return errors.Join(err, f.Close())
}
