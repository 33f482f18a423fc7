package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"flag"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/pgcluster"
)

var (
	capacityEvents      = flag.Int("capacity.events", 500, "BenchmarkCapacity: invites of the mix")
	capacityConcurrency = flag.Int("capacity.concurrency", 8, "BenchmarkCapacity: requests in flight at once")
	capacityDoc         = flag.String("capacity.doc", "../docs/capacity.md", "BenchmarkCapacity: where the capacity model goes")
	capacityLoadNote    = flag.String("capacity.load-note", "", "BenchmarkCapacity: the document's word on the machine's load (default: the load average read during the run)")
)

// BenchmarkCapacity runs `touchpoint bench --capacity` against the
// production topology of TestProductionTopology (auth, two APIs and two
// workers as processes, Temporal on PostgreSQL), with Touchpoint's
// database on a PostgreSQL server of its own, so that the WAL measured is
// Touchpoint's alone and the server's CPU is its work. Bench reads the
// CPU of the APIs and workers from their /metrics, the Actions from the
// Temporal server's, and writes docs/capacity.md.
//
//	go test ./e2e/ -run '^$' -bench Capacity -benchtime 1x [-capacity.events 500]
func BenchmarkCapacity(b *testing.B) {
	primary := pgcluster.Primary(b)
	admin, err := sqlx.Open("postgres", primary.URL("postgres"))
	require.NoError(b, err)
	_, err = admin.Exec(`CREATE DATABASE touchpoint`)
	admin.Close()
	require.NoError(b, err)
	postmark := rand.Text()
	s := startStack(b, stackVars{
		"DATABASE_URL": primary.URL("touchpoint"),
		// bench spreads its customers and reports over addresses of their
		// own, and takes the webhooks on 127.0.0.1.
		"TOUCHPOINT_TRUSTED_PROXIES":           "127.0.0.1/32",
		"TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE":     "true",
		"TOUCHPOINT_POSTMARK_WEBHOOK_USER":     "bench",
		"TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD": postmark,
	})
	doc, err := filepath.Abs(*capacityDoc)
	require.NoError(b, err)
	args := []string{"bench", "--capacity", "--events", strconv.Itoa(*capacityEvents),
		"--concurrency", strconv.Itoa(*capacityConcurrency),
		"--base-url", s.apiURL(0), "--auth-url", s.authURL,
		"--client-id", s.creds.ClientID, "--client-secret", s.creds.ClientSecret, "--channel-id", s.creds.ChannelID,
		"--database-url", s.env["DATABASE_URL"], "--secret-key", s.env["TOUCHPOINT_SECRET_KEY"],
		"--postmark-user", "bench", "--postmark-password", postmark,
		"--api-metrics", "http://" + s.apiMetrics[0] + "/metrics,http://" + s.apiMetrics[1] + "/metrics",
		"--worker-metrics", "http://" + s.workerAddr[0] + "/metrics,http://" + s.workerAddr[1] + "/metrics",
		"--temporal-metrics", s.temporal.MetricsURL(), "--postgres-pid", strconv.Itoa(primary.PID()),
		"--topology", "the production topology of the e2e tests (`touchpoint auth`, two `api` and two `worker` processes, " +
			"Temporal with its own PostgreSQL persistence, an SMTP server) on one machine, Touchpoint's database on a " +
			"PostgreSQL 15 server of its own there (fsync off, full-page writes on)",
		"--capacity-doc", doc, "--load-note", *capacityLoadNote}
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		cmd := exec.CommandContext(ctx, s.bin, args...)
		cmd.Env = s.childEnv(nil)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		require.NoError(b, err, "touchpoint bench --capacity:\n%s", stderr.String())
		b.Logf("touchpoint bench --capacity → %s\n%s", doc, out)
	}
}
