package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/freeport"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/temporalclient"
)

// devChild is a `touchpoint dev` that bench started and stops.
type devChild struct {
	*child
	vars           map[string]string // its environment, for the API process beside it
	dataDir        string
	server, dbName string // the temporary database and its server's URL
	target         Target
}

// devBanner is the line of dev's banner with the seeded credentials.
var devBanner = regexp.MustCompile(`export CLIENT_ID=(\S+) CLIENT_SECRET=(\S+) CHANNEL_ID=(\S+)`)

// startDevChild starts `exe dev` with a fresh database on the server of
// serverURL (default: the configuration's default) and waits for its
// banner. logLevel is the child's TOUCHPOINT_LOG_LEVEL, dbMaxConns its
// TOUCHPOINT_DB_MAX_CONNS (0: its default); with profiles it serves Go's
// profiles on its metrics address (TOUCHPOINT_PPROF).
func startDevChild(ctx context.Context, exe, serverURL, logLevel string, dbMaxConns int, profiles bool) (*devChild, error) {
	if serverURL == "" {
		serverURL = config.Defaults().DatabaseURL
	}
	d := &devChild{server: serverURL, dbName: "touchpoint_bench_" + benchRunID()}
	err := d.prepare(ctx, logLevel)
	if err == nil && dbMaxConns > 0 {
		d.vars["TOUCHPOINT_DB_MAX_CONNS"] = strconv.Itoa(dbMaxConns) // the API beside dev too
	}
	if err == nil && profiles {
		d.vars["TOUCHPOINT_PPROF"] = "true"
	}
	if err == nil {
		d.child, err = startChild(exe, "dev", d.vars)
	}
	if err == nil {
		err = d.awaitBanner(ctx)
	}
	if err != nil {
		return nil, errors.Join(err, d.stop())
	}
	return d, nil
}

// prepare makes the data dir and the database and the child's
// configuration, on free ports. The secret key is bench's, so that an API
// process beside dev shares it.
func (d *devChild) prepare(ctx context.Context, logLevel string) error {
	dir, err := os.MkdirTemp("", "touchpoint-bench-")
	if err != nil {
		return err
	}
	d.dataDir = dir
	dbURL, err := store.DatabaseURL(d.server, d.dbName)
	if err != nil {
		return err
	}
	if err := store.EnsureDatabase(ctx, dbURL); err != nil {
		return err
	}
	addrs, err := benchFreeAddrs(5)
	if err != nil {
		return err
	}
	d.target = Target{BaseURL: "http://" + addrs[0], AuthURL: "http://" + addrs[1],
		DatabaseURL: dbURL, Temporal: temporalclient.Plain(addrs[2], "default")}
	d.vars = map[string]string{
		"DATABASE_URL":                    dbURL,
		"TEMPORAL_ADDRESS":                addrs[2],
		"TOUCHPOINT_API_ADDR":             addrs[0],
		"TOUCHPOINT_AUTH_ADDR":            addrs[1],
		"TOUCHPOINT_BASE_URL":             d.target.BaseURL,
		"TOUCHPOINT_AUTH_URL":             d.target.AuthURL,
		"TOUCHPOINT_TEMPORAL_UI_ADDR":     addrs[3],
		"TOUCHPOINT_METRICS_ADDR":         addrs[4],
		"TOUCHPOINT_DATA_DIR":             dir,
		"TOUCHPOINT_DEFAULT_INVITE_DELAY": "PT0S",
		"TOUCHPOINT_RATE_LIMIT":           "1000000",
		"TOUCHPOINT_RATE_BURST":           "1000000",
		"TOUCHPOINT_DAILY_SEND_QUOTA":     "0", // a run sends more than a tenant's daily quota
		"TOUCHPOINT_RECIPIENT_DAILY_CAP":  "0",
		"TOUCHPOINT_DAILY_EVENT_QUOTA":    "0", // a backfill accepts more than a tenant's daily quota
		"TOUCHPOINT_LOG_LEVEL":            logLevel,
		"TOUCHPOINT_SECRET_KEY":           rand.Text() + rand.Text(), // 256 random bits; the key must have at least 32 characters
		// The capacity mix posts the mail provider's reports, and spreads
		// them and the customers over addresses of their own.
		"TOUCHPOINT_POSTMARK_WEBHOOK_USER":     "bench",
		"TOUCHPOINT_POSTMARK_WEBHOOK_PASSWORD": rand.Text(),
		"TOUCHPOINT_TRUSTED_PROXIES":           "127.0.0.1/32",
	}
	return nil
}

// awaitBanner waits until dev has printed its credentials.
func (d *devChild) awaitBanner(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(3 * time.Minute)
	for {
		if m := devBanner.FindStringSubmatch(d.out.String()); m != nil {
			d.target.ClientID, d.target.ClientSecret, d.target.ChannelID = m[1], m[2], m[3]
			return nil
		}
		select {
		case <-d.done:
			return fmt.Errorf("touchpoint dev exited (%v) before it was ready; its output ends:\n%s", d.cmd.ProcessState, d.logs)
		case <-deadline:
			return fmt.Errorf("touchpoint dev not ready within 3 minutes; its output ends:\n%s", d.logs)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// apiChild is a `touchpoint api` that bench started beside dev, so that
// the memory of the API alone can be told apart from dev's, which holds
// the embedded Temporal server too.
type apiChild struct {
	*child
	baseURL string
}

// startAPI starts `exe api` beside d: d's database, Temporal, issuer,
// secret key and limits, its own port, no metrics listener. Its base URL
// (the audience of tokens and the root of links) stays d's, so d's tokens
// are good for it. It returns once the API answers GET /readyz with 200.
func (d *devChild) startAPI(ctx context.Context, exe string) (*apiChild, error) {
	addrs, err := benchFreeAddrs(1)
	if err != nil {
		return nil, err
	}
	vars := maps.Clone(d.vars)
	vars["TOUCHPOINT_API_ADDR"], vars["TOUCHPOINT_METRICS_ADDR"] = addrs[0], ""
	c, err := startChild(exe, "api", vars)
	if err != nil {
		return nil, err
	}
	a := &apiChild{child: c, baseURL: "http://" + addrs[0]}
	if err := a.awaitReady(ctx); err != nil {
		return nil, errors.Join(err, a.terminate())
	}
	return a, nil
}

// awaitReady waits until the API answers GET /readyz with 200.
func (a *apiChild) awaitReady(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.baseURL+"/readyz", nil)
		if err != nil {
			return err
		}
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-a.done:
			return fmt.Errorf("%s exited (%v) before it was ready; its output ends:\n%s", a.name, a.cmd.ProcessState, a.logs)
		case <-deadline:
			return fmt.Errorf("%s not ready within a minute; its output ends:\n%s", a.name, a.logs)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// stop ends the child with SIGTERM (SIGKILL after 30 s) and removes its
// data dir and database.
func (d *devChild) stop() error {
	var errs []error
	if d.child != nil {
		errs = append(errs, d.terminate())
	}
	if d.dataDir != "" {
		errs = append(errs, os.RemoveAll(d.dataDir))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs = append(errs, store.DropDatabase(ctx, d.server, d.dbName))
	return errors.Join(errs...)
}

// benchFreeAddrs returns n 127.0.0.1 addresses with free ports, kept from
// other picks (the embedded Temporal server's among them) until the
// children bind them (freeport).
func benchFreeAddrs(n int) ([]string, error) { return freeport.Addrs(n) }
