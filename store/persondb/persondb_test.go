package persondb_test

import (
	"context"
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// env is a fresh database with the repository on a clock the test moves.
type env struct {
	db  *sqlx.DB
	st  *persondb.Store
	now time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{db: testdb.New(t), now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	base := pg.NewDB(e.db)
	base.SetClock(func() time.Time { return e.now })
	e.st = persondb.New(base)
	return e
}

func (e *env) account(t *testing.T) string {
	t.Helper()
	id := pg.NewID("acc")
	_, err := e.db.Exec(`INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, now())`, id, "Shop "+id)
	require.NoError(t, err)
	return id
}

func (e *env) person(t *testing.T, acc, email string, role people.Role) persondb.Person {
	t.Helper()
	p, err := e.st.CreatePerson(context.Background(), people.Operator, acc, email, role)
	require.NoError(t, err)
	return p
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func TestPeopleAreScopedToTheirAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a, b := e.account(t), e.account(t)
	anna := e.person(t, a, "anna@shop.example", people.Owner)

	_, err := e.st.Person(ctx, b, anna.ID)
	assert.ErrorIs(t, err, pg.ErrNotFound, "another account's person is not found")
	_, err = e.st.SetRole(ctx, people.Operator, b, anna.ID, people.Viewer)
	assert.ErrorIs(t, err, pg.ErrNotFound)
	_, _, err = e.st.Disable(ctx, people.Operator, b, anna.ID)
	assert.ErrorIs(t, err, pg.ErrNotFound)
	got, err := e.st.Person(ctx, a, anna.ID)
	require.NoError(t, err)
	assert.Equal(t, people.Owner, got.Role, "nothing changed through another account")

	_, err = e.st.CreatePerson(ctx, people.Operator, b, "anna@shop.example", people.Viewer)
	assert.ErrorIs(t, err, pg.ErrConflict, "an address signs in to one account")
}

func TestRoleChangesAndDisablingAreAudited(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	acc := e.account(t)
	owner := e.person(t, acc, "owner@shop.example", people.Owner)
	ben := e.person(t, acc, "ben@shop.example", people.Viewer)
	by := people.PersonActor(owner.ID)

	e.now = e.now.Add(time.Minute)
	p, err := e.st.SetRole(ctx, by, acc, ben.ID, people.Editor)
	require.NoError(t, err)
	assert.Equal(t, people.Editor, p.Role)
	e.now = e.now.Add(time.Minute)
	_, err = e.st.SetRole(ctx, by, acc, ben.ID, people.Editor) // no change, no line
	require.NoError(t, err)
	e.now = e.now.Add(time.Minute)
	p, _, err = e.st.Disable(ctx, by, acc, ben.ID)
	require.NoError(t, err)
	assert.False(t, p.Active())
	_, err = e.st.SetRole(ctx, by, acc, ben.ID, people.Owner)
	assert.ErrorIs(t, err, persondb.ErrDisabled, "a disabled person gains no role")

	trail, next, err := e.st.Audit(ctx, acc, persondb.AuditFilter{Actor: by}, pg.Page{})
	require.NoError(t, err)
	assert.Nil(t, next)
	require.Len(t, trail, 2)
	assert.Equal(t, persondb.AuditPersonDisabled, trail[0].Action)
	assert.Equal(t, persondb.AuditRoleChanged, trail[1].Action)
	assert.Equal(t, map[string]string{"from": "viewer", "to": "editor"}, trail[1].Detail)
	assert.Equal(t, ben.ID, trail[1].Target)
	assert.Equal(t, "owner@shop.example", trail[1].ActorEmail, "the trail names the person who acted")
}

func TestAuditPagesAndFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	acc, other := e.account(t), e.account(t)
	start := e.now
	for i := range 5 {
		e.now = start.Add(time.Duration(i) * time.Minute)
		e.person(t, acc, "p"+string(rune('a'+i))+"@shop.example", people.Viewer)
	}
	e.person(t, other, "elsewhere@shop.example", people.Viewer)

	var all []persondb.Entry
	p := pg.Page{Limit: 2}
	for {
		page, next, err := e.st.Audit(ctx, acc, persondb.AuditFilter{}, p)
		require.NoError(t, err)
		all = append(all, page...)
		if next == nil {
			break
		}
		p.After = next
	}
	require.Len(t, all, 5, "every line of the account, none of another")
	for i := 1; i < len(all); i++ {
		assert.True(t, all[i-1].CreatedAt.After(all[i].CreatedAt), "newest first")
	}
	within, _, err := e.st.Audit(ctx, acc, persondb.AuditFilter{From: start.Add(time.Minute), To: start.Add(3 * time.Minute)}, pg.Page{})
	require.NoError(t, err)
	assert.Len(t, within, 2, "from is inclusive, to exclusive")
	none, _, err := e.st.Audit(ctx, acc, persondb.AuditFilter{Actor: "cli-00000000-0000-4000-8000-000000000000"}, pg.Page{})
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestSignInLinkIsUsedOnceInItsOwnBrowserBeforeItExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	acc := e.account(t)
	anna := e.person(t, acc, "anna@shop.example", people.Editor)
	link := func(token string) persondb.SignInLink {
		l, err := e.st.CreateSignInLink(ctx, persondb.SignInLink{TokenHash: hash(token), BrowserHash: hash("browser"), PersonID: anna.ID,
			ClientID: "touchpoint-console", RedirectURI: "https://api.example/console/callback", State: "s", Nonce: "n",
			CodeChallenge: "c"}, 15*time.Minute, 5)
		require.NoError(t, err)
		return l
	}
	link("t1")

	_, _, err := e.st.UseSignInLink(ctx, hash("t1"), hash("another browser"), hash("code0"), time.Minute)
	assert.ErrorIs(t, err, persondb.ErrOtherBrowser)
	l, c, err := e.st.UseSignInLink(ctx, hash("t1"), hash("browser"), hash("code1"), time.Minute)
	require.NoError(t, err, "refused in another browser, the link still works in its own")
	assert.Equal(t, "n", c.Nonce)
	assert.Equal(t, "s", l.State)
	_, _, err = e.st.UseSignInLink(ctx, hash("t1"), hash("browser"), hash("code2"), time.Minute)
	assert.ErrorIs(t, err, persondb.ErrLinkUsed, "used once")

	link("t2")
	e.now = e.now.Add(15 * time.Minute)
	_, _, err = e.st.UseSignInLink(ctx, hash("t2"), hash("browser"), hash("code3"), time.Minute)
	assert.ErrorIs(t, err, persondb.ErrLinkExpired, "valid 15 minutes")

	_, _, err = e.st.UseSignInLink(ctx, hash("never made"), hash("browser"), hash("code4"), time.Minute)
	assert.ErrorIs(t, err, pg.ErrNotFound)

	_, _, err = e.st.UseAuthCode(ctx, hash("code1"))
	assert.ErrorIs(t, err, pg.ErrNotFound, "the code expired a minute after it was made")
}

func TestAuthCodeIsUsedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	anna := e.person(t, e.account(t), "anna@shop.example", people.Editor)
	_, err := e.st.CreateSignInLink(ctx, persondb.SignInLink{TokenHash: hash("t"), BrowserHash: hash("b"), PersonID: anna.ID,
		ClientID: "c", RedirectURI: "r", State: "s", Nonce: "n", CodeChallenge: "x"}, 15*time.Minute, 5)
	require.NoError(t, err)
	_, _, err = e.st.UseSignInLink(ctx, hash("t"), hash("b"), hash("code"), time.Minute)
	require.NoError(t, err)

	var wins int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			c, p, err := e.st.UseAuthCode(ctx, hash("code"))
			if err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
				assert.Equal(t, anna.ID, p.ID)
				assert.Equal(t, "n", c.Nonce)
			} else {
				assert.ErrorIs(t, err, pg.ErrNotFound)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, wins, "of concurrent redemptions exactly one gets the code")
}

func TestSignInMailsAreCappedPerHour(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	anna := e.person(t, e.account(t), "anna@shop.example", people.Editor)
	mk := func(i int) error {
		_, err := e.st.CreateSignInLink(ctx, persondb.SignInLink{TokenHash: hash("t" + string(rune('a'+i))), BrowserHash: hash("b"),
			PersonID: anna.ID, ClientID: "c", RedirectURI: "r", State: "s", Nonce: "n", CodeChallenge: "x"}, 15*time.Minute, 3)
		return err
	}
	for i := range 3 {
		require.NoError(t, mk(i))
		e.now = e.now.Add(10 * time.Minute)
	}
	assert.ErrorIs(t, mk(3), persondb.ErrMailCap)
	e.now = e.now.Add(31 * time.Minute) // the first left the hour
	assert.NoError(t, mk(4))

	_, _, err := e.st.Disable(ctx, people.Operator, anna.AccountID, anna.ID)
	require.NoError(t, err)
	assert.ErrorIs(t, mk(5), persondb.ErrDisabled)
}

func TestSessionsEndWhenIdleExpiredDisabledOrSignedOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	acc := e.account(t)
	anna := e.person(t, acc, "anna@shop.example", people.Editor)
	const idle, life = 30 * time.Minute, 12 * time.Hour
	start := func(token string, replaces []byte) persondb.Session {
		s, err := e.st.StartSession(ctx, persondb.NewSession{TokenHash: hash(token), Replaces: replaces, PersonID: anna.ID,
			CSRFToken: "csrf-" + token, Issuer: "https://auth.example", Lifetime: life, Idle: idle})
		require.NoError(t, err)
		return s
	}

	start("a", nil)
	s, err := e.st.Session(ctx, hash("a"), idle)
	require.NoError(t, err)
	assert.Equal(t, "csrf-a", s.CSRFToken)
	assert.Equal(t, anna.ID, s.Person.ID)
	assert.Equal(t, people.Editor, s.Person.Role)

	// Used every 29 minutes it lives until its absolute end.
	for e.now.Add(29 * time.Minute).Before(s.ExpiresAt) {
		e.now = e.now.Add(29 * time.Minute)
		_, err = e.st.Session(ctx, hash("a"), idle)
		require.NoError(t, err, "at %s", e.now)
	}
	e.now = s.ExpiresAt
	_, err = e.st.Session(ctx, hash("a"), idle)
	assert.ErrorIs(t, err, pg.ErrNotFound, "12 hours at most")

	start("b", nil)
	e.now = e.now.Add(idle)
	_, err = e.st.Session(ctx, hash("b"), idle)
	assert.ErrorIs(t, err, pg.ErrNotFound, "30 minutes idle ends it")

	// A new sign-in replaces the browser's session: the old token is dead.
	start("c", nil)
	start("d", hash("c"))
	_, err = e.st.Session(ctx, hash("c"), idle)
	assert.ErrorIs(t, err, pg.ErrNotFound, "a sign-in never keeps the session it found")

	start("e", nil)
	require.NoError(t, e.st.EndSession(ctx, hash("e")))
	_, err = e.st.Session(ctx, hash("e"), idle)
	assert.ErrorIs(t, err, pg.ErrNotFound)
	require.NoError(t, e.st.EndSession(ctx, hash("e")), "ending twice is harmless")

	n, err := e.st.SignOut(ctx, people.Operator, acc, anna.ID)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "d was the one left")
	_, err = e.st.Session(ctx, hash("d"), idle)
	assert.ErrorIs(t, err, pg.ErrNotFound)

	start("f", nil)
	_, ended, err := e.st.Disable(ctx, people.Operator, acc, anna.ID)
	require.NoError(t, err)
	assert.Equal(t, 1, ended)
	_, err = e.st.Session(ctx, hash("f"), idle)
	assert.ErrorIs(t, err, pg.ErrNotFound, "disabling ends the sessions at once")
	_, err = e.st.StartSession(ctx, persondb.NewSession{TokenHash: hash("g"), PersonID: anna.ID, CSRFToken: "x", Issuer: "i",
		Lifetime: life, Idle: idle})
	assert.ErrorIs(t, err, persondb.ErrDisabled)
}

func TestIdentitiesMatchOnePerson(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	acc := e.account(t)
	anna := e.person(t, acc, "anna@shop.example", people.Editor)
	ben := e.person(t, acc, "ben@shop.example", people.Editor)
	const iss = "https://keycloak.example/realms/shop"

	require.NoError(t, e.st.Link(ctx, people.Operator, acc, anna.ID, iss, "sub-anna"))
	p, err := e.st.PersonByIdentity(ctx, iss, "sub-anna")
	require.NoError(t, err)
	assert.Equal(t, anna.ID, p.ID)
	assert.ErrorIs(t, e.st.Link(ctx, people.Operator, acc, ben.ID, iss, "sub-anna"), pg.ErrConflict)

	p, err = e.st.MatchByEmail(ctx, iss, "sub-ben", "ben@shop.example")
	require.NoError(t, err)
	assert.Equal(t, ben.ID, p.ID)
	p, err = e.st.PersonByIdentity(ctx, iss, "sub-ben")
	require.NoError(t, err)
	assert.Equal(t, ben.ID, p.ID, "matched once, linked for good")
	_, err = e.st.MatchByEmail(ctx, iss, "sub-other", "ben@shop.example")
	assert.ErrorIs(t, err, pg.ErrConflict, "a second account of the provider does not take over")
	_, err = e.st.MatchByEmail(ctx, iss, "sub-x", "nobody@shop.example")
	assert.ErrorIs(t, err, pg.ErrNotFound)
}

func TestErasingAPersonLeavesNoCopyOfTheirAddress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	acc := e.account(t)
	const addr = "greta.person@shop.example"
	greta := e.person(t, acc, addr, people.Owner)
	require.NoError(t, e.st.Link(ctx, people.Operator, acc, greta.ID, "https://idp.example", addr)) // a provider whose subject is the address
	_, err := e.st.StartSession(ctx, persondb.NewSession{TokenHash: hash("s"), PersonID: greta.ID, CSRFToken: "x", Issuer: "i",
		Lifetime: time.Hour, Idle: time.Hour})
	require.NoError(t, err)
	trail, _, err := e.st.Audit(ctx, acc, persondb.AuditFilter{Actor: people.PersonActor(greta.ID)}, pg.Page{})
	require.NoError(t, err)
	require.NotEmpty(t, trail)
	assert.Equal(t, addr, trail[0].ActorEmail)
	require.NotEmpty(t, testdb.Copies(t, e.db, addr), "the address is stored before")

	p, err := e.st.Erase(ctx, people.Operator, acc, greta.ID)
	require.NoError(t, err)
	assert.False(t, p.Active())
	assert.Empty(t, testdb.Copies(t, e.db, addr), "no copy of the address anywhere")
	trail, _, err = e.st.Audit(ctx, acc, persondb.AuditFilter{Actor: people.PersonActor(greta.ID)}, pg.Page{})
	require.NoError(t, err)
	require.NotEmpty(t, trail, "the trail keeps what they did")
	for _, l := range trail {
		assert.Empty(t, l.ActorEmail)
	}
	_, err = e.st.PersonByEmail(ctx, addr)
	assert.ErrorIs(t, err, pg.ErrNotFound)
}

func TestEmailsNamePeopleOfTheAccountOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a, b := e.account(t), e.account(t)
	anna := e.person(t, a, "anna@shop.example", people.Owner)
	gone := e.person(t, a, "gone@shop.example", people.Viewer)
	cora := e.person(t, b, "cora@other.example", people.Owner)
	_, err := e.st.Erase(ctx, people.Operator, a, gone.ID)
	require.NoError(t, err)
	got, err := e.st.Emails(ctx, a, []string{anna.ID, gone.ID, cora.ID, "usr-00000000-0000-4000-8000-000000000000"})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{anna.ID: "anna@shop.example"}, got)
}
