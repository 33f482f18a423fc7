package apiserver

import (
	"net/http"

	"github.com/touchpoint/touchpoint/internal/apiquery"
)

// query is the strict reader of a query string (apiquery) with the
// readers only the API's own routes use.
type query struct{ *apiquery.Query }

func parseQuery(r *http.Request, known ...string) *query {
	return &query{apiquery.Parse(r, known...)}
}
