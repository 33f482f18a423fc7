package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reportdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// accept accepts an event of the account through the store, as the API
// does, so the funnel counts it; it returns the event's id.
func (s *site) accept(t *testing.T, a *eventfixture.Account, email string, products ...reviewdb.Product) string {
	t.Helper()
	payload, err := json.Marshal(map[string]any{"customer": map[string]string{"email": email, "firstName": "Greta", "lastName": "Zimmermann"},
		"products": products, "defaultLocale": "de"})
	require.NoError(t, err)
	ref := "T-" + store.NewID("x")[2:14]
	acc, err := s.st.Events.AcceptEvent(context.Background(), eventdb.NewEvent{AccountID: a.AccountID, Type: "order", ChannelID: a.ChannelID,
		CustomerEmail: email, TransactionReference: ref, TransactionDate: time.Now().UTC(), Payload: payload})
	require.NoError(t, err)
	return acc.EventID
}

// send sends the event's invite now, as the worker does (scheduled,
// claimed, sent), and the mail provider reports it delivered.
func (s *site) send(t *testing.T, eventID string) {
	t.Helper()
	ctx := context.Background()
	_, err := s.st.Invites.MarkScheduled(ctx, invite.KindInvite, eventID, time.Now())
	require.NoError(t, err)
	c, err := s.st.Invites.ClaimSend(ctx, invite.KindInvite, eventID, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send, "the invite goes out")
	_, err = s.st.Invites.FinishSend(ctx, invite.KindInvite, eventID, invite.SendResult{SentAt: time.Now()})
	require.NoError(t, err)
	_, err = s.st.Reports.ApplyMailReports(ctx, nil, []reportdb.MailReport{{Provider: "postmark", ID: "pm-" + eventID,
		Outcome: invite.MailDelivered, EventID: eventID, Kind: invite.KindInvite, At: time.Now()}})
	require.NoError(t, err)
}

// reviewed stores a review of a new event of the account, whose invite
// was sent first.
func (s *site) reviewed(t *testing.T, a *eventfixture.Account, rating int, comment string, products ...reviewdb.ProductRating) reviewdb.Review {
	t.Helper()
	var ps []reviewdb.Product
	for range products {
		ps = append(ps, reviewdb.Product{Name: "Trail shoe Fjell", SKU: "FJELL-42", GTIN: "4006381333931"})
	}
	ev := s.accept(t, a, "greta@example.com", ps...)
	s.send(t, ev)
	r, _, err := s.st.Reviews.SaveReview(context.Background(), reviewdb.ReviewInput{EventID: ev, Rating: rating, Comment: comment, Locale: "de",
		Products: products, ShowName: true})
	require.NoError(t, err)
	return r
}

// TestOverview: the funnel of the last 30 days as a chart and a table of
// the same numbers, the rating distribution, and what needs attention —
// reported reviews and low ratings without a reply — each linked.
func TestOverview(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	s.accept(t, s.a, "no-review@example.com")
	assert.Contains(t, text(s.get(t, viewerA, "/console/").byID("attention-h").Parent), "nothing sent yet",
		"no rate before the first send")
	low := s.reviewed(t, s.a, 1, "Never arrived.")
	s.reviewed(t, s.a, 5, "Great!")
	s.reviewed(t, s.a, 5, "")
	rep := s.reviewed(t, s.a, 2, "Call me at +49 151 1234567")
	_, _, err := s.st.Reviews.ReportReview(context.Background(), s.a.AccountID, rep.ID, review.PersonalData, "", editorA)
	require.NoError(t, err)
	s.reviewed(t, s.b, 1, "Another shop's review")

	p := s.get(t, viewerA, "/console/")
	require.Equal(t, http.StatusOK, p.status, p.body)
	funnel := p.elements(func(n *htmlNode) bool { return n.Data == "table" })[0]
	assert.Equal(t, [][]string{{"Accepted", "5", ""}, {"Sent", "4", "80.0 %"}, {"Delivered", "4", "80.0 %"}, {"Opened", "4", "80.0 %"},
		{"Reviewed", "4", "80.0 %"}}, rows(funnel), "the table says what the chart draws")
	svg := p.tagged("svg")
	require.GreaterOrEqual(t, len(svg), 3)
	assert.Equal(t, "img", attr(svg[1], "role"), "the funnel's chart is an image with a name")
	assert.Contains(t, text(svg[1]), "Reviewed 4")

	ratings := p.tagged("table")[1]
	// One rating of 2 is hidden for personal data: the public ratings are
	// 5, 5 and 1.
	assert.Equal(t, [][]string{{"5", "2", "66.7 %"}, {"4", "0", "0.0 %"}, {"3", "0", "0.0 %"},
		{"2", "0", "0.0 %"}, {"1", "1", "33.3 %"}}, rows(ratings))

	attention := text(p.byID("attention-h").Parent)
	assert.Contains(t, attention, "Reported reviews: 1")
	assert.Contains(t, attention, "Rated 2 or less, without a reply: 2")
	links := p.elements(func(n *htmlNode) bool {
		return n.Data == "a" && strings.HasPrefix(attr(n, "href"), "/console/reviews/rev-")
	})
	var hrefs []string
	for _, l := range links {
		hrefs = append(hrefs, attr(l, "href"))
	}
	assert.Contains(t, hrefs, "/console/reviews/"+low.ID)
	assert.Contains(t, hrefs, "/console/reviews/"+rep.ID)
	assert.NotContains(t, p.body, "Another shop", "another account's review is never shown")
	assert.Contains(t, attention, "Bounces 0 % (alert above 5 %)")
	assert.Contains(t, attention, "Spam complaints 0 % (alert above 0.3 %)")

	// Answering the low rating takes it off the list.
	require.Equal(t, http.StatusSeeOther, s.post(t, editorA, "/console/reviews/"+low.ID+"/reply", url.Values{"text": {"We are sorry."}}).status)
	p = s.get(t, viewerA, "/console/")
	assert.Contains(t, text(p.byID("attention-h").Parent), "Rated 2 or less, without a reply: 1")
}

// TestReviewsList: filters by rating, status, product, period and
// answered or not, paged; a filter it cannot read is named at its field.
func TestReviewsList(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	one := s.reviewed(t, s.a, 1, "Bad", reviewdb.ProductRating{Index: 0, Rating: 1})
	five := s.reviewed(t, s.a, 5, "Good")
	answered := s.reviewed(t, s.a, 4, "Fine")
	_, _, err := s.st.Reviews.SetReply(context.Background(), s.a.AccountID, answered.ID, "Thanks!", editorA)
	require.NoError(t, err)
	s.reviewed(t, s.b, 1, "Another shop's")

	ids := func(a answer) []string {
		var out []string
		for _, l := range a.elements(func(n *htmlNode) bool {
			return n.Data == "a" && strings.HasPrefix(attr(n, "href"), "/console/reviews/rev-")
		}) {
			out = append(out, strings.TrimPrefix(attr(l, "href"), "/console/reviews/"))
		}
		return out
	}
	today := time.Now().UTC().Format(time.DateOnly)
	for q, want := range map[string][]string{
		"":                       {answered.ID, five.ID, one.ID},
		"?rating=5":              {five.ID},
		"?maxRating=4":           {answered.ID, one.ID},
		"?answered=yes":          {answered.ID},
		"?answered=no":           {five.ID, one.ID},
		"?product=FJELL-42":      {one.ID},
		"?product=4006381333931": {one.ID},
		"?status=reported":       nil,
		"?from=" + today:         {answered.ID, five.ID, one.ID},
		"?to=2001-01-01":         nil,
	} {
		p := s.get(t, viewerA, "/console/reviews"+q)
		require.Equal(t, http.StatusOK, p.status, q)
		assert.Equal(t, want, ids(p), q)
	}

	bad := s.get(t, viewerA, "/console/reviews?rating=9&from=yesterday")
	assert.Equal(t, http.StatusBadRequest, bad.status)
	summary := bad.elements(func(n *htmlNode) bool { return attr(n, "class") == "error-summary" })
	require.Len(t, summary, 1)
	assert.Contains(t, text(summary[0]), "Choose a rating from 1 to 5")
	assert.NotNil(t, bad.byID("rating-error"), "the message stands at its field")
	assert.NotNil(t, bad.byID("from-error"))

	// Paging: 25 a page, and the next page's link keeps the filters.
	for range 25 {
		s.reviewed(t, s.a, 3, "")
	}
	first := s.get(t, viewerA, "/console/reviews?maxRating=3")
	assert.Len(t, ids(first), 25)
	next := first.elements(func(n *htmlNode) bool { return n.Data == "a" && strings.Contains(attr(n, "href"), "cursor=") })
	require.Len(t, next, 1)
	second := s.get(t, viewerA, attr(next[0], "href"))
	assert.Equal(t, []string{one.ID}, ids(second))
	assert.Equal(t, http.StatusNotFound, s.get(t, viewerA, "/console/reviews?cursor=garbage").status)
}

// TestReviewPage: a review's page shows its products, its history with
// the person who acted, and its proof (a link to the public verify page);
// another account's review is 404, as one that does not exist.
func TestReviewPage(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	r := s.reviewed(t, s.a, 2, "The sole came off.", reviewdb.ProductRating{Index: 0, Rating: 2, Comment: "Sole came off"})
	require.Equal(t, http.StatusSeeOther, s.post(t, editorA, "/console/reviews/"+r.ID+"/reply", url.Values{"text": {"Sorry!"}}).status)

	p := s.get(t, viewerA, "/console/reviews/"+r.ID)
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, text(p.byID("customer-h")), "Greta Z.", "the author as the public sees them")
	assert.Contains(t, text(p.byID("products-h").Parent), "Trail shoe Fjell")
	assert.Contains(t, text(p.byID("products-h").Parent), "Sole came off")
	history := text(p.byID("history-h").Parent)
	assert.Contains(t, history, "Reply published by editor@shop-a.example", "the history names the person")
	assert.Contains(t, history, "Written by the customer")
	verify := p.elements(func(n *htmlNode) bool { return n.Data == "a" && strings.HasSuffix(attr(n, "href"), "/verify") })
	require.Len(t, verify, 1)
	assert.Equal(t, s.URL+"/public/reviews/"+r.ID+"/verify", attr(verify[0], "href"))
	// A viewer reads, and is offered no form that changes the review.
	assert.Empty(t, p.elements(func(n *htmlNode) bool {
		return n.Data == "form" && attr(n, "method") == "post" &&
			attr(n, "action") != "/console/sign-out"
	}))

	other := s.reviewed(t, s.b, 5, "Shop B")
	for _, path := range []string{"/console/reviews/" + other.ID, "/console/reviews/rev-00000000-0000-4000-8000-000000000000",
		"/console/reviews/garbage"} {
		assert.Equal(t, http.StatusNotFound, s.get(t, viewerA, path).status, path)
	}
	assert.Equal(t, http.StatusNotFound, s.post(t, ownerA, "/console/reviews/"+other.ID+"/reply", url.Values{"text": {"Hi"}}).status)
	assert.Equal(t, http.StatusNotFound, s.post(t, ownerA, "/console/reviews/"+other.ID+"/report", url.Values{"reason": {"spam"}}).status)
	got, err := s.st.Reviews.Review(context.Background(), s.b.AccountID, other.ID)
	require.NoError(t, err)
	assert.Empty(t, got.ReplyText, "another account's review is untouched")
	assert.Equal(t, review.Published, got.Status)
}

// TestReply: an editor writes, changes and deletes the public reply
// through the form's textarea "text"; an empty or too long one is
// refused at its field with the text kept.
func TestReply(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	r := s.reviewed(t, s.a, 3, "OK")
	path := "/console/reviews/" + r.ID

	form := s.get(t, editorA, path)
	ta := form.byID("text")
	require.NotNil(t, ta)
	assert.Equal(t, "textarea", ta.Data)
	assert.Equal(t, "text", attr(ta, "name"))

	res := s.post(t, editorA, path+"/reply", url.Values{"text": {"  Thank you,\r\nGreta!  "}})
	require.Equal(t, http.StatusSeeOther, res.status)
	assert.Equal(t, path+"?done=reply_saved", res.location())
	done := s.get(t, editorA, res.location())
	assert.Contains(t, text(done.elements(func(n *htmlNode) bool { return attr(n, "role") == "status" })[0]), "Your reply is published.")
	got, err := s.st.Reviews.Review(context.Background(), s.a.AccountID, r.ID)
	require.NoError(t, err)
	assert.Equal(t, "Thank you,\nGreta!", got.ReplyText, "cleaned as every reply is")

	require.Equal(t, http.StatusSeeOther, s.post(t, editorA, path+"/reply", url.Values{"text": {"Thanks again"}}).status)
	got, _ = s.st.Reviews.Review(context.Background(), s.a.AccountID, r.ID)
	assert.Equal(t, "Thanks again", got.ReplyText)

	for _, bad := range []string{"   ", strings.Repeat("x", review.MaxText+1)} {
		res := s.post(t, editorA, path+"/reply", url.Values{"text": {bad}})
		assert.Equal(t, http.StatusBadRequest, res.status)
		assert.NotNil(t, res.byID("text-error"))
		assert.Equal(t, bad, text(res.byID("text"))+strings.Repeat(" ", len(bad)-len(strings.TrimSpace(bad))), "the text is kept")
	}
	got, _ = s.st.Reviews.Review(context.Background(), s.a.AccountID, r.ID)
	assert.Equal(t, "Thanks again", got.ReplyText)

	require.Equal(t, http.StatusSeeOther, s.post(t, editorA, path+"/reply/delete", nil).status)
	got, _ = s.st.Reviews.Review(context.Background(), s.a.AccountID, r.ID)
	assert.Empty(t, got.ReplyText)
	hs, _, err := s.st.Reviews.ReviewHistory(context.Background(), s.a.AccountID, r.ID, store.Page{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, "reply_deleted", hs[0].Action)
	assert.Equal(t, editorA, hs[0].Actor, "the history records the person")
}

// TestReport: an editor reports a review with a reason and a note; the
// reason is required; personal data hides it at once.
func TestReport(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	r := s.reviewed(t, s.a, 1, "Mail me at greta@example.com")
	path := "/console/reviews/" + r.ID

	res := s.post(t, editorA, path+"/report", url.Values{"note": {"no reason"}})
	assert.Equal(t, http.StatusBadRequest, res.status)
	assert.Contains(t, text(res.byID("reason-error")), "Choose why")
	assert.Equal(t, "no reason", text(res.byID("note")))

	res = s.post(t, editorA, path+"/report", url.Values{"reason": {"personal_data"}, "note": {"Has the address"}})
	require.Equal(t, http.StatusSeeOther, res.status)
	got, err := s.st.Reviews.Review(context.Background(), s.a.AccountID, r.ID)
	require.NoError(t, err)
	assert.Equal(t, review.Reported, got.Status)
	assert.False(t, got.Public)
	p := s.get(t, viewerA, path)
	assert.Contains(t, text(p.byID("history-h").Parent), "Reported Holds personal data by editor@shop-a.example")
	assert.Contains(t, text(p.byID("history-h").Parent), "Has the address")
	assert.Contains(t, text(p.byID("proof-h").Parent), "not shown in public")
}

// TestFormsNeedRoleCSRFAndOrigin: every form that changes a review goes
// through the role check and the CSRF check: a viewer may not, a post
// without the session's token or from another origin is refused — and
// nothing changes.
func TestFormsNeedRoleCSRFAndOrigin(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	r := s.reviewed(t, s.a, 3, "OK")
	forms := map[string]url.Values{
		"/reply":        {"text": {"Hello"}},
		"/reply/delete": nil,
		"/report":       {"reason": {"spam"}},
	}
	for suffix, form := range forms {
		path := "/console/reviews/" + r.ID + suffix
		assert.Equal(t, http.StatusForbidden, s.post(t, viewerA, path, form).status, "viewer %s", suffix)
		assert.Equal(t, http.StatusForbidden, s.post(t, editorA, path, merge(form, "csrf_token", "wrong")).status, "token %s", suffix)
		assert.Equal(t, http.StatusForbidden, s.post(t, editorA, path, merge(form, "csrf_token", "")).status, "no token %s", suffix)
		assert.Equal(t, http.StatusForbidden, s.post(t, editorA, path, form, "https://evil.example").status, "origin %s", suffix)
		assert.Equal(t, http.StatusForbidden, s.post(t, editorA, path, form, "").status, "no origin %s", suffix)
		assert.Equal(t, http.StatusUnauthorized, s.post(t, "", path, form).status, "signed out %s", suffix)
	}
	got, err := s.st.Reviews.Review(context.Background(), s.a.AccountID, r.ID)
	require.NoError(t, err)
	assert.Empty(t, got.ReplyText)
	assert.Equal(t, review.Published, got.Status)
	assert.Equal(t, http.StatusUnauthorized, s.get(t, "", "/console/reviews").status)
}

func merge(v url.Values, k, val string) url.Values {
	out := url.Values{k: {val}}
	for key, vs := range v {
		out[key] = vs
	}
	return out
}
