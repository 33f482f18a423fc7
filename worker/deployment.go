package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/workflows"
)

// Deployment is the state of the Worker Deployment workflows.DeploymentName:
// which build new work goes to, and each build Temporal knows of.
type Deployment struct {
	// Current is the Build ID that new workflows, and the next tasks of
	// AutoUpgrade ones, go to; "" while none is (unversioned workers get
	// them).
	Current string `json:"current"`
	// Ramping is a Build ID that gets RampingPercent of that work instead.
	Ramping        string  `json:"ramping,omitempty"`
	RampingPercent float32 `json:"rampingPercent,omitempty"`
	// Versions are the builds, oldest first.
	Versions []Version `json:"versions"`
}

// Version is one build of the deployment.
type Version struct {
	BuildID string    `json:"buildId"`
	Created time.Time `json:"created"`
	// Status is current, ramping, draining (not current, but pinned runs
	// are still open on it: keep its workers), drained (no open run
	// needs it: its workers may stop) or inactive (never current, or not
	// yet checked).
	Status string `json:"status"`
}

// The statuses of a Version.
const (
	VersionCurrent  = "current"
	VersionRamping  = "ramping"
	VersionDraining = "draining"
	VersionDrained  = "drained"
	VersionInactive = "inactive"
)

// ErrNoDeployment is returned while no versioned worker has ever polled:
// Temporal creates the deployment when the first one does.
var ErrNoDeployment = errors.New("no worker of deployment " + workflows.DeploymentName + " has polled yet")

// DescribeDeployment reads the deployment from Temporal.
func DescribeDeployment(ctx context.Context, c client.Client) (Deployment, error) {
	d, _, err := describe(ctx, c)
	return d, err
}

func describe(ctx context.Context, c client.Client) (Deployment, []byte, error) {
	res, err := c.WorkerDeploymentClient().GetHandle(workflows.DeploymentName).Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return Deployment{}, nil, ErrNoDeployment
	}
	if err != nil {
		return Deployment{}, nil, fmt.Errorf("describe worker deployment %s: %w", workflows.DeploymentName, err)
	}
	rc := res.Info.RoutingConfig
	var d Deployment
	if rc.CurrentVersion != nil {
		d.Current = rc.CurrentVersion.BuildID
	}
	if rc.RampingVersion != nil {
		d.Ramping, d.RampingPercent = rc.RampingVersion.BuildID, rc.RampingVersionPercentage
	}
	for _, v := range res.Info.VersionSummaries {
		status := VersionInactive
		switch {
		case v.Version.BuildID == d.Current && d.Current != "":
			status = VersionCurrent
		case v.Version.BuildID == d.Ramping && d.Ramping != "":
			status = VersionRamping
		case v.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusDraining:
			status = VersionDraining
		case v.DrainageStatus == client.WorkerDeploymentVersionDrainageStatusDrained:
			status = VersionDrained
		}
		d.Versions = append(d.Versions, Version{BuildID: v.Version.BuildID, Created: v.CreateTime, Status: status})
	}
	slices.SortStableFunc(d.Versions, func(a, b Version) int { return a.Created.Compare(b.Created) })
	return d, res.ConflictToken, nil
}

// SetCurrent makes buildID the current Version: new workflows and the
// next tasks of AutoUpgrade ones go to its workers, while pinned runs stay
// on the build they began on. Its workers must be polling (Temporal
// refuses a build it has seen no poller of, or one that does not poll
// every task queue the current build did). It returns the build that was
// current before ("" for none).
func SetCurrent(ctx context.Context, c client.Client, buildID string) (previous string, err error) {
	d, token, err := describe(ctx, c)
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(d.Versions, func(v Version) bool { return v.BuildID == buildID }) {
		return d.Current, fmt.Errorf("no worker of build %q has polled deployment %s (builds: %s)", buildID, workflows.DeploymentName, buildIDs(d))
	}
	_, err = c.WorkerDeploymentClient().GetHandle(workflows.DeploymentName).SetCurrentVersion(ctx,
		client.WorkerDeploymentSetCurrentVersionOptions{BuildID: buildID, ConflictToken: token})
	if err != nil {
		return d.Current, fmt.Errorf("set the current version of %s to %s: %w", workflows.DeploymentName, buildID, err)
	}
	return d.Current, nil
}

func buildIDs(d Deployment) string {
	var ids []string
	for _, v := range d.Versions {
		ids = append(ids, v.BuildID)
	}
	if len(ids) == 0 {
		return "none"
	}
	return fmt.Sprint(ids)
}

// JoinDeployment is what a versioned worker of buildID does once it
// polls. The first build of a deployment, which has no current Version
// yet, makes itself current: until then no work would reach it. A later
// build waits to be made current by the operator (SetCurrent, `touchpoint
// worker versions set-current`) and says so. It retries every retry until
// Temporal knows the build, and returns once it has decided or ctx ends.
func JoinDeployment(ctx context.Context, c client.Client, buildID string, retry time.Duration, logger *slog.Logger) {
	logger = logger.With("deployment", workflows.DeploymentName, "build_id", buildID)
	for {
		d, err := DescribeDeployment(ctx, c)
		switch {
		case err != nil:
		case d.Current == buildID:
			logger.Info("this build is the current version of the worker deployment")
			return
		case d.Current != "":
			logger.Warn("this build is not the current version of the worker deployment: it runs the workflows pinned to it, "+
				"and new work only once it is made current (touchpoint worker versions set-current "+buildID+")", "current", d.Current)
			return
		default:
			if _, err = SetCurrent(ctx, c, buildID); err == nil {
				logger.Info("the worker deployment had no current version: this build is now current")
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		logger.Debug("joining the worker deployment", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
	}
}
