// Package httpmw is the plumbing every request of the API passes that
// knows nothing of what the API serves: the request id, one log line per
// request, the recovery of a panicking handler, and the reading of bodies
// within limits — a limit per body, and a budget of the bytes that
// requests hold at once. The API decides what goes into a request's log
// line and words every answer (apiserver); this package does the
// mechanics.
package httpmw
