package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	benchEvents      = flag.Int("topology.events", 2000, "BenchmarkTopology: events posted by touchpoint bench")
	benchConcurrency = flag.Int("topology.concurrency", 32, "BenchmarkTopology: requests in flight at once")
)

// BenchmarkTopology runs `touchpoint bench --baseline` against the
// production topology of TestProductionTopology (auth, two APIs and two
// workers as processes, Temporal on PostgreSQL), nothing killed: bench
// posts to one API, both APIs' starters and both workers share the work.
// Bench reaches Temporal, for its baselines, through the same TEMPORAL_*
// configuration as the processes. It reports bench's figures; its JSON
// line is in the log.
//
//	go test ./e2e/ -run '^$' -bench Topology -benchtime 1x [-topology.events 2000]
func BenchmarkTopology(b *testing.B) {
	s := startStack(b, nil)
	args := []string{"bench", "--baseline", "--batch-events", "0",
		"--events", strconv.Itoa(*benchEvents), "--concurrency", strconv.Itoa(*benchConcurrency),
		"--base-url", s.apiURL(0), "--auth-url", s.authURL,
		"--client-id", s.creds.ClientID, "--client-secret", s.creds.ClientSecret, "--channel-id", s.creds.ChannelID,
		"--database-url", s.env["DATABASE_URL"]}
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		cmd := exec.CommandContext(ctx, s.bin, args...)
		cmd.Env = s.childEnv(nil)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		require.NoError(b, err, "touchpoint bench:\n%s", stderr.String())
		b.Logf("touchpoint %v\n%s", args, out)
		var res struct {
			AcceptedPerS float64 `json:"accepted_per_s"`
			AcceptP99MS  float64 `json:"accept_p99_ms"`
			InvitesPerS  float64 `json:"invites_per_s"`
			InvitesSent  int     `json:"invites_sent"`
			Ratios       struct {
				InvitesVsCompletions float64 `json:"invites_vs_completions"`
			} `json:"ratios"`
		}
		require.NoError(b, json.Unmarshal(out, &res))
		require.Equal(b, *benchEvents, res.InvitesSent, "every invite sent")
		b.ReportMetric(res.AcceptedPerS, "accepted/s")
		b.ReportMetric(res.AcceptP99MS, "accept-p99-ms")
		b.ReportMetric(res.InvitesPerS, "invites/s")
		b.ReportMetric(res.Ratios.InvitesVsCompletions, "invites/completions")
	}
}
