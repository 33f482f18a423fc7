package apiserver_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/console/signin"
	"github.com/touchpoint/touchpoint/internal/webform"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// TestConsoleIsMountedBelowItsPrefix: the console answers every path
// below /console/ itself, with no token; /console goes there.
func TestConsoleIsMountedBelowItsPrefix(t *testing.T) {
	t.Parallel()
	var paths []string
	e := newEnv(t, func(o *apiserver.Options) {
		o.Console = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			paths = append(paths, r.URL.Path)
			w.WriteHeader(http.StatusTeapot)
		})
	})
	for _, p := range []string{"/console/", "/console/reviews/rev-1", "/console/sign-in"} {
		assert.Equal(t, http.StatusTeapot, e.do(t, http.MethodGet, p, "", nil).status, p)
	}
	assert.Equal(t, []string{"/console/", "/console/reviews/rev-1", "/console/sign-in"}, paths)
	paths = nil
	assert.Equal(t, http.StatusTeapot, e.do(t, http.MethodGet, "/console", "", nil).status, "/console leads to /console/")
	assert.Equal(t, "/console/", paths[len(paths)-1])
	assert.Contains(t, e.logs.String(), `"route":"/console/"`, "console requests are logged like every request")
}

// TestConsoleTokensDoNotOpenTheAPI: a person's sign-in through the
// built-in issuer (the pages of its documented operations) ends in an ID
// token for the console; neither it nor the access token beside it opens
// the API, which takes only API clients' access tokens.
func TestConsoleTokensDoNotOpenTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := persondb.New(pg.NewDB(e.store.DB())).CreatePerson(context.Background(), people.Operator, e.account,
		"anna@shop.example", people.Owner)
	require.NoError(t, err)
	verifier := oauth2.GenerateVerifier()
	b := webform.New(t)
	page := b.Get(e.issuerURL + authserver.AuthorizePath + "?" + url.Values{"response_type": {"code"},
		"client_id": {signin.ClientID}, "redirect_uri": {testAudience + signin.CallbackPath}, "scope": {"openid email"},
		"state": {"s"}, "nonce": {"n"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)},
		"code_challenge_method": {"S256"}}.Encode())
	require.Equal(t, http.StatusOK, page.StatusCode)
	require.Equal(t, http.StatusOK, b.Submit(page, page.Form(t, authserver.AuthorizePath), map[string]string{"email": "anna@shop.example"}).StatusCode)
	var mails []string
	require.Eventually(t, func() bool {
		mails, _ = filepath.Glob(filepath.Join(e.outbox, "lnk-*.eml"))
		return len(mails) == 1
	}, 10*time.Second, 10*time.Millisecond)
	raw, err := os.ReadFile(mails[0])
	require.NoError(t, err)
	link := regexp.MustCompile(`https?://\S+/oauth/sign-in\?token=[A-Za-z0-9_-]{43}`).FindString(webform.MailText(t, raw))
	confirm := b.Get(link)
	require.Equal(t, http.StatusOK, confirm.StatusCode)
	back := b.Submit(confirm, confirm.Form(t, authserver.SignInPath), nil)
	require.Equal(t, http.StatusSeeOther, back.StatusCode)
	code := back.Location().Query().Get("code")

	status, tok := e.requestToken(t, url.Values{"grant_type": {"authorization_code"}, "client_id": {signin.ClientID},
		"code": {code}, "redirect_uri": {testAudience + signin.CallbackPath}, "code_verifier": {verifier}})
	require.Equal(t, http.StatusOK, status, "%v", tok)
	for _, name := range []string{"id_token", "access_token"} {
		r := e.do(t, http.MethodGet, "/channels", tok[name].(string), nil)
		assert.Equal(t, http.StatusUnauthorized, r.status, "the console's %s does not open the API", name)
	}
}
