package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// `touchpoint healthcheck URL` is for container health checks: the
// production image (distroless) has no shell, curl or wget, so the
// binary checks itself, e.g. in docker-compose.yml:
//
//	test: ["CMD", "/touchpoint", "healthcheck", "http://127.0.0.1:8080/readyz"]
const healthcheckUsage = "usage: touchpoint healthcheck [--timeout 5s] http://127.0.0.1:8080/healthz"

func (env *environment) runHealthcheck(ctx context.Context, args []string) error {
	fs := env.flags("healthcheck")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *timeout <= 0 {
		return errors.New(healthcheckUsage)
	}
	u, err := url.Parse(fs.Arg(0))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("healthcheck: %q is not an http(s) URL; %s", fs.Arg(0), healthcheckUsage)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	// No proxy from the environment and no redirects: the answer must come
	// from the process itself.
	client := &http.Client{
		Transport:     &http.Transport{},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("healthcheck: %s answered %s", u.Redacted(), resp.Status)
	}
	fmt.Fprintf(env.stdout, "%s: %s\n", u.Redacted(), resp.Status)
	return nil
}
