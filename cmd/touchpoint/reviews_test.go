package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// The operator's queue and decisions: `reviews reported` lists what the
// shops reported, oldest first; `reviews moderate` decides, and the
// review's history and status follow.
func TestReviewsModerationCLI(t *testing.T) {
	t.Parallel()
	vars, db := opsDatabase(t)
	st := storeset.New(db, "P7D")
	var tick atomic.Int64 // distinct times, so the queue's order is the reports' order
	start := time.Now()
	st.SetClock(func() time.Time { return start.Add(time.Duration(tick.Add(1)) * time.Millisecond) })
	ctx := context.Background()
	a, b := eventfixture.NewAccount(t, db, eventfixture.Setting{}), eventfixture.NewAccount(t, db, eventfixture.Setting{})
	products := []eventfixture.Product{{Name: "Rain jacket", SKU: "JKT-1", GTIN: "4006381333931"}}
	save := func(acc *eventfixture.Account, comment string) reviewdb.Review {
		t.Helper()
		r, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: acc.Event(t, eventfixture.Event{Products: products}), Rating: 1,
			Comment: comment, Locale: "en", Products: []reviewdb.ProductRating{{Index: 0, Rating: 2, Comment: "leaks"}}})
		require.NoError(t, err)
		return r
	}
	spam, private, other := save(a, "BUY CHEAP \x1b[31mWATCHES"), save(a, "my number is 0151 2345678"), save(b, "fine")
	_, _, err := st.Reviews.ReportReview(ctx, a.AccountID, spam.ID, review.Spam, "an advert", "cli-a")
	require.NoError(t, err)
	_, _, err = st.Reviews.ReportReview(ctx, a.AccountID, private.ID, review.PersonalData, "", "cli-a")
	require.NoError(t, err)
	_, _, err = st.Reviews.ReportReview(ctx, b.AccountID, other.ID, review.NotAnExperience, "", "cli-b")
	require.NoError(t, err)

	out, err := opsCLI(t, vars, "reviews", "reported")
	require.NoError(t, err)
	assert.Regexp(t, `(?s)`+spam.ID+`.*for spam \(still public until you decide\).*shop's note: "an advert".*`+
		`rating 1/5: .*product "Rain jacket" \(sku "JKT-1", gtin "4006381333931"\) 2/5: "leaks".*`+
		private.ID+`.*for personal_data \(hidden until you decide\).*`+other.ID, out, "oldest report first, every account")
	assert.NotContains(t, out, "\x1b", "no terminal escapes from a comment")

	out, err = opsCLI(t, vars, "reviews", "reported", "--account", b.AccountID, "--json")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 1)
	var entry map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &entry))
	assert.Equal(t, other.ID, entry["id"])
	assert.Equal(t, "not_an_experience", entry["reportReason"])
	assert.Equal(t, true, entry["public"])

	for _, bad := range [][]string{
		{"moderate", "--id", spam.ID, "--decision", "remove"},
		{"moderate", "--id", spam.ID, "--decision", "hide", "--note", "x"},
		{"moderate", "--id", "rev-1", "--decision", "remove", "--note", "x"},
		{"moderate", "--id", store.NewID("rev"), "--decision", "remove", "--note", "x"},
		{"reported", "--account", "acc-1"},
		{"reported", "--limit", "0"},
		{"unknown"},
	} {
		_, err := opsCLI(t, vars, append([]string{"reviews"}, bad...)...)
		assert.Error(t, err, "%v", bad)
	}

	out, err = opsCLI(t, vars, "reviews", "moderate", "--id", spam.ID, "--decision", "remove", "--note", "advertising")
	require.NoError(t, err)
	assert.Equal(t, spam.ID+" is now removed: the public does not see it\n", out)
	out, err = opsCLI(t, vars, "reviews", "moderate", "--id", private.ID, "--decision", "publish", "--note", "a shop phone number", "--json")
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"`+private.ID+`","status":"published","public":true,"changed":true}`, out)
	out, err = opsCLI(t, vars, "reviews", "moderate", "--id", private.ID, "--decision", "publish", "--note", "again")
	require.NoError(t, err)
	assert.Contains(t, out, "published already; nothing changed")

	out, err = opsCLI(t, vars, "reviews", "reported")
	require.NoError(t, err)
	assert.NotContains(t, out, spam.ID)
	assert.NotContains(t, out, private.ID)
	assert.Contains(t, out, other.ID)

	hs, _, err := st.Reviews.ReviewHistory(ctx, a.AccountID, spam.ID, store.Page{})
	require.NoError(t, err)
	assert.Equal(t, "removed", hs[0].Action)
	assert.Equal(t, reviewdb.ActorOperator, hs[0].Actor)
	assert.Equal(t, "advertising", hs[0].Note)
}

// TestCLIQuotesWhatShopsWrote: a SKU, a product name, a comment and a
// provider's reply holding terminal escapes, C1 controls and a
// right-to-left override reach the operator's terminal quoted, in the
// text and in the JSON output, never as raw bytes.
func TestCLIQuotesWhatShopsWrote(t *testing.T) {
	t.Parallel()
	vars, db := opsDatabase(t)
	st := storeset.New(db, "P7D")
	ctx := context.Background()
	a := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	const sku, name = "JKT\x1b[2J\x1b[H-1", "Rain \u202Ejacket\u009b31m"
	id := a.Event(t, eventfixture.Event{Status: invite.Scheduled, Products: []eventfixture.Product{{Name: name, SKU: sku}}})
	c, err := st.Invites.ClaimSend(ctx, invite.KindInvite, id, invitedb.ClaimOptions{})
	require.NoError(t, err)
	require.True(t, c.Send)
	_, err = st.Invites.FinishSend(ctx, invite.KindInvite, id, invite.SendResult{Retry: true, Error: "421 \x1b]0;pwned\x07busy"})
	require.NoError(t, err)
	r, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: id, Rating: 1, Comment: "ok", Locale: "en",
		Products: []reviewdb.ProductRating{{Index: 0, Rating: 2, Comment: "leaks"}}})
	require.NoError(t, err)
	_, _, err = st.Reviews.ReportReview(ctx, a.AccountID, r.ID, review.Spam, "", "cli-a")
	require.NoError(t, err)

	raw := func(t *testing.T, out string) {
		t.Helper()
		for _, b := range []string{"\x1b", "\x07", "\u009b", "\u202E"} {
			assert.NotContains(t, out, b, "%q reached the terminal raw", b)
		}
	}
	out, err := opsCLI(t, vars, "reviews", "reported")
	require.NoError(t, err)
	raw(t, out)
	assert.Contains(t, out, `product "Rain \u202ejacket\u009b31m" (sku "JKT\x1b[2J\x1b[H-1")`)

	out, err = opsCLI(t, vars, "reviews", "reported", "--json")
	require.NoError(t, err)
	raw(t, out)
	var entry struct{ Products []struct{ Name, SKU string } }
	require.NoError(t, json.Unmarshal([]byte(out), &entry), "still JSON")
	require.Len(t, entry.Products, 1)
	assert.Equal(t, sku, entry.Products[0].SKU, "the same text, escaped")
	assert.Equal(t, name, entry.Products[0].Name)

	out, err = opsCLI(t, vars, "invites", "show", id)
	require.NoError(t, err)
	raw(t, out)
	assert.Contains(t, out, `"421 \x1b]0;pwned\abusy"`)
	payload, ok := strings.CutPrefix(out[strings.Index(out, "payload\t"):], "payload\t")
	require.True(t, ok)
	var event struct{ Products []struct{ Name, SKU string } }
	require.NoError(t, json.Unmarshal([]byte(payload), &event), "the payload is still JSON")
	assert.Equal(t, sku, event.Products[0].SKU)
	assert.Equal(t, name, event.Products[0].Name)

	out, err = opsCLI(t, vars, "invites", "show", id, "--json")
	require.NoError(t, err)
	raw(t, out)
}
