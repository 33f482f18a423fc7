package browsertest_test

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/browsertest"
)

const page = `<!DOCTYPE html><html lang="en"><title>t</title>
<body style="margin:0"><div style="height:1500px;background:#fff">
<input id="a" aria-label="a"><input id="b" aria-label="b"></div></body></html>`

func server(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestScreenshotShowsTheWholePage(t *testing.T) {
	b := browsertest.Start(t)
	srv := server(t)
	for _, width := range []int{360, 1280} {
		path := b.Screenshot(t, srv.URL, width)
		f, err := os.ReadFile(path)
		require.NoError(t, err)
		cfg, err := png.DecodeConfig(bytes.NewReader(f))
		require.NoError(t, err)
		assert.Equal(t, width, cfg.Width)
		assert.Equal(t, 1500, cfg.Height, "the whole page, not only the first screen")
	}
}

func TestTabDrivesTheKeyboard(t *testing.T) {
	b := browsertest.Start(t)
	srv := server(t)
	ctx := b.Tab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(srv.URL), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent("hi")))
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id`))
	require.NoError(t, err)
	assert.Equal(t, "b", id)
	v, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("b")))
	require.NoError(t, err)
	assert.Equal(t, "hi", v)
}

// TestMissingBrowser runs this test binary again without a browser: the
// browser test skips, or fails when the environment requires browsers.
func TestMissingBrowser(t *testing.T) {
	t.Parallel()
	if os.Getenv("BROWSERTEST_CHILD") != "" {
		browsertest.Start(t)
		t.Fatal("started a browser that does not exist")
	}
	for _, tc := range []struct {
		require bool
		wantErr bool
		want    string
	}{
		{require: false, wantErr: false, want: "--- SKIP: TestMissingBrowser"},
		{require: true, wantErr: true, want: "--- FAIL: TestMissingBrowser"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingBrowser$", "-test.v")
		cmd.Env = append(os.Environ(), "BROWSERTEST_CHILD=1", browsertest.EnvChromium+"=/nonexistent/chromium", browsertest.EnvRequire+"=")
		if tc.require {
			cmd.Env = append(cmd.Env, browsertest.EnvRequire+"=require")
		}
		out, err := cmd.CombinedOutput()
		assert.Equal(t, tc.wantErr, err != nil, "%s", out)
		assert.Contains(t, string(out), tc.want)
		assert.Contains(t, string(out), "BROWSER TEST NOT RUN")
	}
}

func TestNamesDoNotResolve(t *testing.T) {
	b := browsertest.Start(t)
	ctx := b.Tab(t)
	err := chromedp.Do(ctx, chromedp.Navigate("http://touchpoint-test.example/"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ERR_NAME_NOT_RESOLVED", "no name reaches a resolver")
}

func TestCapture(t *testing.T) {
	b := browsertest.Start(t)
	srv := server(t)
	ctx := b.Tab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(400, 300), chromedp.Navigate(srv.URL)))
	f, err := os.ReadFile(browsertest.Capture(t, ctx, "viewport"))
	require.NoError(t, err)
	cfg, err := png.DecodeConfig(bytes.NewReader(f))
	require.NoError(t, err)
	assert.Equal(t, [2]int{400, 300}, [2]int{cfg.Width, cfg.Height}, "the viewport, as it is")
}

// TestAxeFindsViolations: axe-core runs in the page and reports what it
// finds — an image without a text alternative, white text on white, a
// page wider than the viewport — in light and dark alike; a clean page
// has none.
func TestAxeFindsViolations(t *testing.T) {
	b := browsertest.Start(t)
	bad := `<!DOCTYPE html><html lang="en"><title>t</title><style>@media (prefers-color-scheme: dark){p{color:#303030 !important;background:#000}}</style>
<body><main><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="1" height="1"><p style="color:#b0b0b0">low contrast</p>
<div style="width:2000px">wide</div></main></body></html>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/bad" {
			fmt.Fprint(w, bad)
			return
		}
		fmt.Fprint(w, `<!DOCTYPE html><html lang="en"><title>t</title><body><main><h1>Fine</h1><p>All good.</p></main></body></html>`)
	}))
	t.Cleanup(srv.Close)
	for _, scheme := range []string{"light", "dark"} {
		tab := b.Tab(t)
		require.NoError(t, chromedp.Do(tab, browsertest.ColorScheme(scheme), chromedp.EmulateViewport(360, 640), chromedp.Navigate(srv.URL+"/bad")))
		var ids []string
		for _, v := range browsertest.Axe(t, tab) {
			ids = append(ids, v.ID)
		}
		assert.Contains(t, ids, "image-alt", scheme)
		assert.Contains(t, ids, "color-contrast", scheme)
		assert.Positive(t, browsertest.Eval[int](t, tab, browsertest.Overflow), scheme)

		require.NoError(t, chromedp.Do(tab, chromedp.Navigate(srv.URL+"/good")))
		assert.Empty(t, browsertest.Axe(t, tab), scheme)
		assert.Zero(t, browsertest.Eval[int](t, tab, browsertest.Overflow), scheme)
	}
}
