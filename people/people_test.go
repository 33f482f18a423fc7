package people_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/people"
)

// TestWhoMayDoWhat holds the table to the roles as the console promises
// them: a viewer reads; an editor also answers and reports reviews, edits
// templates, sends tests, cancels and retries invites, retries and
// replays webhook deliveries; an owner also manages people, API clients,
// webhook endpoints, branding, invite settings and lifts suppressions.
func TestWhoMayDoWhat(t *testing.T) {
	t.Parallel()
	v, e, o := people.Viewer, people.Editor, people.Owner
	want := map[people.Action][]people.Role{
		people.Read:           {v, e, o},
		people.SignOut:        {v, e, o},
		people.ChooseLanguage: {v, e, o},
		people.ReplyReview:    {e, o},
		people.ReportReview:   {e, o},
		people.EditTemplates:  {e, o},
		people.SendTest:       {e, o},
		people.CancelInvite:   {e, o},
		people.RetryInvite:    {e, o},
		people.RetryWebhook:   {e, o},
		people.ReplayWebhook:  {e, o},
		people.ManagePeople:   {o},
		people.ManageClients:  {o},
		people.ManageWebhooks: {o},
		people.EditBranding:   {o},
		people.EditSettings:   {o},
		people.Suppress:       {o},
		people.Unsuppress:     {o},
		people.EraseCustomer:  {o},
	}
	assert.ElementsMatch(t, people.Actions(), keys(want), "every action of the table is checked here")
	for a, allowed := range want {
		for _, r := range people.Roles() {
			assert.Equal(t, contains(allowed, r), people.Allows(r, a), "%s may %s", r, a)
		}
	}
	assert.False(t, people.Allows(people.Owner, "no.such.action"), "an action outside the table is nobody's")
	assert.False(t, people.Allows("admin", people.Read), "a role outside the list may do nothing")
}

func keys(m map[people.Action][]people.Role) []people.Action {
	var out []people.Action
	for k := range m {
		out = append(out, k)
	}
	return out
}

func contains(rs []people.Role, r people.Role) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func TestParseRole(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"owner", "editor", "viewer"} {
		r, ok := people.ParseRole(s)
		assert.True(t, ok, s)
		assert.Equal(t, people.Role(s), r)
	}
	for _, s := range []string{"", "Owner", "admin", " owner"} {
		_, ok := people.ParseRole(s)
		assert.False(t, ok, "%q", s)
	}
}

func TestNormalizeEmail(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"anna@shop.example":        "anna@shop.example",
		"  Anna.S@Shop.Example ":   "anna.s@shop.example",
		"dev@touchpoint.localhost": "dev@touchpoint.localhost",
	} {
		got, err := people.NormalizeEmail(in)
		assert.NoError(t, err, in)
		assert.Equal(t, want, got)
	}
	for _, in := range []string{"", "anna", "Anna <anna@shop.example>", "anna@localhost", "a@b.c, d@e.f", "an\nna@shop.example", "an na@shop.example",
		"x@" + string(make([]byte, 260))} {
		_, err := people.NormalizeEmail(in)
		assert.ErrorIs(t, err, people.ErrBadEmail, "%q", in)
	}
}

func TestActors(t *testing.T) {
	t.Parallel()
	p := people.PersonActor("usr-3f1c2a9e-7b4d-4c1a-9e2f-0a1b2c3d4e5f")
	c := people.ClientActor("cli-3f1c2a9e-7b4d-4c1a-9e2f-0a1b2c3d4e5f")
	assert.True(t, p.IsPerson())
	assert.False(t, p.IsClient())
	assert.True(t, c.IsClient())
	assert.False(t, c.IsPerson())
	assert.False(t, people.Operator.IsPerson() || people.Operator.IsClient())
}

// TestActorOfARequest: a request's context carries who makes its changes;
// without one, the change is the admin CLI's.
func TestActorOfARequest(t *testing.T) {
	t.Parallel()
	c := people.ClientActor("cli-3f1c2a9e-7b4d-4c1a-9e2f-0a1b2c3d4e5f")
	assert.Equal(t, c, people.ActorOf(people.WithActor(context.Background(), c)))
	assert.Equal(t, people.Operator, people.ActorOf(context.Background()))
	assert.Equal(t, people.Operator, people.ActorOf(people.WithActor(context.Background(), "")))
}
