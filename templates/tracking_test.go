package templates_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/touchpoint/touchpoint/templates"
)

// TestMailsCarryNoTracking: an invite or reminder loads nothing but the
// shop's logo and the images of the products the event named, each at
// the address the shop gave, the same for every customer; the only
// addresses that name the event are the feedback and unsubscribe links,
// which the customer follows. An opening is counted when the feedback
// page is opened, never by a pixel.
func TestMailsCarryNoTracking(t *testing.T) {
	t.Parallel()
	lib, err := templates.Load()
	require.NoError(t, err)
	const feedback = "https://reviews.example/feedback?event=evt-1&sig=abc"
	const unsubscribe = "https://reviews.example/unsubscribe?event=evt-1&sig=def"
	in := templates.Input{FirstName: "Ann", Brand: inviteShop, FeedbackURL: feedback, UnsubscribeURL: unsubscribe,
		Products: []templates.Product{{Name: "Cup", ImageURL: "https://cdn.example/cup.jpg", URL: "https://shop.example/cup"}}}
	allowedLoads := map[string]bool{inviteShop.LogoURL: true, "https://cdn.example/cup.jpg": true}
	cssURL := regexp.MustCompile(`(?i)url\s*\(`)
	for _, kind := range []templates.Kind{templates.KindInvite, templates.KindReminder} {
		for _, lang := range templates.Languages {
			m, err := lib.Render(kind, lang, nil, in)
			require.NoError(t, err)
			doc, err := html.Parse(strings.NewReader(m.HTML))
			require.NoError(t, err)
			var walk func(n *html.Node)
			walk = func(n *html.Node) {
				if n.Type == html.ElementNode {
					for _, a := range n.Attr {
						switch {
						case a.Key == "src" || a.Key == "srcset" || a.Key == "background" || a.Key == "poster" || a.Key == "data":
							assert.True(t, allowedLoads[a.Val], "%s %s: <%s %s=%q> loads something", kind, lang, n.Data, a.Key, a.Val)
						case a.Key == "href" && n.Data != "a":
							t.Errorf("%s %s: <%s href=%q> loads something", kind, lang, n.Data, a.Val)
						case a.Key == "style":
							assert.False(t, cssURL.MatchString(a.Val), "%s %s: a style loads something: %q", kind, lang, a.Val)
						case a.Key == "href" && strings.Contains(a.Val, "evt-1"):
							assert.Contains(t, []string{feedback, unsubscribe}, a.Val, "%s %s", kind, lang)
						}
					}
					switch n.Data {
					case "script", "iframe", "object", "embed", "link":
						t.Errorf("%s %s: a <%s> element", kind, lang, n.Data)
					case "style":
						if n.FirstChild != nil {
							assert.False(t, cssURL.MatchString(n.FirstChild.Data), "%s %s: the stylesheet loads something", kind, lang)
						}
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(doc)
			rest := strings.NewReplacer(html.EscapeString(feedback), "", html.EscapeString(unsubscribe), "").Replace(m.HTML)
			assert.NotContains(t, rest, "evt-1",
				"%s %s: the event is named only in the two links", kind, lang)
		}
	}
}
