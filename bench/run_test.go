package bench

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testbin"
	"github.com/touchpoint/touchpoint/internal/testdb"
)

// TestRun runs the bench of `touchpoint bench --baseline` with tiny
// numbers against a `touchpoint dev` it starts itself — the real binary —
// and checks its JSON line.
func TestRun(t *testing.T) {
	t.Parallel()
	profiles := t.TempDir()
	r := runOnDev(t, "--events", "20", "--concurrency", "4", "--baseline", "--profile", profiles,
		"--batch-events", "100", "--batch-sizes", "1,50", "--batch-concurrency", "2", "--backfill", "1200", "--drain-sample", "300")
	for _, name := range []string{"dev-cpu.pprof", "dev-block.pprof", "dev-mutex.pprof"} {
		f, err := os.Open(filepath.Join(profiles, name))
		require.NoError(t, err)
		z, err := gzip.NewReader(f) // a profile is gzipped protobuf
		require.NoError(t, err, name)
		raw, err := io.ReadAll(z)
		require.NoError(t, err, name)
		assert.NotEmpty(t, raw, name)
		f.Close()
	}
	raw, err := json.Marshal(r)
	require.NoError(t, err)
	var res map[string]any
	require.NoError(t, json.Unmarshal(raw, &res))
	for _, k := range []string{"events", "concurrency", "accepted_per_s", "accept_p50_ms", "accept_p95_ms",
		"accept_p99_ms", "invites_sent", "invites_per_s", "invite_latency_p50_ms", "invite_latency_p99_ms",
		"invite_lag_max_ms", "errors", "peak_rss_mb", "baseline", "ratios"} {
		assert.Contains(t, res, k)
	}
	assert.EqualValues(t, 20, res["events"])
	assert.EqualValues(t, 4, res["concurrency"])
	assert.EqualValues(t, 20, res["accepted"], "every event accepted")
	assert.EqualValues(t, 20, res["invites_sent"], "every invite sent")
	assert.Equal(t, map[string]any{"503": 0.0}, res["errors"])
	assert.Positive(t, res["peak_rss_mb"])
	assert.GreaterOrEqual(t, res["invite_lag_max_ms"], res["invite_latency_p99_ms"], "the largest lag is the slowest invite")
	// bench's invites are sent at once and have no reminder: a start, the
	// markers of two workflow tasks, the send activity, the status and the
	// one version's TemporalChangeVersion upserts, by the server's metric.
	actions, _ := res["temporal_actions"].(map[string]any)
	assert.InDelta(t, 6, actions["per_invite"], 0.5, "Temporal Actions per invite: %v", actions)
	baseline, _ := res["baseline"].(map[string]any)
	for _, k := range []string{"inserts_per_s", "insert_p99_ms", "inserts_under_load_per_s", "insert_under_load_p99_ms", "workflow_starts_per_s", "workflow_completions_per_s"} {
		assert.Positive(t, baseline[k], k)
	}
	ratios, _ := res["ratios"].(map[string]any)
	assert.Positive(t, ratios["accepted_vs_inserts"])
	assert.Positive(t, ratios["accepted_vs_inserts_under_load"])
	assert.Positive(t, ratios["invites_vs_completions"])

	batch, _ := res["batch"].(map[string]any)
	assert.EqualValues(t, 2, batch["concurrency"])
	sizes, _ := batch["sizes"].([]any)
	require.Len(t, sizes, 2)
	for i, size := range []float64{1, 50} {
		s, _ := sizes[i].(map[string]any)
		assert.Equal(t, size, s["size"])
		assert.EqualValues(t, 100, s["accepted"], "every batch event accepted")
		assert.Equal(t, map[string]any{"503": 0.0}, s["errors"])
		for _, k := range []string{"accepted_per_s", "p50_ms", "p99_ms", "copy_per_s", "copy_p99_ms", "accepted_vs_copy"} {
			assert.Positive(t, s[k], "size %v: %s", size, k)
		}
	}
	backfill, _ := batch["backfill"].(map[string]any)
	assert.EqualValues(t, 1200, backfill["events"])
	assert.EqualValues(t, 1200, backfill["accepted"])
	assert.EqualValues(t, 2, backfill["starters"], "dev's starter and the API process's")
	for _, k := range []string{"accepted_per_s", "drain_per_s", "api_peak_rss_mb", "dev_peak_rss_mb"} {
		assert.Positive(t, backfill[k], k)
	}
	assert.Less(t, backfill["api_peak_rss_mb"], backfill["dev_peak_rss_mb"], "the API process holds no Temporal server")
	if backlog := backfill["backlog"].(float64); backlog > 300 {
		assert.EqualValues(t, 300, backfill["drained"], "the sample")
	} else {
		assert.Equal(t, backlog, backfill["drained"], "the whole backlog")
	}
	if backfill["backlog"].(float64) > 0 {
		assert.Positive(t, backfill["bare_starts_per_s"])
		assert.Positive(t, backfill["drain_vs_starts"])
	}
}

// TestRunWithAReminder checks the Actions budget of an invite with its
// reminder on a live stack, by the server's `action` metric, as TestRun
// does without one: bench's invites are sent at once, so a run costs what
// fewer_actions_reminder_sent costs less its first timer — by the metric
// 8 (7 billed), within the budget of 9.
func TestRunWithAReminder(t *testing.T) {
	t.Parallel()
	r := runOnDev(t, "--events", "10", "--concurrency", "2", "--batch-events", "0", "--reminder", "PT1S")
	assert.Equal(t, 10, r.InvitesSent)
	require.NotNil(t, r.Actions)
	t.Logf("Temporal Actions: %+v", *r.Actions)
	assert.InDelta(t, 8, r.Actions.PerInvite, 0.5, "Temporal Actions per invite and its reminder: %+v", r.Actions)
	assert.Equal(t, int64(20), r.Actions.ByType["command_ScheduleActivityTask"], "a send activity for each invite and each reminder: %+v", r.Actions)
	assert.Equal(t, int64(10), r.Actions.ByType["command_StartTimer"], "the reminders' timers: %+v", r.Actions)
}

// runOnDev runs bench with args against a `touchpoint dev` it starts from
// the binary of this checkout.
func runOnDev(t *testing.T, args ...string) *Result {
	t.Helper()
	o, err := ParseFlags(args, func(k string) string {
		return map[string]string{"DATABASE_URL": testdb.ServerURL(), "TOUCHPOINT_DB_MAX_CONNS": strconv.Itoa(testdb.ProcessMaxConns)}[k]
	}, &bytes.Buffer{})
	require.NoError(t, err)
	o.Executable = testbin.Touchpoint(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	r, err := Run(ctx, o)
	require.NoError(t, err)
	return r
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	env := map[string]string{"CLIENT_ID": "cid", "CLIENT_SECRET": "sec", "CHANNEL_ID": "chl-1", "DATABASE_URL": "postgres://db",
		"TEMPORAL_ADDRESS": "t:7233", "TEMPORAL_NAMESPACE": "shop", "TEMPORAL_CONFIG_FILE": filepath.Join(t.TempDir(), "absent.toml")}
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string // over env
		wantErr string
		check   func(t *testing.T, o Options)
	}{
		{name: "defaults", check: func(t *testing.T, o Options) {
			assert.Equal(t, 1000, o.Events)
			assert.Equal(t, 32, o.Concurrency)
			assert.False(t, o.Baseline)
			assert.Equal(t, 10*time.Minute, o.Timeout)
			assert.Equal(t, []int{1, 50, 500}, o.BatchSizes)
			assert.Equal(t, 0, o.Backfill)
			assert.Equal(t, Target{ClientID: "cid", ClientSecret: "sec", ChannelID: "chl-1", DatabaseURL: "postgres://db"}, o.Target,
				"bench starts dev, whose Temporal it dials")
		}},
		{name: "a running stack", args: []string{"--base-url", "http://api", "--auth-url", "http://auth", "--baseline"},
			check: func(t *testing.T, o Options) {
				assert.Equal(t, "http://api", o.Target.BaseURL)
				assert.True(t, o.Baseline)
				assert.Equal(t, "t:7233", o.Target.Temporal.Address(), "Temporal's own configuration")
				assert.Equal(t, "shop", o.Target.Temporal.Namespace())
			}},
		{name: "Temporal flags over the configuration", args: []string{"--base-url", "http://api", "--auth-url", "http://auth",
			"--temporal-address", "other:7233", "--temporal-namespace", "bench"},
			check: func(t *testing.T, o Options) {
				assert.Equal(t, "other:7233", o.Target.Temporal.Address())
				assert.Equal(t, "bench", o.Target.Temporal.Namespace())
			}},
		{name: "Temporal's configuration is checked", args: []string{"--base-url", "http://api", "--auth-url", "http://auth",
			"--temporal-address", "x:7233"}, env: map[string]string{"TEMPORAL_TLS_CLIENT_CERT_PATH": "/nonexistent/c.pem",
			"TEMPORAL_TLS_CLIENT_KEY_PATH": "/nonexistent/c.key"}, wantErr: "/nonexistent/c.pem"},
		{name: "batch sizes", args: []string{"--batch-sizes", "500, 7", "--backfill", "10", "--api-executable", "bin/touchpoint-prod"},
			check: func(t *testing.T, o Options) {
				assert.Equal(t, []int{500, 7}, o.BatchSizes)
				assert.Equal(t, 5000, o.BatchEvents)
				assert.Equal(t, 8, o.BatchConcurrency)
				assert.Equal(t, 10, o.Backfill)
				assert.Equal(t, "bin/touchpoint-prod", o.APIExecutable)
				assert.Equal(t, 20000, o.DrainSample)
			}},
		{name: "a batch too large", args: []string{"--batch-sizes", "501"}, wantErr: "not a size from 1 to 500"},
		{name: "a reminder", args: []string{"--reminder", "PT1S"}, check: func(t *testing.T, o Options) {
			assert.Equal(t, "PT1S", o.Reminder)
		}},
		{name: "the children's pool", env: map[string]string{"TOUCHPOINT_DB_MAX_CONNS": "4"}, check: func(t *testing.T, o Options) {
			assert.Equal(t, 4, o.DBMaxConns)
		}},
		{name: "a pool too small", env: map[string]string{"TOUCHPOINT_DB_MAX_CONNS": "1"}, wantErr: "TOUCHPOINT_DB_MAX_CONNS"},
		{name: "a reminder that is no delay", args: []string{"--reminder", "1s"}, wantErr: `--reminder: "1s" is not an ISO 8601 duration`},
		{name: "no events", args: []string{"--events", "0"}, wantErr: "--events and --concurrency must be at least 1"},
		{name: "a negative drain sample", args: []string{"--drain-sample", "-1"}, wantErr: "must not be negative"},
		{name: "base URL alone", args: []string{"--base-url", "http://api"}, wantErr: "--base-url needs --auth-url"},
		{name: "profiles of a stack bench did not start", args: []string{"--base-url", "http://api", "--profile", "/tmp/p"}, wantErr: "--profile profiles the dev that bench starts"},
		{name: "baseline without a database", args: []string{"--base-url", "http://api", "--auth-url", "http://auth", "--baseline"},
			env: map[string]string{"DATABASE_URL": ""}, wantErr: "--baseline against --base-url needs --database-url"},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "flag provided but not defined"},
		{name: "capacity on dev", args: []string{"--capacity"}, check: func(t *testing.T, o Options) {
			assert.True(t, o.Capacity.On)
			assert.Equal(t, 0.3, o.Capacity.ReminderShare)
			assert.Equal(t, 0.15, o.Capacity.ReviewShare)
			assert.Equal(t, "docs/capacity.md", o.Capacity.Doc)
		}},
		{name: "capacity against a running stack", args: []string{"--capacity", "--base-url", "http://api", "--auth-url", "http://auth",
			"--api-metrics", "http://a1/metrics, http://a2/metrics", "--worker-metrics", "http://w1/metrics",
			"--temporal-metrics", "http://t/metrics", "--postgres-pid", "42", "--secret-key", "k", "--postmark-user", "u",
			"--postmark-password", "p", "--load-note", "Quiet.", "--reminder-share", "0.5"},
			check: func(t *testing.T, o Options) {
				c := o.Capacity
				assert.Equal(t, []string{"http://a1/metrics", "http://a2/metrics"}, c.APIMetrics)
				assert.Equal(t, []string{"http://w1/metrics"}, c.WorkerMetrics)
				assert.Equal(t, "http://t/metrics", c.TemporalMetrics)
				assert.Equal(t, 42, c.PostgresPID)
				assert.Equal(t, "Quiet.", c.LoadNote)
				assert.Equal(t, 0.5, c.ReminderShare)
				assert.Equal(t, [2]string{"u", "p"}, [2]string{c.PostmarkUser, c.PostmarkPassword})
			}},
		{name: "capacity against a stack without Temporal's metrics", args: []string{"--capacity", "--base-url", "http://api",
			"--auth-url", "http://auth", "--secret-key", "k"}, wantErr: "needs --temporal-metrics"},
		{name: "capacity against a stack without its secret key", args: []string{"--capacity", "--base-url", "http://api",
			"--auth-url", "http://auth", "--temporal-metrics", "http://t/metrics"}, wantErr: "needs the stack's secret key"},
		{name: "a share above one", args: []string{"--capacity", "--review-share", "1.5"}, wantErr: "shares from 0 to 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			o, err := ParseFlags(tc.args, func(k string) string {
				if v, ok := tc.env[k]; ok {
					return v
				}
				return env[k]
			}, &stderr)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			tc.check(t, o)
		})
	}
}

func TestRunNeedsAnExecutableWithoutABaseURL(t *testing.T) {
	t.Parallel()
	_, err := Run(context.Background(), Options{Events: 1, Concurrency: 1})
	require.ErrorContains(t, err, "no touchpoint executable")
}
