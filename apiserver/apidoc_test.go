package apiserver_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/apiserver"
)

// docOperation is a code span of docs/api.md that names an operation:
// "`GET /events/{id}`", "`DELETE /suppressions/{address}[?confirm=…]`",
// "`GET /events?type=&…`".
var docOperation = regexp.MustCompile("`(GET|POST|PUT|PATCH|DELETE) (/[^`?\\[ ]*)")

// TestAPIDocNamesEveryRoute: the Routes table of docs/api.md names every
// route of routes.go, as "`METHOD /path`", and no route that is not one.
func TestAPIDocNamesEveryRoute(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/api.md")
	require.NoError(t, err)
	doc := string(raw)
	start := strings.Index(doc, "\n## Routes\n")
	require.GreaterOrEqual(t, start, 0, "docs/api.md has a Routes section")
	table := doc[start+1:]
	if end := strings.Index(table[1:], "\n## "); end >= 0 {
		table = table[:end+1]
	}
	named := map[string]bool{}
	for _, m := range docOperation.FindAllStringSubmatch(table, -1) {
		named[m[1]+" "+m[2]] = true
	}
	served := map[string]bool{}
	for _, r := range apiserver.Routes() {
		key := r.Method + " " + r.Path
		served[key] = true
		if !named[key] {
			t.Errorf("docs/api.md's Routes table does not name %s (write it as `%s`)", key, key)
		}
	}
	for key := range named {
		if !served[key] {
			t.Errorf("docs/api.md names %s, which routes.go does not serve", key)
		}
	}
}
