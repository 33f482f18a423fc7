package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/searchattr"
	"github.com/touchpoint/touchpoint/schema"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/partitiondb"
	"github.com/touchpoint/touchpoint/temporalclient"
	"github.com/touchpoint/touchpoint/workflows"
)

func (env *environment) runMigrate(ctx context.Context, args []string) error {
	fs := env.flags("migrate")
	schemaOnly := fs.Bool("schema-only", false, "apply the PostgreSQL schema only; skip the Temporal search attributes and the reconciler's schedule")
	partition := fs.Bool("partition", false, "move the rows of an installation made before the monthly partitions onto them, in batches, "+
		"while the service runs (run it once every process runs this release; stop it any time and run it again to go on)")
	wait := fs.Duration("temporal-wait", 2*time.Minute, "how long to wait for Temporal to answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, st, err := adminStore(ctx, env, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	applied, err := schema.Migrate(ctx, st.DB())
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintln(env.stdout, "schema is up to date")
	}
	for _, name := range applied {
		fmt.Fprintln(env.stdout, "applied", name)
	}
	if err := movePartitions(ctx, env, st, *partition); err != nil {
		return err
	}
	if *schemaOnly {
		return nil
	}
	if err := registerSearchAttributes(ctx, env, cfg, *wait); err != nil {
		return err
	}
	tc, err := dialTemporal(cfg, env.logger, nil)
	if err != nil {
		return err
	}
	defer tc.Close()
	return ensureReconciler(ctx, tc, cfg, *wait, func(line string) { fmt.Fprintln(env.stdout, line) })
}

// movePartitions moves the tables that wait for their monthly partitions
// (with move), reporting progress at most every few seconds, or says that
// they wait.
func movePartitions(ctx context.Context, env *environment, st *store.Store, move bool) error {
	waiting, err := st.Partitions.Waiting(ctx)
	if err != nil || len(waiting) == 0 {
		return err
	}
	if !move {
		fmt.Fprintf(env.stdout, "%d tables wait to be moved onto monthly partitions (%s): once every process runs this release, "+
			"run touchpoint migrate --partition (it moves them in batches while the service runs)\n", len(waiting), strings.Join(waiting, ", "))
		return nil
	}
	var last time.Time
	err = st.Partitions.Move(ctx, partitiondb.MoveOptions{Progress: func(p partitiondb.Progress) {
		switch {
		case p.Swapped:
			fmt.Fprintf(env.stdout, "%s: moved onto monthly partitions\n", p.Table)
		case p.Waiting:
			if time.Since(last) >= 5*time.Second {
				fmt.Fprintf(env.stdout, "%s: waiting for a lock (held by a long transaction?); trying again\n", p.Table)
				last = time.Now()
			}
		case time.Since(last) >= 5*time.Second || p.Pages == p.Total:
			fmt.Fprintf(env.stdout, "%s: %d%% (%d rows copied)\n", p.Table, 100*p.Pages/max(p.Total, 1), p.Rows)
			last = time.Now()
		}
	}})
	if errors.Is(err, context.Canceled) {
		return errors.New("stopped; run touchpoint migrate --partition again to go on where it stopped")
	}
	return err
}

// registerSearchAttributes adds the invite workflow's search attributes
// to the namespace, retrying while Temporal is still starting.
func registerSearchAttributes(ctx context.Context, env *environment, cfg config.Config, wait time.Duration) error {
	temporal, err := temporalConfig(cfg)
	if err != nil {
		return err
	}
	tc, err := dialTemporal(cfg, env.logger, nil)
	if err != nil {
		return err
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var missingSince time.Time // when Temporal first said the namespace does not exist
	for {
		added, err := searchattr.Register(ctx, tc, temporal.Namespace(), workflows.SearchAttributes())
		if err == nil {
			if len(added) == 0 {
				fmt.Fprintln(env.stdout, "temporal search attributes are up to date")
			}
			for _, name := range added {
				fmt.Fprintln(env.stdout, "registered search attribute", name)
			}
			return nil
		}
		if !namespaceMissing(err) {
			missingSince = time.Time{}
		} else if missingSince.IsZero() {
			missingSince = time.Now()
		}
		// A namespace just created reaches every frontend within seconds;
		// one missing for longer is missing.
		if !missingSince.IsZero() && time.Since(missingSince) >= namespaceGrace {
			return createNamespaceError(temporal, err)
		}
		select {
		case <-ctx.Done():
			if namespaceMissing(err) {
				return createNamespaceError(temporal, err)
			}
			return fmt.Errorf("temporal at %s: %w", temporal.Address(), err)
		case <-time.After(2 * time.Second):
		}
	}
}

// namespaceGrace is how long migrate waits for a namespace Temporal says
// does not exist.
const namespaceGrace = 30 * time.Second

// namespaceMissing reports whether Temporal answered that the namespace
// does not exist.
func namespaceMissing(err error) bool {
	var nsErr *serviceerror.NamespaceNotFound
	var notFound *serviceerror.NotFound
	return errors.As(err, &nsErr) || errors.As(err, &notFound) && strings.Contains(notFound.Error(), "amespace")
}

// createNamespaceError says how to create the namespace migrate needs.
func createNamespaceError(temporal temporalclient.Config, err error) error {
	ns := temporal.Namespace()
	return fmt.Errorf("temporal at %s: namespace %q does not exist (%w); create it, then run touchpoint migrate again:\n"+
		"  temporal operator namespace create --namespace %s --retention 30d --address %s\n"+
		"(with the TLS or API key settings you give touchpoint; on Temporal Cloud, create it in the Cloud UI). "+
		"docs/operations.md, \"Running Temporal yourself\", has every step",
		temporal.Address(), ns, err, ns, temporal.Address())
}
