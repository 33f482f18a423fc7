package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/webhook"
)

var wildcard = regexp.MustCompile(`\{[a-zA-Z]+\}`)

// TestEveryRouteChecksItsRole sends every route of the console as a
// person of every role, with a valid session token from the console's
// own origin: it is refused (403) exactly when package people's table
// says the role may not do the route's action. Every action a route
// names is in that table, so a new page cannot forget its role.
func TestEveryRouteChecksItsRole(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	st := storeset.New(db, "P7D")
	acc := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close)
	const csrf = "csrf-token-of-the-session"
	lib, err := templates.Load()
	require.NoError(t, err)
	secrets, err := webhook.NewSecretBox(make([]byte, 32))
	require.NoError(t, err)
	for _, role := range people.Roles() {
		h, err := New(Options{BaseURL: srv.URL, Invites: st.Invites, Accounts: st.Accounts, Stats: st.Stats, Webhooks: st.Webhooks, Reviews: st.Reviews,
			Suppressions: st.Suppressions, TemplateStore: st.Templates, Reports: st.Reports, Templates: lib, WebhookSecrets: secrets, Allows: Allows,
			SignedIn: func(http.ResponseWriter, *http.Request) (Person, bool) {
				return Person{ID: "usr-00000000-0000-4000-8000-000000000001", AccountID: acc.AccountID, Email: "p@shop.example",
					Role: string(role), CSRFToken: csrf}, true
			}})
		require.NoError(t, err)
		srv.Config.Handler = h
		routes := h.routes()
		require.NotEmpty(t, routes)
		for _, rt := range routes {
			_, known := people.MinRole(people.Action(rt.action))
			require.True(t, known, "%s %s names the action %q, which people's table does not know", rt.method, rt.path, rt.action)
			path := strings.TrimSuffix(Prefix, "/") + strings.ReplaceAll(wildcard.ReplaceAllString(rt.path, "x-00000000-0000-4000-8000-000000000000"), "{$}", "")
			var body *strings.Reader
			if rt.method == http.MethodGet {
				body = strings.NewReader("")
			} else {
				body = strings.NewReader(url.Values{csrfField: {csrf}}.Encode())
			}
			req, err := http.NewRequest(rt.method, srv.URL+path, body)
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", srv.URL)
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			res, err := client.Do(req)
			require.NoError(t, err)
			res.Body.Close()
			allowed := people.Allows(role, people.Action(rt.action))
			assert.Equal(t, !allowed, res.StatusCode == http.StatusForbidden, "%s %s as %s: %d", rt.method, rt.path, role, res.StatusCode)
		}
	}
}
