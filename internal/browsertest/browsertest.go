// Package browsertest runs a real headless Chromium for tests: pages are
// loaded from a test server, driven with the keyboard, checked with
// scripts in the page and photographed.
//
// The browser is Debian's chromium (apt-get install chromium), driven
// with chromedp. It is started with the flags that keep it quiet on a
// closed network (no background networking, component updates or sync)
// and with every host name resolving to nothing but localhost, so a page
// under test can only reach servers on the loopback interface. It
// accepts any TLS certificate: tests serve https images from
// httptest.NewTLSServer.
//
// Without a browser the tests skip, loudly, unless the environment says
// TOUCHPOINT_BROWSER_TESTS=require (CI), where they fail.
package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/touchpoint/touchpoint/internal/syncbuf"
)

// Environment variables read by the package.
const (
	// EnvRequire set to "require" turns a missing browser from a skip
	// into a failure.
	EnvRequire = "TOUCHPOINT_BROWSER_TESTS"
	// EnvChromium names the browser binary; default: chromium (or
	// chromium-browser, google-chrome) on the PATH.
	EnvChromium = "TOUCHPOINT_CHROMIUM"
	// EnvScreenshots names a directory to keep screenshots in; default:
	// the test's t.TempDir().
	EnvScreenshots = "TOUCHPOINT_SCREENSHOT_DIR"
)

// TabTimeout bounds everything a test does in one tab.
const TabTimeout = 2 * time.Minute

// Browser is one running Chromium.
type Browser struct {
	ctx context.Context // the browser's first tab; new tabs derive from it

	mu    sync.Mutex
	names map[string]int // screenshot names used so far
}

// Path finds the browser binary: EnvChromium (when it names an
// executable), else the first of chromium, chromium-browser and
// google-chrome on the PATH; "" if none.
func Path() string {
	if p := os.Getenv(EnvChromium); p != "" {
		if found, err := exec.LookPath(p); err == nil {
			return found
		}
		return ""
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Start starts a browser for the test and stops it when the test ends.
// Without a browser it skips the test (failing it instead when EnvRequire
// is "require").
func Start(t testing.TB) *Browser {
	t.Helper()
	path := Path()
	if path == "" {
		msg := "BROWSER TEST NOT RUN: no chromium found (apt-get install chromium, or set " + EnvChromium + ")"
		if os.Getenv(EnvRequire) == "require" {
			t.Fatal(msg + "; " + EnvRequire + "=require")
		}
		t.Log("**************************************************************")
		t.Log(msg)
		t.Log("**************************************************************")
		t.Skip(msg)
	}
	output := syncbuf.Buffer{Max: 64 << 10} // its end, for an error message
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.IgnoreCertErrors,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,CertificateTransparencyComponentUpdater"),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("safebrowsing-disable-auto-update", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("font-render-hinting", "none"),
		chromedp.Flag("password-store", "basic"),
		// Every name resolves to nothing, except localhost and the
		// loopback addresses (IP literals are matched too): the page
		// cannot reach past the loopback interface.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1 , EXCLUDE [::1]"),
		chromedp.CombinedOutput(&output),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first action starts the browser, which lives as long as the
	// context of that action: ctx, not one with a deadline.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start %s: %v\n%s", path, err, output.String())
	}
	return &Browser{ctx: ctx, names: map[string]int{}}
}

// Tab opens a new tab for the test; it is closed when the test ends and
// every action in it must finish within TabTimeout.
func (b *Browser) Tab(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	ctx, cancelTimeout := context.WithTimeout(ctx, TabTimeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
	})
	return ctx
}

// Dir is where Screenshot saves: EnvScreenshots when set (created if
// needed), else the test's temporary directory.
func Dir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(EnvScreenshots)
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("screenshot dir: %v", err)
	}
	return dir
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Screenshot loads url in a new tab width CSS pixels wide and saves a
// PNG of the whole page in Dir, named after the test and the width. It
// returns the file's path.
func (b *Browser) Screenshot(t testing.TB, url string, width int) string {
	t.Helper()
	name := strings.Trim(unsafeName.ReplaceAllString(t.Name(), "-"), "-") + fmt.Sprintf("-%d", width)
	b.mu.Lock()
	b.names[name]++
	if n := b.names[name]; n > 1 {
		name += fmt.Sprintf("-%d", n)
	}
	b.mu.Unlock()
	path := filepath.Join(Dir(t), name+".png")
	b.ScreenshotTo(t, url, width, 1, path)
	return path
}

// ScreenshotTo is Screenshot to a given file, at a device scale factor
// (2 for a sharp phone picture).
func (b *Browser) ScreenshotTo(t testing.TB, url string, width int, scale float64, path string) {
	t.Helper()
	ctx := b.Tab(t)
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(int64(width), 800, chromedp.EmulateScale(scale)),
		chromedp.Navigate(url),
	); err != nil {
		t.Fatalf("load %s: %v", url, err)
	}
	// Grow the viewport to the page's height, so the picture shows the
	// whole page as a reader scrolling it would see it.
	height, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`Math.ceil(document.documentElement.scrollHeight)`))
	if err != nil {
		t.Fatalf("page height %s: %v", url, err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), max(height, 1), chromedp.EmulateScale(scale))); err != nil {
		t.Fatalf("resize for %s: %v", url, err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", url, err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot %s: not a PNG", url)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("save screenshot: %v", err)
	}
	t.Logf("screenshot %s at %dpx: %s", url, width, path)
}

// Capture saves a PNG of what a tab shows now (its viewport, at its
// current size) in Dir as name.png, and returns the file's path: a
// picture of a state reached by keyboard or clicks.
func Capture(t testing.TB, tab context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(tab, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("capture %s: %v", name, err)
	}
	path := filepath.Join(Dir(t), unsafeName.ReplaceAllString(name, "-")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("save capture: %v", err)
	}
	t.Logf("capture: %s", path)
	return path
}

// Enter presses Enter as a keyboard does: one keyDown that carries the
// text (the browser makes the keypress from it at once), then keyUp.
// chromedp's kb.Enter sends the keypress as an event of its own, later,
// which lets it land on whatever the keydown moved the focus to.
func Enter() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		k := input.DispatchKeyEventParams{Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
		down, up := k, k
		down.Type, down.Text, down.UnmodifiedText = input.DispatchKeyEventTypeKeyDown, "\r", "\r"
		up.Type = input.DispatchKeyEventTypeKeyUp
		for _, ev := range []input.DispatchKeyEventParams{down, up} {
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, ev); err != nil {
				return err
			}
		}
		return nil
	})
}

// Eval evaluates js in the tab and returns its value, failing the test
// on an error.
func Eval[T any](t testing.TB, tab context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(tab, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}
