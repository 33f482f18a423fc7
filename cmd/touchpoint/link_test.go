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

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
)

// runCLIWithStderr is runCLI that returns what the command wrote to
// stderr too.
func runCLIWithStderr(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &environment{stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] },
		logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	err = run(context.Background(), env, args)
	return out.String(), errOut.String(), err
}

func TestClientsLinkCLI(t *testing.T) {
	t.Parallel()
	const kc = "https://kc.example.com/realms/shop"
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TOUCHPOINT_SECRET_KEY": adminSecretKey,
		"TOUCHPOINT_OIDC_ISSUER": "http://127.0.0.1:8081, " + kc + "|audience=touchpoint-api"}
	_, err := runCLI(t, vars, "migrate", "--schema-only")
	require.NoError(t, err)
	out, err := runCLI(t, vars, "accounts", "create", "--name", "Shop", "--json")
	require.NoError(t, err)
	var acc struct{ AccountID string }
	require.NoError(t, json.Unmarshal([]byte(out), &acc))

	out, stderr, err := runCLIWithStderr(t, vars, "clients", "link", "--account", acc.AccountID, "--issuer", kc,
		"--client-id", "erp", "--group", "events", "--name", "ERP", "--json")
	require.NoError(t, err)
	assert.Empty(t, stderr, "no warning: the issuer is configured")
	var linked struct{ AccountID, ClientID, Issuer, ID string }
	require.NoError(t, json.Unmarshal([]byte(out), &linked))
	assert.Equal(t, acc.AccountID, linked.AccountID)
	assert.Equal(t, "erp", linked.ClientID)
	assert.Equal(t, kc, linked.Issuer)
	assert.True(t, store.ValidID("cli", linked.ID), "the id revoke-tokens and delete take")

	db, err := store.Open(context.Background(), vars["DATABASE_URL"])
	require.NoError(t, err)
	defer db.Close()
	st := storeset.New(db, "P7D")
	c, err := st.Auth.ClientByIssuer(context.Background(), kc, "erp")
	require.NoError(t, err)
	assert.Equal(t, linked.ID, c.ID)
	assert.Equal(t, acc.AccountID, c.AccountID)
	assert.Equal(t, auth.GroupEvents, c.AccessGroup)
	assert.Equal(t, "ERP", c.Name)
	assert.Nil(t, c.SecretHash, "a linked client has no secret here")

	// The same pair twice is a clear error, naming the existing link.
	_, err = runCLI(t, vars, "clients", "link", "--account", acc.AccountID, "--issuer", kc, "--client-id", "erp")
	require.ErrorIs(t, err, store.ErrConflict)
	assert.ErrorContains(t, err, "already linked, as "+linked.ID)

	// The same client id under another issuer is another client; that
	// issuer is not configured here, so the command warns.
	const other = "https://tenant.auth0.example/"
	out, stderr, err = runCLIWithStderr(t, vars, "clients", "link", "--account", acc.AccountID, "--issuer", other, "--client-id", "erp")
	require.NoError(t, err)
	assert.Contains(t, stderr, "warning: "+other+" is not in TOUCHPOINT_OIDC_ISSUER")
	assert.Contains(t, out, `client "erp" of `+other+" linked to account "+acc.AccountID)
	assert.Contains(t, out, "(access group full)", "full is the default group")
	c2, err := st.Auth.ClientByIssuer(context.Background(), other, "erp")
	require.NoError(t, err)
	assert.NotEqual(t, linked.ID, c2.ID)

	out, err = runCLI(t, vars, "clients", "list", "--account", acc.AccountID)
	require.NoError(t, err)
	assert.Contains(t, out, kc)
	assert.Contains(t, out, other)

	out, err = runCLI(t, vars, "clients", "revoke-tokens", linked.ID)
	require.NoError(t, err)
	assert.Contains(t, out, "revoked")
	c, err = st.Auth.Client(context.Background(), linked.ID)
	require.NoError(t, err)
	assert.Positive(t, c.NotBefore.Unix(), "revocation applies to linked clients too")

	for _, bad := range [][]string{
		{"--issuer", kc, "--client-id", "x"}, // no account
		{"--account", "acc-nope", "--issuer", kc, "--client-id", "x"},
		{"--account", "acc-00000000-0000-0000-0000-000000000000", "--issuer", kc, "--client-id", "x"},
		{"--account", acc.AccountID, "--client-id", "x"}, // no issuer
		{"--account", acc.AccountID, "--issuer", "kc.example.com/realms/shop", "--client-id", "x"},
		{"--account", acc.AccountID, "--issuer", "ftp://kc.example.com", "--client-id", "x"},
		{"--account", acc.AccountID, "--issuer", kc + "?x=1", "--client-id", "x"},
		{"--account", acc.AccountID, "--issuer", kc}, // no client id
		{"--account", acc.AccountID, "--issuer", kc, "--client-id", "  "},
		{"--account", acc.AccountID, "--issuer", kc, "--client-id", "x", "--group", "admin"},
		{"--account", acc.AccountID, "--issuer", "http://127.0.0.1:8081/", "--client-id", "x"}, // the built-in issuer
	} {
		_, err := runCLI(t, vars, append([]string{"clients", "link"}, bad...)...)
		assert.Error(t, err, strings.Join(bad, " "))
	}
	_, err = runCLI(t, vars, "clients", "create", "--account", acc.AccountID, "--issuer", kc)
	assert.Error(t, err, "--issuer belongs to link only")
}
