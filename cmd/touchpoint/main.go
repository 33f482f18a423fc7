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
	"slices"
	"strings"
	"syscall"
)

// command is one subcommand. run gets the arguments after its name.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string) error
}

// environment is what every subcommand shares: its output streams and the
// process environment, passed in so tests can run commands in-process.
type environment struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	logger         *slog.Logger
}

// flags is a new set of a subcommand's flags: a bad flag is an error the
// subcommand returns, and its message and the flags' help go to stderr.
func (env *environment) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	return fs
}

// commands lists every subcommand, in the order the usage shows them: the
// processes, and the admin commands of package admincli. `dev` exists in
// the default build only (dev.go; nodev.go stands in).
func (env *environment) commands() []command {
	admin := env.admin()
	return []command{
		{"dev", devSummary, env.runDev},
		{"api", "run the HTTP API", env.runAPICommand},
		{"auth", "run the built-in OAuth 2.0 / OIDC issuer", env.runAuthCommand},
		{"worker", "run the Temporal worker; worker versions [set-current BUILD_ID]: the worker deployment's builds", env.runWorkerCommand},
		{"migrate", "apply the PostgreSQL schema", env.runMigrate},
		{"accounts", "manage accounts: accounts create|update|set-quota|rotate-publication-key", admin.RunAccounts},
		{"clients", "manage API clients: clients create|link|list|delete|revoke-tokens", admin.RunClients},
		{"users", "the people of the console: users create|list|update|disable|sign-out|link|erase", admin.RunUsers},
		{"keys", "the built-in issuer's signing keys: keys list|rotate|retire KID", admin.RunKeys},
		{"suppressions", "the suppression list: suppressions import --account acc-… FILE", admin.RunSuppressions},
		{"stats", "the funnel of an account: stats --account acc-… [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--time-zone …]", admin.RunStats},
		{"invites", "ops: invites show evt-… | invites retry evt-… | invites retry --failed [--since 24h] [--reason …] [--dry-run] …", admin.RunInvites},
		{"webhooks", "ops: webhooks enable --endpoint whk-… | webhooks replay --endpoint whk-… [--since 72h] [--until …] [--dry-run]", admin.RunWebhooks},
		{"customers", "privacy: customers erase --account acc-… (--email E | --reference R)", admin.RunCustomers},
		{"reviews", "moderation: reviews reported [--account acc-…] | reviews moderate --id rev-… --decision publish|remove --note …", admin.RunReviews},
		{"bench", "measure accepted events/s and invites sent/s: bench [--events N] [--concurrency C] [--baseline]", env.runBench},
		{"healthcheck", "GET a URL; exit 0 on a 2xx answer (container health checks)", env.runHealthcheck},
	}
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
	cmds := env.commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.stderr, cmds)
		if len(args) == 0 {
			return errors.New("no command given")
		}
		return nil
	}
	i := slices.IndexFunc(cmds, func(c command) bool { return c.name == args[0] })
	if i < 0 {
		usage(env.stderr, cmds)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return cmds[i].run(ctx, args[1:])
}

func usage(w io.Writer, cmds []command) {
	fmt.Fprintln(w, "usage: touchpoint <command> [flags]\n\ncommands:")
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nConfiguration comes from the environment; see docs/operations.md.")
}

func logLevel(s string) slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
		return slog.LevelInfo
	}
	return l
}
