package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

func TestUsersCLI(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TOUCHPOINT_SECRET_KEY": adminSecretKey}
	_, err := runCLI(t, vars, "migrate", "--schema-only")
	require.NoError(t, err)
	out, err := runCLI(t, vars, "accounts", "create", "--name", "Acme", "--json")
	require.NoError(t, err)
	var acc struct{ AccountID string }
	require.NoError(t, json.Unmarshal([]byte(out), &acc))

	out, err = runCLI(t, vars, "users", "create", "--account", acc.AccountID, "--email", " Anna@Shop.Example ", "--role", "editor", "--json")
	require.NoError(t, err)
	var anna struct{ ID, Email, Role string }
	require.NoError(t, json.Unmarshal([]byte(out), &anna))
	assert.True(t, store.ValidID("usr", anna.ID))
	assert.Equal(t, "anna@shop.example", anna.Email, "kept in lower case")
	assert.Equal(t, "editor", anna.Role)

	for name, args := range map[string][]string{
		"unknown role":     {"--account", acc.AccountID, "--email", "b@shop.example", "--role", "admin"},
		"not an address":   {"--account", acc.AccountID, "--email", "Ben <b@shop.example>", "--role", "viewer"},
		"not an account":   {"--account", "shop", "--email", "b@shop.example", "--role", "viewer"},
		"unknown account":  {"--account", "acc-3f1c2a9e-7b4d-4c1a-9e2f-0a1b2c3d4e5f", "--email", "b@shop.example", "--role", "viewer"},
		"address is taken": {"--account", acc.AccountID, "--email", "ANNA@shop.example", "--role", "viewer"},
	} {
		_, err := runCLI(t, vars, append([]string{"users", "create"}, args...)...)
		assert.Error(t, err, name)
	}

	// Shop-written values print quoted: an address cannot rewrite the terminal.
	out, err = runCLI(t, vars, "users", "create", "--account", acc.AccountID, "--email", "ben@shop.example", "--role", "viewer")
	require.NoError(t, err)
	assert.Contains(t, out, `("ben@shop.example")`)
	out, err = runCLI(t, vars, "users", "list", "--account", acc.AccountID)
	require.NoError(t, err)
	assert.Contains(t, out, `"anna@shop.example"`)
	assert.Contains(t, out, `"ben@shop.example"`)

	out, err = runCLI(t, vars, "users", "update", "--email", "ben@shop.example", "--role", "owner")
	require.NoError(t, err)
	assert.Contains(t, out, "is owner, and reads the console in their browser's language")
	out, err = runCLI(t, vars, "users", "update", "--email", "ben@shop.example", "--language", "de", "--json")
	require.NoError(t, err)
	assert.Contains(t, out, `"language":"de"`)
	assert.Contains(t, out, `"role":"owner"`, "a language alone leaves the role")
	_, err = runCLI(t, vars, "users", "update", "--email", "ben@shop.example", "--language", "klingon")
	assert.ErrorContains(t, err, "--language must be one of da, de, en, es, fr, nl, or browser")
	_, err = runCLI(t, vars, "users", "update", "--email", "ben@shop.example")
	assert.ErrorContains(t, err, "give --role, --language or both")
	out, err = runCLI(t, vars, "users", "update", "--email", "ben@shop.example", "--language", "browser")
	require.NoError(t, err)
	assert.Contains(t, out, "reads the console in their browser's language")

	// A session of Anna's ends when she is disabled.
	db, err := store.Open(context.Background(), vars["DATABASE_URL"])
	require.NoError(t, err)
	defer db.Close()
	ps := persondb.New(pg.NewDB(db))
	token := sha256.Sum256([]byte("anna's cookie"))
	_, err = ps.StartSession(context.Background(), persondb.NewSession{TokenHash: token[:], PersonID: anna.ID, CSRFToken: "x",
		Issuer: "http://127.0.0.1:8081", Lifetime: time.Hour, Idle: time.Hour})
	require.NoError(t, err)
	out, err = runCLI(t, vars, "users", "disable", "--email", "anna@shop.example")
	require.NoError(t, err)
	assert.Contains(t, out, "1 sessions ended")
	_, err = ps.Session(context.Background(), token[:], time.Hour)
	assert.ErrorIs(t, err, store.ErrNotFound, "disabling ends the session at once")

	_, err = runCLI(t, vars, "users", "link", "--email", "ben@shop.example", "--issuer", "https://idp.example/realms/shop", "--subject", "f81d4fae")
	require.NoError(t, err)
	p, err := ps.PersonByIdentity(context.Background(), "https://idp.example/realms/shop", "f81d4fae")
	require.NoError(t, err)
	assert.Equal(t, "ben@shop.example", p.Email)
	_, err = runCLI(t, vars, "users", "link", "--email", "ben@shop.example", "--issuer", "idp.example", "--subject", "x")
	assert.ErrorContains(t, err, "--issuer")

	_, err = ps.StartSession(context.Background(), persondb.NewSession{TokenHash: token[:], PersonID: p.ID, CSRFToken: "x",
		Issuer: "http://127.0.0.1:8081", Lifetime: time.Hour, Idle: time.Hour})
	require.NoError(t, err)
	out, err = runCLI(t, vars, "users", "sign-out", "--email", "ben@shop.example")
	require.NoError(t, err)
	assert.Contains(t, out, "1 sessions ended")

	_, err = runCLI(t, vars, "users", "erase", "--id", p.ID)
	require.NoError(t, err)
	assert.Empty(t, testdb.Copies(t, db, "ben@shop.example"))

	trail, _, err := ps.Audit(context.Background(), acc.AccountID, persondb.AuditFilter{Actor: people.Operator}, pg.Page{Limit: 200})
	require.NoError(t, err)
	var actions []string
	for _, e := range trail {
		actions = append(actions, e.Action)
	}
	assert.Equal(t, []string{persondb.AuditPersonErased, persondb.AuditSignedOut, persondb.AuditPersonLinked, persondb.AuditPersonDisabled,
		persondb.AuditLanguageChanged, persondb.AuditLanguageChanged,
		persondb.AuditRoleChanged, persondb.AuditPersonCreated, persondb.AuditPersonCreated}, actions, "the operator's changes, newest first")
}
