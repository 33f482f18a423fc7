package apiserver_test

import (
	"bytes"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/workflows"
)

// pageResponse is a public page as a browser gets it.
type pageResponse struct {
	status int
	header http.Header
	body   string
}

// page sends a request to a public page (no token, no redirects).
func (e *env) page(t testing.TB, method, target, contentType, body string) pageResponse {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+target, strings.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return pageResponse{res.StatusCode, res.Header, string(b)}
}

// pathOf is the path and query of a signed link, as the API serves it.
func pathOf(t testing.TB, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	require.NoError(t, err)
	return u.RequestURI()
}

// requireHTML checks a public page's status and headers and parses it.
func requireHTML(t testing.TB, p pageResponse, status int) *html.Node {
	t.Helper()
	require.Equal(t, status, p.status, "%s", p.body)
	assert.Equal(t, "text/html; charset=utf-8", p.header.Get("Content-Type"))
	assert.Contains(t, p.header.Get("Content-Security-Policy"), "default-src 'none'")
	assert.Contains(t, p.header.Get("Content-Security-Policy"), "form-action 'self'")
	assert.Contains(t, p.header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	assert.Equal(t, "nosniff", p.header.Get("X-Content-Type-Options"))
	assert.Equal(t, "no-referrer", p.header.Get("Referrer-Policy"))
	assert.Equal(t, "no-store", p.header.Get("Cache-Control"))
	doc, err := html.Parse(strings.NewReader(p.body))
	require.NoError(t, err)
	return doc
}

// find returns the elements of doc with the tag whose attributes include attrs.
func find(doc *html.Node, tag string, attrs map[string]string) []*html.Node {
	var out []*html.Node
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode || n.Data != tag {
			continue
		}
		match := true
		for k, v := range attrs {
			if attr(n, k) != v {
				match = false
			}
		}
		if match {
			out = append(out, n)
		}
	}
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// text is the text content of n.
func text(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

const formType = "application/x-www-form-urlencoded"

// feedbackForm is the body a browser posts from the feedback page, its
// fields in the form's order.
func feedbackForm(link, rating, comment string) string {
	u, _ := url.Parse(link)
	body := "event=" + url.QueryEscape(u.Query().Get(signedlink.ParamEvent)) + "&sig=" + url.QueryEscape(u.Query().Get(signedlink.ParamSignature))
	if rating != "" {
		body += "&rating=" + url.QueryEscape(rating)
	}
	return body + "&comment=" + url.QueryEscape(comment)
}

func TestFeedbackPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	ev := e.minimalEvent("checkout")
	ev["defaultLocale"] = "de_AT"
	ev["products"] = []any{map[string]any{"name": "Wanderschuh <Trail>", "imageUrl": "https://cdn.example/shoe.png"}}
	id := e.acceptEvent(t, ev)
	r := e.do(t, http.MethodPatch, "/account", e.token, `{"displayName":"Nordlicht Outdoor"}`)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	link := e.feedbackLinks.URL(id)

	doc := requireHTML(t, e.page(t, http.MethodGet, pathOf(t, link), "", ""), http.StatusOK)
	assert.Equal(t, "de", attr(find(doc, "html", nil)[0], "lang"), "in the event's language (de_AT → de)")
	assert.Contains(t, text(doc), "Nordlicht Outdoor", "names the shop")
	assert.Contains(t, text(doc), "Wanderschuh <Trail>", "names the products (escaped, shown as sent)")
	form := find(doc, "form", map[string]string{"method": "post", "action": "/feedback"})
	require.Len(t, form, 1)
	assert.Len(t, find(form[0], "input", map[string]string{"type": "hidden", "name": "event", "value": id}), 1)
	assert.Len(t, find(form[0], "input", map[string]string{"type": "radio", "name": "rating"}), 5)
	assert.Len(t, find(form[0], "textarea", map[string]string{"name": "comment"}), 1)
	assert.Empty(t, find(doc, "script", nil), "no JavaScript")

	// The answer is stored; the event shows it; a second answer replaces it.
	hostile := "Great </textarea><script>alert(1)</script> \u202eevil"
	doc = requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, feedbackForm(link, "4", hostile)), http.StatusOK)
	assert.Empty(t, find(doc, "script", nil), "the comment is never markup")
	reviews, _ := items(t, e.get(t, "/reviews"))
	require.Len(t, reviews, 1)
	rev := reviews[0]
	assert.Equal(t, id, rev["eventId"])
	assert.Equal(t, 4.0, rev["rating"])
	assert.Equal(t, "Great </textarea><script>alert(1)</script> evil", rev["comment"],
		"stored as sent but for the direction override")
	assert.Equal(t, "de", rev["locale"])
	got := e.get(t, "/events/"+id).object(t)["review"].(map[string]any)
	assert.Equal(t, rev["id"], got["id"])
	assert.Equal(t, 4.0, got["rating"])

	requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, feedbackForm(link, "2", "changed my mind")), http.StatusOK)
	again := e.get(t, "/reviews/"+rev["id"].(string)).object(t)
	assert.Equal(t, 2.0, again["rating"])
	assert.Equal(t, "changed my mind", again["comment"])
	assert.Equal(t, rev["createdAt"], again["createdAt"])
	assert.GreaterOrEqual(t, again["updatedAt"].(string), rev["updatedAt"].(string))
	doc = requireHTML(t, e.page(t, http.MethodGet, pathOf(t, link), "", ""), http.StatusOK)
	assert.Len(t, find(doc, "input", map[string]string{"name": "rating", "value": "2", "checked": ""}), 1, "the form shows the answer so far")

	// Another account sees nothing of it.
	_, otherToken := e.otherAccount(t)
	list := e.do(t, http.MethodGet, "/reviews", otherToken, nil)
	other, _ := items(t, list)
	assert.Empty(t, other)
	assert.Equal(t, http.StatusNotFound, e.do(t, http.MethodGet, "/reviews/"+rev["id"].(string), otherToken, nil).status)
}

// Posting the same answer again changes nothing: no review.updated
// webhook, no signal to the workflow, updatedAt unmoved — also when the
// repost differs only in what the form's cleaning removes (line breaks as
// a browser sends them, white space at the ends). A changed answer is
// told once.
func TestFeedbackRepostIsQuiet(t *testing.T) {
	t.Parallel()
	rec := &signals{}
	e := newEnv(t).withSignals(t, rec)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	hook := e.create(t, "/webhooks", map[string]any{"url": "https://hooks.example.com/tp",
		"events": []string{"review.created", "review.updated"}})
	id := e.acceptEvent(t, e.minimalEvent("checkout"))
	link := e.feedbackLinks.URL(id)
	post := func(rating, comment string) {
		t.Helper()
		requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, feedbackForm(link, rating, comment)), http.StatusOK)
	}
	types := func() []string {
		t.Helper()
		ds, _ := items(t, e.get(t, "/webhooks/"+hook["id"].(string)+"/deliveries"))
		var got []string
		for _, d := range ds {
			got = append(got, d["type"].(string))
		}
		slices.Sort(got)
		return got
	}
	reviewSignals := func() int {
		n := 0
		for _, s := range rec.list() {
			if strings.HasSuffix(s, " "+workflows.ReviewSignal) {
				n++
			}
		}
		return n
	}

	post("4", "Fast delivery.\nWould buy again.")
	first, _ := items(t, e.get(t, "/reviews"))
	require.Len(t, first, 1)
	for _, comment := range []string{"Fast delivery.\nWould buy again.", "Fast delivery.\r\nWould buy again.", "  Fast delivery.\nWould buy again.\n"} {
		post("4", comment)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, 1, reviewSignals()) }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{"review.created"}, types(), "the same answer again sends no review.updated")
	again := e.get(t, "/reviews/"+first[0]["id"].(string)).object(t)
	assert.Equal(t, first[0]["updatedAt"], again["updatedAt"], "nothing was written")
	history, _ := items(t, e.get(t, "/reviews/"+first[0]["id"].(string)+"/history"))
	assert.Len(t, history, 1, "the history has the review's creation only")

	post("5", "Fast delivery.\nWould buy again.")
	post("5", "Fast delivery.\nWould buy again.")
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, 2, reviewSignals()) }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, []string{"review.created", "review.updated"}, types(), "a changed answer is told once")
	assert.Equal(t, 2, reviewSignals(), "one signal per change")
}

func TestFeedbackPageRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	id := e.acceptEvent(t, e.minimalEvent("checkout"))
	link := e.feedbackLinks.URL(id)
	u, _ := url.Parse(link)
	sig := u.Query().Get(signedlink.ParamSignature)

	for name, target := range map[string]string{
		"no signature":      "/feedback?event=" + id,
		"no event":          "/feedback?sig=" + sig,
		"nothing":           "/feedback",
		"tampered":          "/feedback?event=" + id + "&sig=" + strings.ToUpper(sig),
		"another event":     "/feedback?event=evt-00000000-0000-4000-8000-000000000000&sig=" + sig,
		"unknown event":     pathOf(t, e.feedbackLinks.URL("evt-00000000-0000-4000-8000-000000000000")),
		"unsubscribe's sig": pathOf(t, strings.Replace(e.unsubscribeLinks.URL(id), "/unsubscribe", "/feedback", 1)),
	} {
		doc := requireHTML(t, e.page(t, http.MethodGet, target, "", ""), http.StatusNotFound)
		assert.NotContains(t, text(doc), id, name+": reveals nothing")
		assert.Empty(t, find(doc, "form", nil), name)
	}

	long := strings.Repeat("é", 2001)
	for name, c := range map[string]struct{ body, field string }{
		"no rating":        {feedbackForm(link, "", "kept comment"), "rating"},
		"rating 0":         {feedbackForm(link, "0", "kept comment"), "rating"},
		"rating 6":         {feedbackForm(link, "6", "kept comment"), "rating"},
		"rating text":      {feedbackForm(link, "five", "kept comment"), "rating"},
		"comment too long": {feedbackForm(link, "3", long), "comment"},
		"not UTF-8":        {strings.Replace(feedbackForm(link, "3", "x"), "comment=x", "comment=%FF%FEkept+comment", 1), "comment"},
	} {
		p := e.page(t, http.MethodPost, "/feedback", formType, c.body)
		doc := requireHTML(t, p, http.StatusBadRequest)
		assert.NotEmpty(t, find(doc, "form", nil), name+": the form again")
		if c.field == "rating" {
			assert.Contains(t, text(find(doc, "textarea", nil)[0]), "kept comment", name+": the comment is kept")
		}
	}
	huge := feedbackForm(link, "3", strings.Repeat("a", 64<<10))
	requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, huge), http.StatusBadRequest)
	requireHTML(t, e.page(t, http.MethodPost, "/feedback", "application/json", `{"rating":5}`), http.StatusBadRequest)
	requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, "event=%zz"), http.StatusBadRequest)
	bad := strings.Replace(feedbackForm(link, "5", ""), "sig=", "sig=x", 1)
	requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, bad), http.StatusNotFound)

	reviews, _ := items(t, e.get(t, "/reviews"))
	assert.Empty(t, reviews, "nothing was stored")
}

// TestLinkSignaturesHaveOneSpelling: a link verifies only with its
// signature as it was made, not with the other spellings a lenient base64
// decoder reads as the same bytes — on every public page, GET and POST.
func TestLinkSignaturesHaveOneSpelling(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	id := e.acceptEvent(t, e.minimalEvent("checkout"))
	sigOf := func(link string) string {
		u, err := url.Parse(link)
		require.NoError(t, err)
		return u.Query().Get(signedlink.ParamSignature)
	}
	// Four spellings, four requests each, and two more: within the
	// pages' per-address burst.
	spellings := func(sig string) map[string]string {
		return map[string]string{
			"unused bits of the last character": otherSpelling(sig),
			"a line feed inside":                sig[:20] + "%0A" + sig[20:],
			"a line feed at the end":            sig + "%0A",
			"padding":                           sig + "%3D",
		}
	}
	fb := sigOf(e.feedbackLinks.URL(id))
	for _, s := range spellings(fb) {
		requireHTML(t, e.page(t, http.MethodGet, "/feedback?event="+id+"&sig="+s, "", ""), http.StatusNotFound)
		body := "event=" + id + "&sig=" + s + "&rating=5&comment="
		requireHTML(t, e.page(t, http.MethodPost, "/feedback", formType, body), http.StatusNotFound)
	}
	unsub := sigOf(e.unsubscribeLinks.URL(id))
	for _, s := range spellings(unsub) {
		target := "/unsubscribe?event=" + id + "&sig=" + s
		requireHTML(t, e.page(t, http.MethodGet, target, "", ""), http.StatusNotFound)
		requireHTML(t, e.page(t, http.MethodPost, target, formType, "List-Unsubscribe=One-Click"), http.StatusNotFound)
	}
	reviews, _ := items(t, e.get(t, "/reviews"))
	assert.Empty(t, reviews, "no review was stored")
	sups, _ := items(t, e.get(t, "/suppressions"))
	assert.Empty(t, sups, "no address was suppressed")

	// The spelling as made still works.
	requireHTML(t, e.page(t, http.MethodGet, "/feedback?event="+id+"&sig="+fb, "", ""), http.StatusOK)
	requireHTML(t, e.page(t, http.MethodGet, "/unsubscribe?event="+id+"&sig="+unsub, "", ""), http.StatusOK)
}

// TestFeedbackLinksExpire: a feedback link works for FeedbackLinkTTL after
// its invite was sent, then answers 410 with a page in the customer's
// language saying so, to GET and POST alike; a link of an invite never
// sent keeps working, and unsubscribe links never expire.
func TestFeedbackLinksExpire(t *testing.T) {
	t.Parallel()
	const ttl = 90 * 24 * time.Hour
	e := newEnv(t, func(o *apiserver.Options) { o.FeedbackLinkTTL = ttl })
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	event := func(sentAgo time.Duration) string {
		ev := e.minimalEvent("checkout")
		ev["defaultLocale"] = "de_AT"
		id := e.acceptEvent(t, ev)
		if sentAgo > 0 {
			_, err := e.store.DB().Exec(`UPDATE events SET invite_status = 'sent', invite_medium = 'email', attempts = 1,
				sent_at = now() - make_interval(secs => $2) WHERE id = $1`, id, sentAgo.Seconds())
			require.NoError(t, err)
		}
		return id
	}
	neverSent, recent, old := event(0), event(ttl-time.Hour), event(ttl+time.Hour)
	english := func(method, target, body string) pageResponse {
		req, err := http.NewRequest(method, e.srv.URL+target, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Accept-Language", "en-GB,en;q=0.9")
		if body != "" {
			req.Header.Set("Content-Type", formType)
		}
		res, err := e.srv.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return pageResponse{res.StatusCode, res.Header, string(b)}
	}

	for _, id := range []string{neverSent, recent} {
		requireHTML(t, english(http.MethodGet, pathOf(t, e.feedbackLinks.URL(id)), ""), http.StatusOK)
		requireHTML(t, english(http.MethodPost, "/feedback", feedbackForm(e.feedbackLinks.URL(id), "5", "")), http.StatusOK)
	}

	for _, p := range []pageResponse{
		english(http.MethodGet, pathOf(t, e.feedbackLinks.URL(old)), ""),
		english(http.MethodPost, "/feedback", feedbackForm(e.feedbackLinks.URL(old), "1", "late")),
	} {
		doc := requireHTML(t, p, http.StatusGone)
		assert.Equal(t, "de", attr(find(doc, "html", nil)[0], "lang"), "in the customer's language, not the browser's")
		assert.Equal(t, "Dieser Link ist abgelaufen", strings.TrimSpace(text(find(doc, "h1", nil)[0])))
		assert.Empty(t, find(doc, "form", nil))
	}
	reviews, _ := items(t, e.get(t, "/reviews"))
	assert.Len(t, reviews, 2, "the expired link stored nothing")

	// The unsubscribe link of the same invite still works.
	target := pathOf(t, e.unsubscribeLinks.URL(old))
	requireHTML(t, english(http.MethodGet, target, ""), http.StatusOK)
	requireHTML(t, english(http.MethodPost, target, "List-Unsubscribe=One-Click"), http.StatusOK)
	sups, _ := items(t, e.get(t, "/suppressions"))
	assert.Len(t, sups, 1)
}

// otherSpelling is a base64url signature of 32 bytes whose last character
// differs in a bit the encoding leaves unused: the same bytes to a
// lenient decoder.
func otherSpelling(sig string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := sig[len(sig)-1]
	return sig[:len(sig)-1] + string(alphabet[strings.IndexByte(alphabet, last)^1])
}

func TestPublicPagesAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var last pageResponse
	for range 40 {
		if last = e.page(t, http.MethodGet, "/feedback", "", ""); last.status == http.StatusTooManyRequests {
			break
		}
	}
	requireHTML(t, last, http.StatusTooManyRequests)
	assert.NotEmpty(t, last.header.Get("Retry-After"))
	assert.Equal(t, http.StatusOK, e.get(t, "/event-types").status, "the API's own limit is another")
}

// pageFrom gets a public page with X-Forwarded-For set.
func (e *env) pageFrom(t testing.TB, forwardedFor, target string) pageResponse {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.srv.URL+target, nil)
	require.NoError(t, err)
	req.Header.Set("X-Forwarded-For", forwardedFor)
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return pageResponse{res.StatusCode, res.Header, string(b)}
}

// exhaust sends requests from one forwarded address until it is limited.
func (e *env) exhaust(t testing.TB, forwardedFor, target string) {
	t.Helper()
	for range 40 {
		if p := e.pageFrom(t, forwardedFor, target); p.status == http.StatusTooManyRequests {
			requireHTML(t, p, http.StatusTooManyRequests)
			assert.NotEmpty(t, p.header.Get("Retry-After"))
			return
		}
	}
	t.Fatalf("%s was never limited", forwardedFor)
}

// TestPublicPagesAreLimitedPerCustomer: behind a trusted proxy (the test
// server's peer, 127.0.0.1), the pages are limited per client address as
// the proxy names it in X-Forwarded-For, IPv6 addresses by their /64 —
// one customer over the limit never holds back another. From a peer
// that is not a trusted proxy, X-Forwarded-For is ignored.
func TestPublicPagesAreLimitedPerCustomer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(o *apiserver.Options) {
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	})
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	link := pathOf(t, e.feedbackLinks.URL(e.acceptEvent(t, e.minimalEvent("checkout"))))

	e.exhaust(t, "198.51.100.1", link)
	requireHTML(t, e.pageFrom(t, "198.51.100.1", link), http.StatusTooManyRequests)
	requireHTML(t, e.pageFrom(t, "198.51.100.2", link), http.StatusOK)
	requireHTML(t, e.pageFrom(t, "198.51.100.1, 198.51.100.3", link), http.StatusOK) // the address the proxy recorded, not the client's own entry

	e.exhaust(t, "2001:db8:1:2::1", link)
	requireHTML(t, e.pageFrom(t, "2001:db8:1:2:ffff:ffff:ffff:ffff", link), http.StatusTooManyRequests)
	requireHTML(t, e.pageFrom(t, "2001:db8:1:3::1", link), http.StatusOK)

	untrusted := newEnv(t, func(o *apiserver.Options) { o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} })
	untrusted.exhaust(t, "198.51.100.1", "/feedback")
	for _, other := range []string{"198.51.100.2", "2001:db8:9::1", ""} {
		requireHTML(t, untrusted.pageFrom(t, other, "/feedback"), http.StatusTooManyRequests)
	}
}

func TestUnsubscribe(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.create(t, "/event-types", map[string]any{"name": "checkout"})
	ev := e.minimalEvent("checkout")
	ev["customer"] = map[string]any{"email": "Ann.Lee@Example.com"}
	id := e.acceptEvent(t, ev)
	target := pathOf(t, e.unsubscribeLinks.URL(id))
	listed := func() []map[string]any {
		list, _ := items(t, e.get(t, "/suppressions"))
		return list
	}

	// A link scanner's GET changes nothing: it gets the confirm page.
	doc := requireHTML(t, e.page(t, http.MethodGet, target, "", ""), http.StatusOK)
	forms := find(doc, "form", map[string]string{"method": "post"})
	require.Len(t, forms, 1)
	assert.Equal(t, target, attr(forms[0], "action"))
	assert.NotContains(t, text(doc), "Ann.Lee@Example.com", "the address is masked")
	assert.Empty(t, listed())

	// RFC 8058: the POST exactly as a mailbox provider sends it.
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+target, bytes.NewBufferString("List-Unsubscribe=One-Click"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	list := listed()
	require.Len(t, list, 1)
	assert.Equal(t, "ann.lee@example.com", list[0]["address"])
	assert.Equal(t, "unsubscribed", list[0]["reason"])
	assert.Equal(t, "email", list[0]["medium"])

	requireHTML(t, e.page(t, http.MethodPost, target, formType, "List-Unsubscribe=One-Click"), http.StatusOK)
	assert.Len(t, listed(), 1, "repeating it is harmless")

	// The feedback link's signature does not unsubscribe.
	fb := pathOf(t, strings.Replace(e.feedbackLinks.URL(id), "/feedback", "/unsubscribe", 1))
	requireHTML(t, e.page(t, http.MethodPost, fb, formType, "List-Unsubscribe=One-Click"), http.StatusNotFound)
	requireHTML(t, e.page(t, http.MethodPost, "/unsubscribe?event="+id, formType, ""), http.StatusNotFound)
}

// TestCustomerPagesAnswerWrongMethodsInHTML: a method no route of a
// customer's page answers gets a small HTML 405 page in the reader's
// language (the page's ?locale= first where it takes one, else
// Accept-Language) with Allow; the API's routes keep their problem.
func TestCustomerPagesAnswerWrongMethodsInHTML(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	acc := store.NewID("acc")
	rev := store.NewID("rev")
	for _, c := range []struct {
		target, acceptLanguage, lang, allow string
	}{
		{"/feedback?event=evt-00000000-0000-4000-8000-000000000000&sig=x", "de-DE,de;q=0.9,en;q=0.5", "de", "GET, POST"},
		{"/feedback", "", "en", "GET, POST"},
		{"/unsubscribe", "fr-CH, fr;q=0.9", "fr", "GET, POST"},
		{"/unsubscribe?event=x&sig=y", "xx, nl;q=0.8", "nl", "GET, POST"},
		{"/public/accounts/" + acc + "/widget", "da", "da", "GET"},
		{"/public/accounts/" + acc + "/widget?locale=es", "de", "es", "GET"},
		{"/public/reviews/" + rev + "/verify", "es-MX,es;q=0.9", "es", "GET"},
		{"/public/reviews/" + rev + "/verify?locale=de_AT", "fr", "de", "GET"},
	} {
		for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch} {
			req, err := http.NewRequest(method, e.srv.URL+c.target, strings.NewReader(`{"x":1}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			if c.acceptLanguage != "" {
				req.Header.Set("Accept-Language", c.acceptLanguage)
			}
			res, err := e.srv.Client().Do(req)
			require.NoError(t, err)
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			require.NoError(t, err)
			name := method + " " + c.target
			doc := requireHTML(t, pageResponse{res.StatusCode, res.Header, string(b)}, http.StatusMethodNotAllowed)
			assert.Equal(t, c.allow, res.Header.Get("Allow"), name)
			assert.Equal(t, c.lang, attr(find(doc, "html", nil)[0], "lang"), name)
			assert.Len(t, find(doc, "h1", nil), 1, name)
			assert.Empty(t, find(doc, "form", nil), name)
		}
	}

	// The API's routes, the public JSON among them, answer a problem.
	for path, allow := range map[string]string{"/reviews/" + rev: "GET", "/public/accounts/" + acc + "/reviews": "GET"} {
		r := e.do(t, http.MethodPut, path, e.token, `{}`, header{"Accept-Language", "de"})
		requireProblem(t, r, http.StatusMethodNotAllowed)
		assert.Equal(t, allow, r.header.Get("Allow"), path)
	}
}
