// Package recordhistory records the histories of real invite workflow
// runs into workflows/testdata, for the replay test that guards every
// change to the workflow (see the workflows package doc). It runs the
// workflow on a Temporal dev server in a helper process
// (internal/testtemporal) with the real activities, PostgreSQL and an SMTP
// test server:
//
//	go test -tags record -count=1 ./internal/recordhistory/
//
// The build tag keeps it out of ordinary test runs.
package recordhistory
