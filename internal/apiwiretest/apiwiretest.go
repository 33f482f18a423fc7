// Package apiwiretest stands in for the API in the handler tests of the
// packages whose routes it mounts, so that they run without a server or a
// database: the caller is always client cli-1 of account acc-1, a body is
// decoded as plain JSON, and the error a handler fails with is kept for
// the test to look at.
package apiwiretest

import (
	"encoding/json"
	"net/http"
)

// API is an apiwire.API. Failed is the error the last failing handler
// answered with (as a 400); nil while none has failed.
type API struct{ Failed error }

// The caller of every request.
const (
	AccountID = "acc-1"
	ClientID  = "cli-1"
)

func (a *API) AccountID(*http.Request) string { return AccountID }
func (a *API) ClientID(*http.Request) string  { return ClientID }

// DecodeJSON decodes the body without the API's checks: they are the
// API's, tested there.
func (a *API) DecodeJSON(_ http.ResponseWriter, r *http.Request, dst any) error {
	return json.NewDecoder(r.Body).Decode(dst)
}

func (a *API) Fail(w http.ResponseWriter, _ *http.Request, err error) {
	a.Failed = err
	w.WriteHeader(http.StatusBadRequest)
}
