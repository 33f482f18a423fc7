package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

func TestServersNeedTheSecretKeyFromTheEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A key file as `touchpoint dev` leaves it: servers must not use it.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.key"), []byte(strings.Repeat("d", 64)+"\n"), 0o600))
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TOUCHPOINT_DATA_DIR": dir,
		"TOUCHPOINT_API_ADDR": "127.0.0.1:0", "TOUCHPOINT_AUTH_ADDR": "127.0.0.1:0", "TOUCHPOINT_SMTP_URL": "smtp://127.0.0.1:1"}
	for _, cmd := range []string{"api", "auth", "worker"} {
		t.Run(cmd, func(t *testing.T) {
			// Were the key file read, the server would start and run until
			// this deadline.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			env := &environment{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] },
				logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
			err := run(ctx, env, []string{cmd})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "TOUCHPOINT_SECRET_KEY: is not set")
			assert.Contains(t, err.Error(), "openssl rand -hex 32")
			assert.NoError(t, ctx.Err(), "it stopped at once")
		})
	}
}

func TestKeysCLI(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TOUCHPOINT_SECRET_KEY": adminSecretKey}
	_, err := runCLI(t, vars, "migrate", "--schema-only")
	require.NoError(t, err)
	listKeys := func() []authserver.KeyInfo {
		t.Helper()
		out, err := runCLI(t, vars, "keys", "list", "--json")
		require.NoError(t, err)
		var keys []authserver.KeyInfo
		require.NoError(t, json.Unmarshal([]byte(out), &keys))
		return keys
	}
	keys := listKeys()
	require.Len(t, keys, 1, "the first key is made on first use")
	first := keys[0]
	assert.Equal(t, authserver.KeySigning, first.State)

	out, err := runCLI(t, vars, "keys", "rotate", "--json")
	require.NoError(t, err)
	var rotated authserver.KeyInfo
	require.NoError(t, json.Unmarshal([]byte(out), &rotated))
	assert.Equal(t, authserver.KeyPending, rotated.State)
	assert.True(t, rotated.ActiveFrom.After(rotated.CreatedAt), "published before it signs")

	out, err = runCLI(t, vars, "keys", "list")
	require.NoError(t, err)
	assert.Contains(t, out, rotated.KID)
	assert.Contains(t, out, "pending")

	out, err = runCLI(t, vars, "keys", "retire", first.KID)
	require.NoError(t, err)
	assert.Contains(t, out, "retired")
	states := map[string]authserver.KeyState{}
	for _, k := range listKeys() {
		states[k.KID] = k.State
	}
	assert.Equal(t, map[string]authserver.KeyState{first.KID: authserver.KeyRetired, rotated.KID: authserver.KeySigning}, states,
		"retiring the signing key makes the pending one sign at once")

	for _, bad := range [][]string{{"keys"}, {"keys", "retire"}, {"keys", "retire", "no-such-kid"}, {"keys", "list", "extra"}, {"keys", "burn"}} {
		_, err := runCLI(t, vars, bad...)
		assert.Error(t, err, strings.Join(bad, " "))
	}
}

func TestAccountsSetQuotaCLI(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"DATABASE_URL": testdb.NewURL(t), "TOUCHPOINT_RECIPIENT_DAILY_CAP": "4"}
	_, err := runCLI(t, vars, "migrate", "--schema-only")
	require.NoError(t, err)
	out, err := runCLI(t, vars, "accounts", "create", "--name", "Acme", "--json")
	require.NoError(t, err)
	var acc struct{ AccountID string }
	require.NoError(t, json.Unmarshal([]byte(out), &acc))

	quotas := func(args ...string) accountdb.Quotas {
		t.Helper()
		out, err := runCLI(t, vars, append([]string{"accounts", "set-quota", "--account", acc.AccountID, "--json"}, args...)...)
		require.NoError(t, err)
		var q accountdb.Quotas
		require.NoError(t, json.Unmarshal([]byte(out), &q))
		return q
	}
	assert.Equal(t, accountdb.Quotas{DailySends: 10_000, RecipientDailyCap: 4, Channels: 100, EventTypes: 500,
		WebhookEndpoints: 20, DailyEvents: 200_000}, quotas(), "the defaults")
	assert.Equal(t, accountdb.Quotas{DailySends: 50_000, RecipientDailyCap: 0, Channels: 100, EventTypes: 20,
		WebhookEndpoints: 20, DailyEvents: 200_000},
		quotas("--daily-sends", "50000", "--recipient-daily-cap", "0", "--event-types", "20"))
	assert.Equal(t, accountdb.Quotas{DailySends: 50_000, RecipientDailyCap: 4, Channels: 100, EventTypes: 20,
		WebhookEndpoints: 20, DailyEvents: 200_000},
		quotas("--recipient-daily-cap", "default"))
	out, err = runCLI(t, vars, "accounts", "set-quota", "--account", acc.AccountID)
	require.NoError(t, err)
	assert.Contains(t, out, "50000")

	// accounts update sets them too, beside the branding or alone.
	out, err = runCLI(t, vars, "accounts", "update", "--account", acc.AccountID, "--daily-events", "1000",
		"--webhook-endpoints", "3", "--json")
	require.NoError(t, err)
	var updated struct{ Quotas accountdb.Quotas }
	require.NoError(t, json.Unmarshal([]byte(out), &updated), out)
	assert.Equal(t, accountdb.Quotas{DailySends: 50_000, RecipientDailyCap: 4, Channels: 100, EventTypes: 20,
		WebhookEndpoints: 3, DailyEvents: 1000}, updated.Quotas)
	out, err = runCLI(t, vars, "accounts", "update", "--account", acc.AccountID, "--display-name", "Acme Shop", "--daily-events", "default")
	require.NoError(t, err)
	assert.Contains(t, out, "Acme Shop")
	assert.Equal(t, 200_000, quotas().DailyEvents)

	for _, bad := range [][]string{
		{"accounts", "set-quota", "--account", acc.AccountID, "--daily-sends", "-1"},
		{"accounts", "set-quota", "--account", acc.AccountID, "--channels", "lots"},
		{"accounts", "update", "--account", acc.AccountID, "--daily-events", "-5"},
		{"accounts", "update", "--account", acc.AccountID},
		{"accounts", "set-quota", "--account", "acc-nope", "--channels", "1"},
		{"accounts", "set-quota", "--account", "acc-00000000-0000-0000-0000-000000000000", "--channels", "1"},
		{"accounts", "create", "--name", "Acme\r\nBcc: all@example.com"},
		{"accounts"},
	} {
		_, err := runCLI(t, vars, bad...)
		assert.Error(t, err, strings.Join(bad, " "))
	}
}
