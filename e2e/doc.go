// Package e2e holds no code. Its tests run Touchpoint as it runs in
// production — `touchpoint auth`, two `touchpoint api` and two
// `touchpoint worker` processes of the real binary, a Temporal server that
// keeps its state in PostgreSQL, PostgreSQL itself and an SMTP server —
// and do to it what production does: kill processes mid-flight, and stop
// them with SIGTERM under load behind a load balancer.
//
// The test process links neither the touchpoint binary nor the Temporal
// server (both run as child processes), so it builds in seconds and runs
// under the race detector in `make test`.
package e2e
