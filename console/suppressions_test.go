package console_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
)

// TestSuppressions: search, add and lift, owners only; an address the
// customer asked to leave is lifted only with the consent box ticked;
// the history names who did what; another account's list is out of
// reach.
func TestSuppressions(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ctx := context.Background()
	_, _, err := s.st.Suppressions.AddSuppression(ctx, s.a.AccountID, "gone@example.com", invite.Email, invite.Unsubscribed, "")
	require.NoError(t, err)
	_, _, err = s.st.Suppressions.AddSuppression(ctx, s.b.AccountID, "other@example.com", invite.Email, invite.Bounced, "")
	require.NoError(t, err)

	list := s.get(t, viewerA, "/console/suppressions")
	require.Equal(t, http.StatusOK, list.status)
	assert.Contains(t, text(list.byID("list-h").Parent), "gone@example.com")
	assert.NotContains(t, list.body, "other@example.com")
	assert.Nil(t, list.byID("add-h"), "a viewer is offered no add form")

	p := s.get(t, viewerA, "/console/suppressions?address="+url.QueryEscape(" Gone@Example.com "))
	assert.Contains(t, text(p.byID("entry-h").Parent), "Suppressed the customer unsubscribed")
	assert.Contains(t, text(p.byID("entry-h").Parent), "Added · the customer unsubscribed by the customer")
	assert.Contains(t, text(s.get(t, viewerA, "/console/suppressions?address=other@example.com").byID("entry-h").Parent),
		"not on the suppression list", "another account's entry is not there")
	assert.NotNil(t, s.get(t, viewerA, "/console/suppressions?address=nonsense").byID("address-error"))

	// Add: owners only, with the address checked.
	assert.Equal(t, http.StatusForbidden, s.post(t, editorA, "/console/suppressions", url.Values{"address": {"x@example.com"}, "reason": {"manual"}}).status)
	bad := s.post(t, ownerA, "/console/suppressions", url.Values{"address": {"not-an-address"}, "reason": {"manual"}})
	assert.Equal(t, http.StatusBadRequest, bad.status)
	assert.NotNil(t, bad.byID("add-address-error"))
	assert.Equal(t, "not-an-address", attr(bad.byID("add-address"), "value"), "what was typed is kept")
	res := s.post(t, ownerA, "/console/suppressions", url.Values{"address": {"New@Example.com"}, "reason": {"manual"}})
	require.Equal(t, http.StatusSeeOther, res.status)
	x, err := s.st.Suppressions.Suppression(ctx, s.a.AccountID, "new@example.com")
	require.NoError(t, err)
	assert.Equal(t, ownerA, x.By, "the entry names the person")

	// Lift: the customer's own wish needs their consent.
	lift := func(person, addr string, consent bool) answer {
		f := url.Values{"address": {addr}}
		if consent {
			f.Set("consent", "customer-consent")
		}
		return s.post(t, person, "/console/suppressions/lift", f)
	}
	assert.Equal(t, http.StatusForbidden, lift(editorA, "gone@example.com", true).status)
	refused := lift(ownerA, "gone@example.com", false)
	assert.Equal(t, http.StatusBadRequest, refused.status)
	assert.Contains(t, text(refused.byID("consent-error")), "asked to hear no more")
	_, err = s.st.Suppressions.Suppression(ctx, s.a.AccountID, "gone@example.com")
	require.NoError(t, err, "still listed")
	require.Equal(t, http.StatusSeeOther, lift(ownerA, "gone@example.com", true).status)
	_, err = s.st.Suppressions.Suppression(ctx, s.a.AccountID, "gone@example.com")
	assert.ErrorIs(t, err, store.ErrNotFound)
	require.Equal(t, http.StatusSeeOther, lift(ownerA, "new@example.com", false).status, "a manual entry needs no consent")
	hist := text(s.get(t, viewerA, "/console/suppressions?address=gone@example.com").byID("entry-h").Parent)
	assert.Contains(t, hist, "Lifted · the customer unsubscribed by owner@shop-a.example")

	assert.Equal(t, http.StatusNotFound, lift(ownerA, "other@example.com", true).status, "another account's entry")
	_, err = s.st.Suppressions.Suppression(ctx, s.b.AccountID, "other@example.com")
	assert.NoError(t, err)
}
