// Package admincli is the admin CLI of `touchpoint`: the commands an
// operator runs against PostgreSQL directly — accounts, clients, users,
// keys, suppressions, stats, invites, webhooks, customers, reviews — and
// `worker versions`, with their flags, usage texts and output. The binary
// registers each command in its table of subcommands and hands them, as
// Options, its output streams, its environment and its way of reaching
// PostgreSQL, Temporal and the built-in issuer.
package admincli

import (
	"context"
	"flag"
	"io"

	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/authdb"
)

// Options are what the binary gives the admin commands.
type Options struct {
	// Stdout and Stderr are the commands' output streams; Getenv reads the
	// process environment.
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// OpenStore loads the configuration (validated, with the secret key,
	// when withSecret) and connects to PostgreSQL; the caller closes the
	// pool.
	OpenStore func(ctx context.Context, withSecret bool) (config.Config, *store.Store, error)
	// DialTemporal returns a client of the configured Temporal.
	DialTemporal func(cfg config.Config) (client.Client, error)
	// IssuerOptions are the built-in issuer's options from cfg.
	IssuerOptions func(cfg config.Config, repo *authdb.Store) authserver.Options
	// BuildVersion is the binary's version: a versioned worker's Build ID.
	BuildVersion string
}

// Env is what every admin command shares: the Options the binary gave.
type Env struct {
	Options
}

// New is the admin CLI with o.
func New(o Options) *Env { return &Env{o} }

// flags is a new set of a subcommand's flags: a bad flag is an error the
// subcommand returns, and its message and the flags' help go to stderr.
func (env *Env) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	return fs
}
