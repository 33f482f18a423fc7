package browsertest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// axeSource is axe-core (Deque Systems, MPL-2.0; see axe/LICENSE), kept
// in the tree so the tests run offline.
//
//go:embed axe/axe.min.js
var axeSource string

// Violation is one rule axe-core found broken, with the elements that
// break it.
type Violation struct {
	ID      string   `json:"id"`
	Impact  string   `json:"impact"`
	Help    string   `json:"help"`
	Targets []string `json:"targets"`
}

func (v Violation) String() string {
	return fmt.Sprintf("%s (%s): %s at %s", v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", "))
}

// axeRun runs axe-core over the whole document against WCAG 2.0, 2.1
// and 2.2 A and AA and axe's best practices, and reduces the answer to
// the violations.
const axeRun = `(async () => {
  const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice']}, resultTypes: ['violations']});
  return JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact || '', help: v.help,
    targets: v.nodes.map(n => n.target.join(' '))})));
})()`

// Axe runs axe-core in the tab's page as it is now and returns the
// violations it finds. It is injected through the DevTools protocol, which
// the page's Content-Security-Policy does not restrict.
func Axe(t testing.TB, tab context.Context) []Violation {
	t.Helper()
	if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](axeSource+";true")); err != nil {
		t.Fatalf("inject axe-core: %v", err)
	}
	out, err := chromedp.Run(tab, chromedp.Evaluate[string](axeRun, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core: %v", err)
	}
	var vs []Violation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		t.Fatalf("axe-core's answer: %v", err)
	}
	return vs
}

// ColorScheme makes the tab's pages see prefers-color-scheme as scheme
// ("light" or "dark").
func ColorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia,
			emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}

// Overflow is how many CSS pixels the page is wider than the viewport:
// 0 when nothing makes the reader scroll sideways.
const Overflow = `Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth)`
