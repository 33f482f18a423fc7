package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/internal/testtemporal"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
)

const adminSecretKey = "admin-test-secret-key-0123456789abcdef"

// runCLI runs one touchpoint command in-process and returns its stdout.
func runCLI(t *testing.T, vars map[string]string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	env := &environment{stdout: &out, stderr: io.Discard, getenv: func(k string) string { return vars[k] },
		logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	err := run(context.Background(), env, args)
	return out.String(), err
}

func TestMigrateRegistersSearchAttributesOnce(t *testing.T) {
	t.Parallel()
	temporal := testtemporal.Start(t, testtemporal.Options{LogLevel: "error"})
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TEMPORAL_ADDRESS": temporal.Address()}

	out, err := runCLI(t, vars, "migrate")
	require.NoError(t, err)
	assert.Contains(t, out, "applied 0001_foundation.sql")
	assert.Contains(t, out, "registered search attribute TouchpointInviteStatus")

	out, err = runCLI(t, vars, "migrate")
	require.NoError(t, err)
	assert.Equal(t, "schema is up to date\ntemporal search attributes are up to date\n", out)

	out, err = runCLI(t, vars, "migrate", "--schema-only")
	require.NoError(t, err)
	assert.Equal(t, "schema is up to date\n", out)
}

func TestAccountsAndClientsCLI(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TOUCHPOINT_SECRET_KEY": adminSecretKey}
	_, err := runCLI(t, vars, "migrate", "--schema-only")
	require.NoError(t, err)

	out, err := runCLI(t, vars, "accounts", "create", "--name", "Acme", "--json")
	require.NoError(t, err)
	var acc struct{ AccountID, ChannelID string }
	require.NoError(t, json.Unmarshal([]byte(out), &acc))
	assert.True(t, store.ValidID("acc", acc.AccountID))
	assert.True(t, store.ValidID("chl", acc.ChannelID))

	out, err = runCLI(t, vars, "clients", "create", "--account", acc.AccountID, "--group", "events", "--name", "shop", "--json")
	require.NoError(t, err)
	var cli struct{ AccountID, ClientID, ClientSecret string }
	require.NoError(t, json.Unmarshal([]byte(out), &cli))
	assert.Equal(t, acc.AccountID, cli.AccountID)
	assert.GreaterOrEqual(t, len(cli.ClientSecret), 43, "at least 256 random bits")

	st, err := store.Open(context.Background(), vars["DATABASE_URL"])
	require.NoError(t, err)
	defer st.Close()
	s := storeset.New(st, "P7D")
	c, err := s.Auth.ClientByID(context.Background(), cli.ClientID)
	require.NoError(t, err)
	assert.Equal(t, "events", c.AccessGroup)
	assert.Equal(t, authserver.HashClientSecret(secretkey.Derive(adminSecretKey, secretkey.ClientSecret), cli.ClientSecret), c.SecretHash,
		"only the keyed hash of the secret is stored")
	assert.NotContains(t, string(c.SecretHash), cli.ClientSecret)

	out, err = runCLI(t, vars, "clients", "list", "--account", acc.AccountID)
	require.NoError(t, err)
	assert.Contains(t, out, cli.ClientID)
	assert.NotContains(t, out, cli.ClientSecret, "a secret is shown only once")

	out, err = runCLI(t, vars, "clients", "revoke-tokens", cli.ClientID)
	require.NoError(t, err)
	assert.Contains(t, out, "revoked")
	c, err = s.Auth.ClientByID(context.Background(), cli.ClientID)
	require.NoError(t, err)
	assert.Positive(t, c.NotBefore.Unix())

	_, err = runCLI(t, vars, "clients", "delete", cli.ClientID)
	require.NoError(t, err)
	_, err = s.Auth.ClientByID(context.Background(), cli.ClientID)
	assert.ErrorIs(t, err, store.ErrNotFound)

	for _, bad := range [][]string{
		{"accounts", "create"},
		{"accounts", "create", "--name", "  "},
		{"clients", "create", "--account", "acc-nope"},
		{"clients", "create", "--account", acc.AccountID, "--group", "admin"},
		{"clients", "create", "--account", "acc-00000000-0000-0000-0000-000000000000"},
		{"clients", "delete", "cli-00000000-0000-0000-0000-000000000000"},
		{"clients", "revoke-tokens", "not-an-id"},
		{"clients", "frobnicate"},
		{"nonsense"},
	} {
		_, err := runCLI(t, vars, bad...)
		assert.Error(t, err, strings.Join(bad, " "))
	}
	_, err = runCLI(t, map[string]string{"DATABASE_URL": vars["DATABASE_URL"]}, "clients", "list", "--account", acc.AccountID)
	assert.ErrorContains(t, err, "TOUCHPOINT_SECRET_KEY", "the admin CLI needs the secret key outside dev")
}

// TestRotatePublicationKeyCLI: the operator's rotation makes a new key
// that signs, and the account's JWKS keeps the old one.
func TestRotatePublicationKeyCLI(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TOUCHPOINT_SECRET_KEY": adminSecretKey}
	_, err := runCLI(t, vars, "migrate", "--schema-only")
	require.NoError(t, err)
	out, err := runCLI(t, vars, "accounts", "create", "--name", "Acme", "--json")
	require.NoError(t, err)
	var acc struct{ AccountID string }
	require.NoError(t, json.Unmarshal([]byte(out), &acc))

	var kids []string
	for range 2 {
		out, err = runCLI(t, vars, "accounts", "rotate-publication-key", "--account", acc.AccountID, "--json")
		require.NoError(t, err)
		var got struct{ AccountID, KID string }
		require.NoError(t, json.Unmarshal([]byte(out), &got))
		assert.Equal(t, acc.AccountID, got.AccountID)
		kids = append(kids, got.KID)
	}
	require.NotEqual(t, kids[0], kids[1])

	db, err := store.Open(context.Background(), vars["DATABASE_URL"])
	require.NoError(t, err)
	defer db.Close()
	keys, err := storeset.New(db, "P7D").Reviews.PublicationKeys(context.Background(), acc.AccountID)
	require.NoError(t, err)
	require.Len(t, keys, 2, "the older key stays")
	assert.Equal(t, kids[1], keys[0].KID, "the newest signs")

	_, err = runCLI(t, vars, "accounts", "rotate-publication-key", "--account", "acc-nope")
	assert.ErrorContains(t, err, "--account must be an account id")
	_, err = runCLI(t, vars, "accounts", "rotate-publication-key", "--account", store.NewID("acc"))
	assert.ErrorIs(t, err, store.ErrNotFound)
}
