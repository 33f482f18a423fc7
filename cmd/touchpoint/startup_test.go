package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
)

// missingDatabaseURL is a URL of the test server naming a database that
// does not exist.
func missingDatabaseURL(t *testing.T) (string, string) {
	t.Helper()
	u, err := url.Parse(testdb.ServerURL())
	require.NoError(t, err)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "touchpoint_missing_" + hex.EncodeToString(b)
	u.Path = "/" + name
	return u.String(), name
}

// `touchpoint migrate` on a database that does not exist says that it
// must be created first, and how.
func TestMigrateSaysHowToCreateTheDatabase(t *testing.T) {
	t.Parallel()
	dbURL, name := missingDatabaseURL(t)
	_, err := runCLI(t, map[string]string{"DATABASE_URL": dbURL}, "migrate", "--schema-only")
	require.Error(t, err)
	u, _ := url.Parse(dbURL)
	assert.Contains(t, err.Error(), "does not exist")
	assert.Contains(t, err.Error(), "createdb --host "+u.Hostname()+" --port "+u.Port()+" --username "+u.User.Username()+" "+name)
	assert.Contains(t, err.Error(), `CREATE DATABASE "`+name+`"`)
}

// `touchpoint migrate` against a namespace that does not exist says how to
// create it, without waiting out --temporal-wait's default.
func TestMigrateSaysHowToCreateTheNamespace(t *testing.T) {
	t.Parallel()
	temporal := testtemporal.Start(t, testtemporal.Options{LogLevel: "error"})
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TEMPORAL_ADDRESS": temporal.Address(),
		"TEMPORAL_NAMESPACE": "touchpoint-missing"}
	_, err := runCLI(t, vars, "migrate", "--temporal-wait=4s")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `namespace "touchpoint-missing" does not exist`)
	assert.Contains(t, err.Error(), "Namespace touchpoint-missing is not found", "Temporal's own words")
	assert.Contains(t, err.Error(), "temporal operator namespace create --namespace touchpoint-missing --retention 30d --address "+temporal.Address())
}

// `touchpoint worker` warns at start when invites would go out from the
// default sender, a domain no receiving server accepts.
func TestWorkerWarnsWithoutMailFrom(t *testing.T) {
	t.Parallel()
	dbURL, _ := missingDatabaseURL(t) // the process stops right after the checks
	for _, tc := range []struct {
		from string
		warn bool
	}{
		{"", true},
		{"Reviews <reviews@touchpoint.localhost>", true},
		{"reviews@localhost", true},
		{"Acme Reviews <reviews@acme.example>", false},
	} {
		vars := map[string]string{"DATABASE_URL": dbURL, "TOUCHPOINT_SECRET_KEY": adminSecretKey,
			"TOUCHPOINT_SMTP_URL": "smtp://127.0.0.1:1", "TOUCHPOINT_MAIL_FROM": tc.from}
		var logs bytes.Buffer
		env := &environment{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] },
			logger: slog.New(slog.NewJSONHandler(&logs, nil))}
		err := run(context.Background(), env, []string{"worker"})
		require.ErrorContains(t, err, "does not exist", "stopped by the missing database")
		if tc.warn {
			assert.Contains(t, logs.String(), `"msg":"TOUCHPOINT_MAIL_FROM is not an address of your own domain`, "%q", tc.from)
		} else {
			assert.NotContains(t, logs.String(), "TOUCHPOINT_MAIL_FROM", "%q", tc.from)
		}
	}
}

// Every process checks the settings packages hand the configuration (the
// mail providers', the SMS provider's, the Temporal client's) at start,
// whether or not it uses them, and stops naming the variable.
func TestProcessesCheckEverySectionAtStart(t *testing.T) {
	t.Parallel()
	for name, bad := range map[string]map[string]string{
		"TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD": {"TOUCHPOINT_POSTMARK_WEBHOOK_USER": "postmark"},
		"TOUCHPOINT_SMS_AUTH_TOKEN":            {"TOUCHPOINT_SMS_ACCOUNT_SID": "AC0123"},
		"/nonexistent/client.pem": {"TEMPORAL_TLS_CLIENT_CERT_PATH": "/nonexistent/client.pem",
			"TEMPORAL_TLS_CLIENT_KEY_PATH": "/nonexistent/client.key"},
	} {
		for _, process := range []string{"auth", "api", "worker"} {
			vars := map[string]string{"TOUCHPOINT_SECRET_KEY": adminSecretKey, "TOUCHPOINT_SMTP_URL": "smtp://127.0.0.1:1"}
			for k, v := range bad {
				vars[k] = v
			}
			env := &environment{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] },
				logger: slog.New(slog.DiscardHandler)}
			err := run(context.Background(), env, []string{process})
			require.Error(t, err, "%s with %v", process, bad)
			assert.Contains(t, err.Error(), "configuration", process)
			assert.Contains(t, err.Error(), name, process)
		}
	}
}
