package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // DB=postgres12, as in the image
	"go.temporal.io/server/temporal"
)

// runImage runs Temporal as the temporalio/server image does: its
// entrypoint execs `temporal-server start`, which, given no configuration
// file, renders the configuration template embedded in the server module
// from the environment (DB, POSTGRES_SEEDS, BIND_ON_IP,
// DYNAMIC_CONFIG_FILE_PATH, PROMETHEUS_ENDPOINT, …) and starts every
// service in one process. The deploy tests run it with the environment
// docker-compose.yml gives the temporal service. It serves until ctx ends.
func runImage(ctx context.Context) error {
	cfg, err := config.Load(config.WithEmbedded())
	if err != nil {
		return fmt.Errorf("unable to load configuration: %w", err)
	}
	interrupt := make(chan any, 1)
	go func() {
		<-ctx.Done()
		interrupt <- ctx.Err()
	}()
	srv, err := temporal.NewServer(
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithConfig(cfg),
		temporal.WithLogger(log.NewZapLogger(log.BuildZapLogger(cfg.Log))),
		temporal.InterruptOn(interrupt),
	)
	if err != nil {
		return fmt.Errorf("unable to create server: %w", err)
	}
	// Blocks until interrupted, then stops every service.
	if err := srv.Start(); err != nil {
		return fmt.Errorf("unable to start server: %w", err)
	}
	return nil
}

// validateDynamicConfig checks a dynamic configuration file as
// `temporal-server validate-dynamic-config` does, stricter: an unknown
// key or a value a known key refuses (warnings to the server, which then
// ignores them) fails too.
func validateDynamicConfig(path string, stdout io.Writer) error {
	contents, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	res := dynamicconfig.LoadYamlFile(contents)
	for _, e := range res.Errors {
		fmt.Fprintf(stdout, "%s: error: %v\n", path, e)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stdout, "%s: warning: %v\n", path, w)
	}
	if n := len(res.Errors) + len(res.Warnings); n > 0 {
		return fmt.Errorf("%s: %d errors, %d warnings", path, len(res.Errors), len(res.Warnings))
	}
	fmt.Fprintf(stdout, "%s: %d keys, all known and valid\n", path, len(res.Map))
	return nil
}
