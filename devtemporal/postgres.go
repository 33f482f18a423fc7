package devtemporal

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql"
	v12 "go.temporal.io/server/schema/postgresql/v12"
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
)

// Postgres keeps Temporal's state in PostgreSQL, as a production cluster
// does, instead of SQLite.
type Postgres struct {
	// AdminURL reaches the PostgreSQL server as a user that may create
	// databases, e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable.
	// Its database (default "postgres") is where CREATE DATABASE runs; its
	// query parameters are passed to every connection.
	AdminURL string
	// Database holds Temporal's state and visibility. It is created with
	// Temporal's schema when missing and reused as it is otherwise, so a
	// restart keeps every workflow.
	Database string
}

const (
	// Persistence pools are per service and per store (four services, two
	// stores), and tests share one PostgreSQL server: keep each pool small
	// (the suite's connection budget is in internal/testdb).
	pgMaxConns = 2
	// Schema directories inside go.temporal.io/server/schema's embedded files.
	pgMainSchema       = "postgresql/v12/temporal"
	pgVisibilitySchema = "postgresql/v12/visibility"
)

// sqlConfig is the persistence config for p.Database through the
// postgres12 plugin (lib/pq).
func (p Postgres) sqlConfig() (*config.SQL, error) {
	u, err := url.Parse(p.AdminURL)
	if err != nil {
		return nil, fmt.Errorf("postgres admin URL: %w", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		return nil, fmt.Errorf("postgres admin URL: scheme %q, want postgres", u.Scheme)
	}
	if p.Database == "" {
		return nil, errors.New("postgres: a database name is required")
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = localIP
	}
	if port == "" {
		port = "5432"
	}
	pw, _ := u.User.Password()
	attrs := map[string]string{}
	for k, v := range u.Query() {
		attrs[k] = v[len(v)-1]
	}
	return &config.SQL{
		PluginName:        postgresql.PluginName,
		User:              u.User.Username(),
		Password:          pw,
		ConnectAddr:       net.JoinHostPort(host, port),
		ConnectProtocol:   "tcp",
		DatabaseName:      p.Database,
		ConnectAttributes: attrs,
		MaxConns:          pgMaxConns,
		MaxIdleConns:      pgMaxConns,
	}, nil
}

// adminDatabase is the database named in AdminURL, default "postgres".
func (p Postgres) adminDatabase() string {
	u, err := url.Parse(p.AdminURL)
	if err != nil || strings.Trim(u.Path, "/") == "" {
		return "postgres"
	}
	return strings.Trim(u.Path, "/")
}

// preparePostgres creates the database when missing and sets up Temporal's
// schema in it with Temporal's own schema tool, the code path of
// `temporal-sql-tool create-database` and `setup-schema`. Main and
// visibility tables share the database, as in Temporal's own SQL tests: the
// schema version recorded is the main one, which is newer than the
// visibility one, so the server's version check accepts both.
func preparePostgres(p Postgres, logger log.Logger) (*config.SQL, error) {
	sqlCfg, err := p.sqlConfig()
	if err != nil {
		return nil, err
	}
	admin := *sqlCfg
	// DoCreateDatabase connects to the admin database; an existing
	// database is not an error.
	if err := sqltool.DoCreateDatabase(&admin, p.adminDatabase(), logger); err != nil {
		return nil, fmt.Errorf("create postgres database %q: %w", p.Database, err)
	}
	conn, err := sqltool.NewConnection(sqlCfg, logger)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres database %q: %w", p.Database, err)
	}
	defer conn.Close()
	if v, err := conn.ReadSchemaVersion(); err == nil && v != "" {
		return sqlCfg, nil // set up before: the server checks the version
	}
	// Visibility first: the version, written last, marks a finished setup.
	steps := []schema.SetupConfig{
		{SchemaName: pgVisibilitySchema, DisableVersioning: true},
		{SchemaName: pgMainSchema, InitialVersion: v12.Version},
	}
	for _, step := range steps {
		if err := schema.NewSetupSchemaTask(conn, &step, logger).Run(); err != nil {
			return nil, fmt.Errorf("set up %s schema in postgres database %q: %w", step.SchemaName, p.Database, err)
		}
	}
	return sqlCfg, nil
}
