package console_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/touchpoint/touchpoint/console"
	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/webhook"
)

// site is the console served as the API serves it, over a real store,
// with people of two accounts. Who a request is made by is a cookie the
// test sets (testCookie), standing in for the session.
type site struct {
	*httptest.Server
	db      *sqlx.DB
	st      *store.Store
	h       *console.Handler
	a, b    *eventfixture.Account // two accounts
	people  map[string]console.Person
	actions []console.Action // every action a guard was asked about
	secrets *webhook.SecretBox
	ps      *persondb.Store
}

const testCookie = "test_person"

// The people of the test: an owner, an editor and a viewer of account a,
// and an owner of account b.
const (
	ownerA  = "usr-00000000-0000-4000-8000-00000000000a"
	editorA = "usr-00000000-0000-4000-8000-00000000000e"
	viewerA = "usr-00000000-0000-4000-8000-00000000000f"
	ownerB  = "usr-00000000-0000-4000-8000-0000000000b0"
)

// roles is who may do what in the test: the rule as the console
// promises it to people (viewer reads; editor also answers, reports,
// edits templates, sends tests, cancels and retries invites, retries and
// replays webhook deliveries; owner everything).
var roles = map[console.Action]string{
	console.Read: "viewer", console.ChooseLanguage: "viewer", console.ReplyReview: "editor", console.ReportReview: "editor", console.EditTemplates: "editor",
	console.SendTest: "editor", console.CancelInvite: "editor", console.RetryInvite: "editor", console.RetryWebhook: "editor",
	console.ReplayWebhook: "editor", console.ManagePeople: "owner", console.ManageClients: "owner", console.ManageWebhooks: "owner",
	console.EditBranding: "owner", console.EditSettings: "owner", console.Suppress: "owner", console.Unsuppress: "owner",
}

func allows(role string, a console.Action) bool {
	rank := map[string]int{"viewer": 1, "editor": 2, "owner": 3}
	need, ok := roles[a]
	return ok && rank[role] >= rank[need] && rank[role] > 0
}

func newSite(t *testing.T, configure ...func(*console.Options)) *site {
	t.Helper()
	db := testdb.New(t)
	s := &site{db: db, st: storeset.New(db, "PT0S")}
	s.ps = persondb.New(pg.NewDB(db))
	s.a = eventfixture.NewAccount(t, db, eventfixture.Setting{})
	s.b = eventfixture.NewAccount(t, db, eventfixture.Setting{})
	s.people = map[string]console.Person{
		ownerA:  {ID: ownerA, AccountID: s.a.AccountID, Email: "owner@shop-a.example", Role: "owner", CSRFToken: "csrf-owner-a"},
		editorA: {ID: editorA, AccountID: s.a.AccountID, Email: "editor@shop-a.example", Role: "editor", CSRFToken: "csrf-editor-a"},
		viewerA: {ID: viewerA, AccountID: s.a.AccountID, Email: "viewer@shop-a.example", Role: "viewer", CSRFToken: "csrf-viewer-a"},
		ownerB:  {ID: ownerB, AccountID: s.b.AccountID, Email: "owner@shop-b.example", Role: "owner", CSRFToken: "csrf-owner-b"},
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.h.ServeHTTP(w, r) }))
	t.Cleanup(s.Close)
	lib, err := templates.Load()
	require.NoError(t, err)
	s.secrets, err = webhook.NewSecretBox(make([]byte, 32))
	require.NoError(t, err)
	opts := console.Options{BaseURL: s.URL, Invites: s.st.Invites, Accounts: s.st.Accounts, Stats: s.st.Stats, Webhooks: s.st.Webhooks, Reviews: s.st.Reviews,
		Suppressions: s.st.Suppressions, TemplateStore: s.st.Templates, Reports: s.st.Reports, WebhookSecrets: s.secrets, SignOutPath: "/console/sign-out", Templates: lib,
		SampleFeedbackURL:    "https://touchpoint.example/feedback?event=evt-00000000-0000-4000-8000-000000000000&sig=sample",
		SampleUnsubscribeURL: "https://touchpoint.example/unsubscribe?event=evt-00000000-0000-4000-8000-000000000000&sig=sample",
		SignedIn: func(w http.ResponseWriter, r *http.Request) (console.Person, bool) {
			c, err := r.Cookie(testCookie)
			if err != nil {
				http.Error(w, "sign in first", http.StatusUnauthorized)
				return console.Person{}, false
			}
			p, ok := s.people[c.Value]
			if !ok {
				http.Error(w, "sign in first", http.StatusUnauthorized)
			}
			return p, ok
		},
		Allows: func(role string, a console.Action) bool {
			s.actions = append(s.actions, a)
			return allows(role, a)
		},
		People: directory(s.people), Clients: s.st.Auth, PeopleStore: s.ps,
		NewClientSecret: func() (string, []byte) { return "secret-" + store.NewID("x"), []byte("hash") },
		Report:          func(r *http.Request, err error) { t.Logf("console: %s %s: %v", r.Method, r.URL.Path, err) },
	}
	for _, c := range configure {
		c(&opts)
	}
	s.h, err = console.New(opts)
	require.NoError(t, err)
	return s
}

// directory names the test's people.
type directory map[string]console.Person

func (d directory) Emails(_ context.Context, accountID string, ids []string) (map[string]string, error) {
	out := map[string]string{}
	for _, id := range ids {
		if p, ok := d[id]; ok && p.AccountID == accountID {
			out[id] = p.Email
		}
	}
	return out, nil
}

// answer is a page as the test got it.
type answer struct {
	status int
	header http.Header
	body   string
	doc    *html.Node
}

// get loads a page of the console as the person.
func (s *site) get(t *testing.T, person, path string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return s.do(t, person, req)
}

// post sends a form of the console as the person would: from the
// console's origin, with their CSRF token, unless the form says
// otherwise (csrf_token in form replaces it; origin "" leaves it out).
func (s *site) post(t *testing.T, person, path string, form url.Values, origin ...string) answer {
	t.Helper()
	body := url.Values{}
	if p, ok := s.people[person]; ok {
		body.Set("csrf_token", p.CSRFToken)
	}
	for k, v := range form {
		body[k] = v
	}
	req, err := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	o := s.URL
	if len(origin) > 0 {
		o = origin[0]
	}
	if o != "" {
		req.Header.Set("Origin", o)
	}
	return s.do(t, person, req)
}

func (s *site) do(t *testing.T, person string, req *http.Request) answer {
	t.Helper()
	if person != "" {
		req.AddCookie(&http.Cookie{Name: testCookie, Value: person})
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout: 30 * time.Second}
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	a := answer{status: res.StatusCode, header: res.Header, body: string(b)}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		a.doc, err = html.Parse(strings.NewReader(a.body))
		require.NoError(t, err)
	}
	return a
}

// elements are the elements of the page for which match is true.
func (a answer) elements(match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	if a.doc == nil {
		return nil
	}
	for n := range a.doc.Descendants() {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
	}
	return out
}

// byID is the element with the id, or nil.
func (a answer) byID(id string) *html.Node {
	for _, n := range a.elements(func(n *html.Node) bool { return attr(n, "id") == id }) {
		return n
	}
	return nil
}

// tagged are the elements with the tag name.
func (a answer) tagged(tag string) []*html.Node {
	return a.elements(func(n *html.Node) bool { return n.Data == tag })
}

// text is the element's text, with runs of white space made one space.
func text(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
			b.WriteString(" ")
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

// rows are the cells' texts of a table's body rows.
func rows(table *html.Node) [][]string {
	var out [][]string
	for tr := range table.Descendants() {
		if tr.Type != html.ElementNode || tr.Data != "tr" || tr.Parent == nil || tr.Parent.Data != "tbody" {
			continue
		}
		var row []string
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th") {
				row = append(row, text(c))
			}
		}
		out = append(out, row)
	}
	return out
}

// location is where a redirect sends the browser, below the server.
func (a answer) location() string {
	return a.header.Get("Location")
}

type htmlNode = html.Node
