package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/console"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store"
)

// TestBranding: owners set the shop's name, logo, colour and reply
// address; the contrast rules' advice is shown for the colour, and
// served alone for the script to show as the owner types; what the
// brand's checks refuse is named at its field.
func TestBranding(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ctx := context.Background()
	form := url.Values{"displayName": {"Nordlicht Outdoor"}, "logoUrl": {"https://cdn.nordlicht.example/logo.svg"},
		"color": {"#14532d"}, "replyTo": {"hilfe@nordlicht.example"}}
	assert.Equal(t, http.StatusForbidden, s.post(t, editorA, "/console/settings/branding", form).status)
	require.Equal(t, http.StatusSeeOther, s.post(t, ownerA, "/console/settings/branding", form).status)
	acc, err := s.st.Accounts.Account(ctx, s.a.AccountID)
	require.NoError(t, err)
	b := acc.Brand()
	assert.Equal(t, "Nordlicht Outdoor", b.DisplayName)
	assert.Equal(t, "#14532D", b.Color)

	p := s.get(t, ownerA, "/console/settings")
	advice := text(p.byID("color-advice"))
	green, _ := brand.ParseColor("#14532D")
	white, _ := brand.ParseColor(brand.White)
	assert.Contains(t, advice, fmt.Sprintf("Contrast with white: %.1f:1", brand.Contrast(green, white)))
	assert.Contains(t, advice, "Buttons use your colour with white text.")
	assert.Contains(t, advice, "Links and headings use your colour.")

	pale := s.get(t, ownerA, "/console/settings/branding/advice?color="+url.QueryEscape("#FDE047"))
	require.Equal(t, http.StatusOK, pale.status)
	assert.Contains(t, text(pale.doc), "Buttons use your colour with dark text")
	assert.Contains(t, text(pale.doc), "Links and headings use Touchpoint's blue")

	bad := s.post(t, ownerA, "/console/settings/branding", url.Values{"displayName": {" "}, "color": {"green"}, "logoUrl": {"http://x.example/l.png"}})
	assert.Equal(t, http.StatusBadRequest, bad.status)
	for _, id := range []string{"displayName-error", "color-error", "logoUrl-error"} {
		assert.NotNil(t, bad.byID(id), id)
	}
	acc, _ = s.st.Accounts.Account(ctx, s.a.AccountID)
	assert.Equal(t, "Nordlicht Outdoor", acc.Brand().DisplayName, "nothing stored")
}

// TestInviteSettingsForm: owners change when invites go out; durations
// and windows are checked by sendtime's rules at their field.
func TestInviteSettingsForm(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ctx := context.Background()
	path := "/console/settings/invite-settings/" + s.a.SettingID
	form := url.Values{"active": {"on"}, "delay": {"P3D"}, "reminder": {"P7D"}, "windowStart": {"09:00"}, "windowEnd": {"18:00"},
		"windowTimeZone": {"Europe/Berlin"}}
	assert.Equal(t, http.StatusForbidden, s.post(t, editorA, path, form).status)
	require.Equal(t, http.StatusSeeOther, s.post(t, ownerA, path, form).status)
	is, err := s.st.Accounts.InviteSetting(ctx, s.a.AccountID, s.a.SettingID)
	require.NoError(t, err)
	assert.Equal(t, "P3D", is.Delay)
	assert.Equal(t, "P7D", is.ReminderDelay)
	require.NotNil(t, is.SendWindow)
	assert.Equal(t, "Europe/Berlin", is.SendWindow.TimeZone)

	bad := s.post(t, ownerA, path, url.Values{"delay": {"7 days"}, "reminder": {"P60D"}, "windowStart": {"25:00"}, "windowEnd": {"18:00"}})
	assert.Equal(t, http.StatusBadRequest, bad.status)
	for _, id := range []string{"delay-" + s.a.SettingID + "-error", "reminder-" + s.a.SettingID + "-error", "windowStart-" + s.a.SettingID + "-error"} {
		assert.NotNil(t, bad.byID(id), id)
	}
	is, _ = s.st.Accounts.InviteSetting(ctx, s.a.AccountID, s.a.SettingID)
	assert.Equal(t, "P3D", is.Delay, "nothing stored")
	assert.Equal(t, http.StatusNotFound, s.post(t, ownerB, path, form).status, "another account's setting")
}

// TestClientsAndPeople: owners create an API client and see its secret
// once, delete it; add a person with a role, change the role, disable
// them. Others see neither list; another account's client or person is
// out of reach.
func TestClientsAndPeople(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	ctx := context.Background()
	assert.Nil(t, s.get(t, editorA, "/console/settings").byID("clients-h"), "an editor sees no clients")
	assert.Nil(t, s.get(t, editorA, "/console/settings").byID("people-h"))

	res := s.post(t, ownerA, "/console/settings/clients", url.Values{"name": {"Shop backend"}, "group": {"events"}})
	require.Equal(t, http.StatusCreated, res.status, res.body)
	secret := text(res.byID("new-secret"))
	assert.True(t, strings.HasPrefix(secret, "secret-"))
	assert.NotContains(t, s.get(t, ownerA, "/console/settings").body, secret, "shown once")
	cs, err := s.st.Auth.ListClients(ctx, s.a.AccountID)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	assert.Equal(t, "events", cs[0].AccessGroup)
	assert.Equal(t, http.StatusBadRequest, s.post(t, ownerA, "/console/settings/clients", url.Values{"name": {""}, "group": {"root"}}).status)

	assert.Equal(t, http.StatusNotFound, s.post(t, ownerB, "/console/settings/clients/"+cs[0].ID+"/delete", nil).status)
	require.Equal(t, http.StatusSeeOther, s.post(t, ownerA, "/console/settings/clients/"+cs[0].ID+"/delete", nil).status)
	_, err = s.st.Auth.Client(ctx, cs[0].ID)
	assert.ErrorIs(t, err, store.ErrNotFound)

	require.Equal(t, http.StatusSeeOther, s.post(t, ownerA, "/console/settings/people", url.Values{"email": {" Anna@Shop-A.example "}, "role": {"editor"}}).status)
	dup := s.post(t, ownerA, "/console/settings/people", url.Values{"email": {"anna@shop-a.example"}, "role": {"viewer"}})
	assert.Equal(t, http.StatusBadRequest, dup.status)
	assert.NotNil(t, dup.byID("person-email-error"))
	ps, err := s.ps.People(ctx, s.a.AccountID)
	require.NoError(t, err)
	require.Len(t, ps, 1)
	anna := ps[0]
	assert.Equal(t, "anna@shop-a.example", anna.Email)
	assert.Equal(t, people.Editor, anna.Role)

	assert.Equal(t, http.StatusNotFound, s.post(t, ownerB, "/console/settings/people/"+anna.ID, url.Values{"role": {"owner"}}).status)
	require.Equal(t, http.StatusSeeOther, s.post(t, ownerA, "/console/settings/people/"+anna.ID, url.Values{"role": {"owner"}}).status)
	require.Equal(t, http.StatusSeeOther, s.post(t, ownerA, "/console/settings/people/"+anna.ID, url.Values{"action": {"disable"}}).status)
	ps, _ = s.ps.People(ctx, s.a.AccountID)
	assert.Equal(t, people.Owner, ps[0].Role)
	assert.NotNil(t, ps[0].DisabledAt)
}

// TestRuleProblemsInThePersonsLanguage: what the rules refuse in a form
// is said at its field in the person's language, not in the rules'
// English detail for API clients.
func TestRuleProblemsInThePersonsLanguage(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *console.Options) {
		signedIn := o.SignedIn
		o.SignedIn = func(w http.ResponseWriter, r *http.Request) (console.Person, bool) {
			p, ok := signedIn(w, r)
			p.Language = "de"
			return p, ok
		}
	})
	id := s.a.SettingID
	bad := s.post(t, ownerA, "/console/settings/invite-settings/"+id, url.Values{"delay": {"7 days"}, "reminder": {"P60D"},
		"windowStart": {"25:00"}, "windowEnd": {"18:00"}, "windowTimeZone": {"Mars/Olympus"}})
	require.Equal(t, http.StatusBadRequest, bad.status)
	for field, want := range map[string]string{
		"delay-" + id + "-error":       "Schreiben Sie eine Dauer wie P7D (7 Tage)",
		"reminder-" + id + "-error":    "Höchstens 30 Tage.",
		"windowStart-" + id + "-error": "Schreiben Sie jede Uhrzeit als HH:MM, von 00:00 bis 23:59. Wählen Sie eine Zeitzone",
	} {
		require.NotNil(t, bad.byID(field), field)
		got := text(bad.byID(field))
		assert.Contains(t, got, want, field)
		assert.NotContains(t, got, "must", "%s: no English detail", field)
	}

	brandBad := s.post(t, ownerA, "/console/settings/branding", url.Values{"displayName": {" "}, "color": {"green"},
		"logoUrl": {"http://x.example/l.png"}, "replyTo": {"Shop <shop@example.com>"}})
	require.Equal(t, http.StatusBadRequest, brandBad.status)
	for field, want := range map[string]string{
		"displayName-error": "Schreiben Sie den Namen, den Ihre Kunden kennen.",
		"color-error":       "Schreiben Sie eine Farbe als #RRGGBB",
		"logoUrl-error":     "vollständige https://-Adresse eines Bildes",
		"replyTo-error":     "Schreiben Sie eine E-Mail-Adresse",
	} {
		require.NotNil(t, brandBad.byID(field), field)
		assert.Contains(t, text(brandBad.byID(field)), want, field)
	}

	hook := s.post(t, ownerA, "/console/webhooks", url.Values{"url": {"https://10.1.2.3/hook"}, "events": {"review.created"}})
	require.Equal(t, http.StatusBadRequest, hook.status)
	assert.Contains(t, text(hook.byID("url-error")), "Die Adresse muss im Internet erreichbar sein")
}
