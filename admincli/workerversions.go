package admincli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/worker"
	"github.com/touchpoint/touchpoint/workflows"
)

const workerVersionsUsage = "usage: touchpoint worker versions [--json] | touchpoint worker versions set-current BUILD_ID [--json]"

// RunWorkerVersions is `touchpoint worker versions`: the builds of the
// worker deployment, which one is current and which drain; and
// `set-current BUILD_ID`, which makes a build current (a deploy's last
// step, or a rollback to the build before).
func (env *Env) RunWorkerVersions(ctx context.Context, args []string) error {
	fs := env.flags("worker versions")
	asJSON := fs.Bool("json", false, "print the deployment as JSON")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	setCurrent := len(rest) == 2 && rest[0] == "set-current"
	if len(rest) != 0 && !setCurrent {
		return errors.New(workerVersionsUsage)
	}
	cfg, err := config.Load(env.Getenv)
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	tc, err := env.DialTemporal(cfg)
	if err != nil {
		return err
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if setCurrent {
		prev, err := worker.SetCurrent(ctx, tc, rest[1])
		if err != nil {
			return err
		}
		if !*asJSON {
			fmt.Fprintf(env.Stdout, "current version of %s: %s → %s\n", workflows.DeploymentName, orNone(prev), rest[1])
		}
	}
	d, err := worker.DescribeDeployment(ctx, tc)
	if errors.Is(err, worker.ErrNoDeployment) {
		return fmt.Errorf("%w: start `touchpoint worker` with TOUCHPOINT_WORKER_VERSIONING=true", err)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(env.Stdout).Encode(d)
	}
	fmt.Fprintf(env.Stdout, "worker deployment %s (this binary is build %s)\n", workflows.DeploymentName, env.BuildVersion)
	fmt.Fprintf(env.Stdout, "current  %s\n", orNone(d.Current))
	if d.Ramping != "" {
		fmt.Fprintf(env.Stdout, "ramping  %s (%.0f%%)\n", d.Ramping, d.RampingPercent)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nBUILD ID\tSTATUS\tCREATED")
	for _, v := range d.Versions {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.BuildID, v.Status, v.Created.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
