// Package webhookstack holds the end-to-end tests of webhooks
// (docs/webhooks.md): the real API, starters and workers over a fresh PostgreSQL
// database and a Temporal server in a helper process
// (internal/testtemporal), delivering to HTTP receivers that verify every
// signature with the Standard Webhooks reference library; and a crash of a
// real `touchpoint worker` process between a state change and its
// delivery. It has no code of its own besides these tests.
package webhookstack
