package apiserver_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/browsertest"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// widgetReviews gives the account a name and the reviews a widget shows
// at its best: of the shop and of products, named and not, one answered
// by the shop, one of products only. It returns the widget's path.
func widgetReviews(t *testing.T, e *env) string {
	t.Helper()
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPatch, "/account", e.token, `{"displayName":"Example Coffee"}`).status)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	products := []any{
		map[string]any{"name": "Espresso cup", "sku": "CUP-ESP-01", "gtin": "04006381333931", "url": "https://shop.example/cups/espresso"},
		map[string]any{"name": "Coffee beans, 1 kg", "sku": "BEANS-1K"},
	}
	for _, r := range []struct {
		first, last string
		in          reviewdb.ReviewInput
		reply       string
	}{
		{"Ola", "Nordmann", reviewdb.ReviewInput{Rating: 4, Comment: "Quick delivery, well packed. The cups are thinner than they look in the pictures.",
			Products: []reviewdb.ProductRating{{Index: 0, Rating: 4, Comment: "Thin walls, keeps warm anyway."}, {Index: 1, Rating: 5}}}, ""},
		{"Greta", "Zimmermann", reviewdb.ReviewInput{Rating: 2, Comment: "The beans arrived a week late.", ShowName: true,
			Products: []reviewdb.ProductRating{{Index: 1, Rating: 3, Comment: "Good beans, too late for the weekend."}}},
			"We are sorry: the carrier lost a day at the depot. We have sent you a voucher for the next order."},
		{"Jan", "Jansen", reviewdb.ReviewInput{Products: []reviewdb.ProductRating{{Index: 0, Rating: 5, Comment: "Perfect crema cup."}}}, ""},
		{"Ana", "Silva", reviewdb.ReviewInput{Rating: 5, Comment: "Great coffee, friendly service.", ShowName: true}, ""},
	} {
		ev := e.minimalEvent("checkout")
		ev["customer"] = map[string]any{"email": "c@example.com", "firstName": r.first, "lastName": r.last}
		ev["products"] = products
		r.in.EventID = e.acceptEvent(t, ev)
		r.in.Locale = "en"
		rev, _, err := e.store.Reviews.SaveReview(context.Background(), r.in)
		require.NoError(t, err)
		if r.reply != "" {
			body := fmt.Sprintf(`{"text":%q}`, r.reply)
			require.Equal(t, http.StatusOK, e.do(t, http.MethodPut, "/reviews/"+rev.ID+"/reply", e.token, body).status)
		}
	}
	return "/public/accounts/" + e.account + "/widget?locale=en"
}

// TestBrowserWidget: the widget, in both themes, fits a 360 px phone and
// a 1280 px desktop in a real browser: nothing wider than the screen, the
// three latest reviews shown with their products and the shop's reply.
func TestBrowserWidget(t *testing.T) {
	b := browsertest.Start(t)
	e := newEnv(t)
	path := widgetReviews(t, e)
	for _, theme := range []string{"light", "dark"} {
		for _, width := range []int{360, 1280} {
			t.Run(fmt.Sprintf("%s-%d", theme, width), func(t *testing.T) {
				tab := b.Tab(t)
				require.NoError(t, chromedp.Do(tab, chromedp.EmulateViewport(int64(width), 800),
					chromedp.Navigate(e.srv.URL+path+"&theme="+theme)))
				wide := browsertest.Eval[[]string](t, tab, `Array.from(document.querySelectorAll('body *'))
					.filter(el => el.getBoundingClientRect().right > window.innerWidth + 0.5)
					.map(el => el.tagName.toLowerCase() + ': ' + el.textContent.slice(0, 40))`)
				assert.Empty(t, wide, "nothing reaches past the screen's edge")
				assert.LessOrEqual(t, browsertest.Eval[float64](t, tab, `document.documentElement.scrollWidth`), float64(width),
					"no sideways scrolling")
				assert.Equal(t, 3.0, browsertest.Eval[float64](t, tab, `document.querySelectorAll('ul.reviews > li').length`))
				assert.Equal(t, 1.0, browsertest.Eval[float64](t, tab, `document.querySelectorAll('.reply').length`))
				assert.Equal(t, 2.0, browsertest.Eval[float64](t, tab, `document.querySelectorAll('ul.products > li').length`))
				b.Screenshot(t, e.srv.URL+path+"&theme="+theme, width)
			})
		}
	}
}

// TestBrowserWidgetDocsScreenshots refreshes the pictures of the widget in
// docs/customer-experience.md when TOUCHPOINT_UPDATE_DOCS is set.
func TestBrowserWidgetDocsScreenshots(t *testing.T) {
	if os.Getenv("TOUCHPOINT_UPDATE_DOCS") == "" {
		t.Skip("set TOUCHPOINT_UPDATE_DOCS=1 to refresh docs/widget-*.png")
	}
	b := browsertest.Start(t)
	e := newEnv(t)
	path := widgetReviews(t, e)
	for _, theme := range []string{"light", "dark"} {
		b.ScreenshotTo(t, e.srv.URL+path+"&theme="+theme, 360, 2, filepath.Join("..", "docs", "widget-"+theme+"-360.png"))
		b.ScreenshotTo(t, e.srv.URL+path+"&theme="+theme, 1280, 1, filepath.Join("..", "docs", "widget-"+theme+"-1280.png"))
	}
}
