package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/storeset"
)

// keyLine is the line of `keys list` that names kid.
func keyLine(t *testing.T, out, kid string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, kid+" ") {
			return line
		}
	}
	t.Fatalf("keys list names no key %s:\n%s", kid, out)
	return ""
}

// `keys list` says "sealed under another secret key" only of a key the
// secret key in use cannot open — never of a retired key, which is never
// opened again.
func TestKeysListLabelsOnlyKeysOfAnotherSecret(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TOUCHPOINT_SECRET_KEY": adminSecretKey}
	_, err := runCLI(t, vars, "migrate", "--schema-only")
	require.NoError(t, err)
	out, err := runCLI(t, vars, "keys", "list", "--json")
	require.NoError(t, err)
	var keys []authserver.KeyInfo
	require.NoError(t, json.Unmarshal([]byte(out), &keys))
	require.Len(t, keys, 1)
	first := keys[0].KID
	out, err = runCLI(t, vars, "keys", "rotate", "--json")
	require.NoError(t, err)
	var second authserver.KeyInfo
	require.NoError(t, json.Unmarshal([]byte(out), &second))
	_, err = runCLI(t, vars, "keys", "retire", first)
	require.NoError(t, err)

	out, err = runCLI(t, vars, "keys", "list")
	require.NoError(t, err)
	retired := keyLine(t, out, first)
	assert.Regexp(t, `^\S+\s+retired\s`, retired)
	assert.NotContains(t, retired, "another secret key", "the same secret key sealed it")
	assert.NotContains(t, keyLine(t, out, second.KID), "another secret key")

	// Under another secret key the live key is labelled; the retired one
	// still is not.
	other := map[string]string{"DATABASE_URL": vars["DATABASE_URL"], "TOUCHPOINT_SECRET_KEY": strings.Repeat("o", 40)}
	out, err = runCLI(t, other, "keys", "list")
	require.NoError(t, err)
	assert.Contains(t, keyLine(t, out, second.KID), "(sealed under another secret key)")
	assert.NotContains(t, keyLine(t, out, first), "another secret key")
}

// `suppressions import` takes its flags before or after the file.
func TestSuppressionsImportFlagsAfterTheFile(t *testing.T) {
	t.Parallel()
	vars, db := opsDatabase(t)
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	file := filepath.Join(t.TempDir(), "optouts.txt")
	require.NoError(t, os.WriteFile(file, []byte("# opt-outs\nann@example.com\nnot an address\n+33612345678\n"), 0o600))

	out, err := opsCLI(t, vars, "suppressions", "import", file, "--account", a.AccountID, "--reason", "unsubscribed")
	require.NoError(t, err)
	assert.Equal(t, "2 added, 0 already listed, 1 refused\n", out)
	sup, err := storeset.New(db, "P7D").Suppressions.Suppression(context.Background(), a.AccountID, "ann@example.com")
	require.NoError(t, err)
	assert.Equal(t, invite.Unsubscribed, sup.Reason, "--reason after the file is read")

	out, err = opsCLI(t, vars, "suppressions", "import", "--account", a.AccountID, file)
	require.NoError(t, err)
	assert.Equal(t, "0 added, 2 already listed, 1 refused\n", out)
	out, err = opsCLI(t, vars, "suppressions", "import", "--account", a.AccountID, file, "--reason", "manual")
	require.NoError(t, err)
	assert.Equal(t, "0 added, 2 already listed, 1 refused\n", out)

	for _, bad := range [][]string{
		{file},                                  // no account
		{file, "--account"},                     // a flag without its value
		{file, file, "--account", a.AccountID},  // two files
		{file, "--account", a.AccountID, "--x"}, // an unknown flag
		{"--account", a.AccountID, file, "--reason", "whim"},
	} {
		_, err := opsCLI(t, vars, append([]string{"suppressions", "import"}, bad...)...)
		assert.Error(t, err, "%v", bad)
	}
}

// `invites show` writes every time one way (RFC 3339, UTC, to the second)
// and an absent value as "-", never Go's "<nil>" or its time layout.
func TestInvitesShowTextFormats(t *testing.T) {
	t.Parallel()
	vars, db := opsDatabase(t)
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	scheduled := a.Event(t, eventfixture.Event{Status: invite.Scheduled})
	sent := a.Event(t, eventfixture.Event{Status: invite.Sent, SentAt: time.Now().Add(-time.Hour)})

	rfc3339 := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	for _, id := range []string{scheduled, sent} {
		out, err := opsCLI(t, vars, "invites", "show", id)
		require.NoError(t, err)
		assert.NotContains(t, out, "<nil>", id)
		assert.NotContains(t, out, "+0000 UTC", id)
		assert.Regexp(t, `(?m)^received\s+`+rfc3339+`$`, out, id)
		assert.Regexp(t, `(?m)^invite\.reason\s+-$`, out, id)
		assert.Regexp(t, `(?m)^invite\.lastError\s+-$`, out, id)
		for _, line := range strings.Split(out, "\n") {
			if m := regexp.MustCompile(`^invite\.(scheduledFor|sentAt)\s+(\S.*)$`).FindStringSubmatch(line); m != nil && m[2] != "-" {
				_, err := time.Parse(time.RFC3339, m[2])
				assert.NoError(t, err, "%s: %s", id, line)
				assert.Regexp(t, `^`+rfc3339+`$`, m[2], line)
			}
		}
	}
	out, err := opsCLI(t, vars, "invites", "show", sent)
	require.NoError(t, err)
	assert.Regexp(t, `(?m)^invite\.sentAt\s+`+rfc3339+`$`, out, "a sent invite shows when")
}
