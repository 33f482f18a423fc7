package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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
	base := "http://" + dev.vars["TOUCHPOINT_METRICS_ADDR"] + "/debug/pprof/"
	for file, path := range map[string]string{"dev-cpu.pprof": "profile", "dev-block.pprof": "block", "dev-mutex.pprof": "mutex"} {
		g.Go(func() error {
			url := fmt.Sprintf("%s%s?seconds=%d", base, path, profileSeconds)
			if err := fetchProfile(ctx, url, filepath.Join(dir, file)); err != nil {
				return fmt.Errorf("bench: profile %s: %w", path, err)
			}
			return nil
		})
	}
	return &g
}

func fetchProfile(ctx context.Context, url, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return fmt.Errorf("%s: %s", res.Status, msg)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, res.Body)
	return errors.Join(err, f.Close())
}
