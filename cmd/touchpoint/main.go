// Command touchpoint runs every Touchpoint process: the API, the built-in
// issuer, the Temporal worker, migrations, the admin CLI and `dev`, which
// runs all of them in one process on a laptop.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand. run gets the arguments after its name.
type command struct {
	summary string
	run     func(ctx context.Context, env *environment, args []string) error
}

// environment is what every subcommand shares: its output streams and the
// process environment, passed in so tests can run commands in-process.
type environment struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	logger         *slog.Logger
}

// commands lists every subcommand; dev.go adds "dev" in the default build.
var commands = map[string]command{
	"api":      {"run the HTTP API", runAPICommand},
	"auth":     {"run the built-in OAuth 2.0 / OIDC issuer", runAuthCommand},
	"worker":   {"run the Temporal worker", runWorkerCommand},
	"migrate":  {"apply the PostgreSQL schema", runMigrate},
	"accounts": {"manage accounts: accounts create --name N [--json]", runAccounts},
	"clients":  {"manage API clients: clients create|link|list|delete|revoke-tokens", runClients},
	"bench":    {"measure accepted events/s and invites sent/s: bench [--events N] [--concurrency C] [--baseline]", runBench},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &environment{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	env.logger = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(os.Getenv("TOUCHPOINT_LOG_LEVEL"))}))
	if err := run(ctx, env, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "touchpoint:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, env *environment, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.stderr)
		if len(args) == 0 {
			return errors.New("no command given")
		}
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		usage(env.stderr)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return cmd.run(ctx, env, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: touchpoint <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-12s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nConfiguration comes from the environment; see README.md.")
}

func logLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
		return slog.LevelInfo
	}
	return l
}
