package eventdb

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/tcpproxy"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// batchFixture is an account with an event type, and a second account
// whose channel the first may not use.
type batchFixture struct {
	st               *Store
	accounts         *accountdb.Store
	account, channel string
	foreignChannel   string
	transactionDate  time.Time
}

func newBatchFixture(t *testing.T) batchFixture {
	t.Helper()
	return newBatchFixtureOn(t, testdb.New(t))
}

func newBatchFixtureOn(t *testing.T, db *sqlx.DB) batchFixture {
	t.Helper()
	ctx := context.Background()
	base := pg.NewDB(db)
	accounts := accountdb.New(base, "PT10S")
	st := New(base, accounts)
	acc, ch, err := accounts.CreateAccount(ctx, "batch")
	require.NoError(t, err)
	_, err = accounts.CreateEventType(ctx, acc.ID, "checkout", true)
	require.NoError(t, err)
	_, other, err := accounts.CreateAccount(ctx, "other")
	require.NoError(t, err)
	return batchFixture{st: st, accounts: accounts, account: acc.ID, channel: ch.ID, foreignChannel: other.ID,
		transactionDate: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
}

func (f batchFixture) call(ctx context.Context, email string) *acceptCall {
	return &acceptCall{ctx: ctx, id: pg.NewTimeID("evt", f.st.Now()), now: f.st.Now(), event: NewEvent{
		AccountID: f.account, Type: "checkout", ChannelID: f.channel, CustomerEmail: email,
		TransactionReference: "order-" + email, TransactionDate: f.transactionDate,
		Payload: json.RawMessage(fmt.Sprintf(`{"customer":{"email":%q}}`, email)),
	}}
}

// storedEvent is what an accept writes, compared between the batch and
// the single statement.
type storedEvent struct {
	Type, Email, TxRef, Delay, DelayFrom, Medium string
	CustomerRef                                  *string
	Delivery                                     *time.Time
	TxDate, Received                             time.Time
	Payload                                      string
	Outbox                                       int
}

func (f batchFixture) stored(t *testing.T, id string) storedEvent {
	t.Helper()
	var e storedEvent
	require.NoError(t, f.st.db.QueryRow(`
		SELECT type, customer_email, transaction_reference, delay, delay_from, invite_medium,
		       customer_reference, estimated_delivery_date, transaction_date, received_at, payload::text,
		       (SELECT count(*) FROM outbox o WHERE o.event_id = e.id AND o.kind = 'start' AND o.done_at IS NULL)
		FROM events e WHERE id = $1`, id).Scan(&e.Type, &e.Email, &e.TxRef, &e.Delay, &e.DelayFrom, &e.Medium,
		&e.CustomerRef, &e.Delivery, &e.TxDate, &e.Received, &e.Payload, &e.Outbox))
	return e
}

// One batch holding every kind of request: each gets its own answer, the
// good ones are stored exactly as the single statement stores them, and
// nothing is stored for the others.
func TestAcceptBatchAnswersEachRequest(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t)
	ctx := context.Background()

	plain := f.call(ctx, "a@example.com")
	full := f.call(ctx, "b@example.com")
	full.event.CustomerReference = "cust-7"
	delivery := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	full.event.EstimatedDeliveryDate = &delivery
	unknownType := f.call(ctx, "c@example.com")
	unknownType.event.Type = "Checkout"
	foreign := f.call(ctx, "d@example.com")
	foreign.event.ChannelID = f.foreignChannel
	gone, cancel := context.WithCancel(ctx)
	cancel()
	cancelled := f.call(gone, "e@example.com")

	f.st.flush([]*acceptCall{plain, unknownType, full, cancelled, foreign}, 1)

	require.NoError(t, plain.err)
	require.NoError(t, full.err)
	assert.Equal(t, plain.id, plain.res.EventID)
	assert.Equal(t, full.id, full.res.EventID)
	assert.ErrorIs(t, unknownType.err, ErrUnknownEventType)
	assert.ErrorIs(t, foreign.err, ErrUnknownChannel)
	assert.ErrorIs(t, cancelled.err, context.Canceled)

	// The same request alone in its group, for comparison.
	single := f.call(ctx, "b@example.com")
	single.event, single.now = full.event, full.now
	f.st.flush([]*acceptCall{single}, 1)
	require.NoError(t, single.err)
	assert.Equal(t, f.stored(t, single.id), f.stored(t, full.id))

	got := f.stored(t, full.id)
	assert.Equal(t, "cust-7", *got.CustomerRef)
	assert.True(t, delivery.Equal(*got.Delivery))
	assert.True(t, full.now.Equal(got.Received))
	assert.Equal(t, 1, got.Outbox)
	assert.Nil(t, f.stored(t, plain.id).CustomerRef, "an empty reference is stored as NULL")

	var n int
	require.NoError(t, f.st.db.Get(&n, `SELECT count(*) FROM events`))
	assert.Equal(t, 3, n, "the two good events of the batch and the single one")
	require.NoError(t, f.st.db.Get(&n, `SELECT count(*) FROM outbox`))
	assert.Equal(t, 3, n)
}

// A request PostgreSQL refuses (jsonb has no NUL character) fails the
// batch statement; the others are then stored one by one and it alone
// gets the error.
func TestAcceptBatchIsolatesARefusedRequest(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t)
	ctx := context.Background()

	good1, good2 := f.call(ctx, "a@example.com"), f.call(ctx, "b@example.com")
	poison := f.call(ctx, "c@example.com")
	poison.event.Payload = json.RawMessage(`{"note":"\u0000"}`)

	f.st.flush([]*acceptCall{good1, poison, good2}, 1)

	require.NoError(t, good1.err)
	require.NoError(t, good2.err)
	require.Error(t, poison.err)
	var n int
	require.NoError(t, f.st.db.Get(&n, `SELECT count(*) FROM events WHERE id IN ($1, $2)`, good1.id, good2.id))
	assert.Equal(t, 2, n)
	require.NoError(t, f.st.db.Get(&n, `SELECT count(*) FROM events`))
	assert.Equal(t, 2, n, "the refused event is not stored")
}

// Many concurrent accepts through AcceptEvent: every one answered with
// its own event, each stored once with one start order.
func TestConcurrentAcceptsAreEachStoredOnce(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t)
	ctx := context.Background()

	const n = 200
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := f.call(ctx, fmt.Sprintf("c%d@example.com", i))
			if i%10 == 0 {
				c.event.Type = "missing"
			}
			acc, err := f.st.AcceptEvent(ctx, c.event)
			ids[i], errs[i] = acc.EventID, err
		})
	}
	wg.Wait()

	seen := map[string]bool{}
	for i := range n {
		if i%10 == 0 {
			assert.ErrorIs(t, errs[i], ErrUnknownEventType, "request %d", i)
			continue
		}
		require.NoError(t, errs[i], "request %d", i)
		assert.False(t, seen[ids[i]], "request %d got another request's event", i)
		seen[ids[i]] = true
		var email string
		require.NoError(t, f.st.db.Get(&email, `SELECT customer_email FROM events WHERE id = $1`, ids[i]))
		assert.Equal(t, fmt.Sprintf("c%d@example.com", i), email, "request %d's event holds its own data", i)
	}
	var count int
	require.NoError(t, f.st.db.Get(&count, `SELECT count(*) FROM events`))
	assert.Equal(t, n-n/10, count)
	require.NoError(t, f.st.db.Get(&count, `SELECT count(DISTINCT event_id) FROM outbox`))
	assert.Equal(t, n-n/10, count)
}

// The accept statements are prepared on the connections they run on. A
// lost connection is every request's ErrUnavailable, and once PostgreSQL
// is back both statements run again on new connections.
func TestAcceptsRecoverFromALostConnection(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(testdb.URL(t, testdb.New(t)))
	require.NoError(t, err)
	proxy := tcpproxy.Start(t, u.Host)
	u.Host = proxy.Addr()
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	db, err := sqlx.Open("postgres", u.String())
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	f := newBatchFixtureOn(t, db)
	ctx := context.Background()

	accept := func() []error {
		batch := []*acceptCall{f.call(ctx, "a@example.com"), f.call(ctx, "b@example.com")}
		f.st.flush(batch, 0)
		one := f.call(ctx, "c@example.com")
		f.st.flush([]*acceptCall{one}, 1)
		return []error{batch[0].err, batch[1].err, one.err}
	}
	for _, err := range accept() { // prepares both statements
		require.NoError(t, err)
	}

	proxy.Cut()
	for _, err := range accept() {
		assert.ErrorIs(t, err, pg.ErrUnavailable)
	}

	require.NoError(t, proxy.Restore())
	for _, err := range accept() {
		require.NoError(t, err)
	}
	var n int
	require.NoError(t, db.Get(&n, `SELECT count(*) FROM events`))
	assert.Equal(t, 6, n, "the accepts before the cut and after it, none during")
}

// A group never holds two calls with one idempotency key, nor takes one
// whose key is in flight in another group: the later call waits in the
// queue, in its place, until the earlier one's group is done.
func TestGroupsTakeOneCallPerKey(t *testing.T) {
	t.Parallel()
	call := func(key string) *acceptCall {
		return &acceptCall{event: NewEvent{AccountID: "acc-1", IdempotencyKey: key}}
	}
	a, b, c, d, e := call("k1"), call(""), call("k1"), call("k2"), call("k1")
	q := &acceptQueue{keys: map[[2]string]bool{}, waiting: []*acceptCall{a, b, c, d, e}}
	assert.Equal(t, []*acceptCall{a, b, d}, q.take())
	assert.Equal(t, []*acceptCall{c, e}, q.waiting)
	assert.Empty(t, q.take(), "k1 is in flight")
	other := &acceptCall{event: NewEvent{AccountID: "acc-2", IdempotencyKey: "k1"}}
	q.waiting = append(q.waiting, other)
	assert.Equal(t, []*acceptCall{other}, q.take(), "keys are per account")
	delete(q.keys, [2]string{"acc-1", "k1"})
	assert.Equal(t, []*acceptCall{c}, q.take())
	assert.Equal(t, []*acceptCall{e}, q.waiting)

	q = &acceptQueue{keys: map[[2]string]bool{}}
	for range acceptGroupMax + 3 {
		q.waiting = append(q.waiting, call(""))
	}
	assert.Len(t, q.take(), acceptGroupMax)
	assert.Len(t, q.waiting, 3)
}

// Groups of every kind of call, drawn at random: valid events without a
// key, new keys, repeats of a key with the same body and with another,
// unknown event types (with and without a key), other accounts'
// channels, requests whose client is gone, a request PostgreSQL refuses,
// all under a daily quota that runs out half way. Each group is written
// as the queue writes it (flush), and every answer is held to a model
// that takes the calls one by one in order; at the end the rows are held
// to the model too: one event and one start order per accepted call,
// one key row per key, and the quota's and the funnel's counts equal to
// the events.
func TestGroupsOfMixedCallsAnswerAsOneByOne(t *testing.T) {
	t.Parallel()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	f := newBatchFixture(t)
	const limit = 40
	f.accounts.Quotas = accountdb.Quotas{DailyEvents: limit}
	ctx := context.Background()

	type keyed struct{ id, body string }
	keys := map[string]keyed{} // the model's keys, and the events they hold
	room := limit
	accepted := map[string]string{} // event id → email
	gone, cancel := context.WithCancel(ctx)
	cancel()
	n := 0
	for round := range 40 {
		type want struct {
			id       string // the event answered; "" when none
			replayed bool
			err      error
			anyErr   bool
		}
		var calls []*acceptCall
		var wants []want
		inGroup := map[string]bool{}
		for range 1 + rng.IntN(24) {
			n++
			c := f.call(ctx, fmt.Sprintf("c%d@example.com", n))
			var w want
			switch kind := rng.IntN(10); {
			case kind < 3: // valid, no key
			case kind < 6: // a key of a small set, one of two bodies
				k := fmt.Sprintf("key-%d", rng.IntN(8))
				if inGroup[k] { // the queue never puts two in one group
					break
				}
				inGroup[k] = true
				body := []string{"A", "B"}[rng.IntN(2)]
				c.event.IdempotencyKey, c.event.RequestHash = k, []byte(body)
				c.event.Payload = json.RawMessage(fmt.Sprintf(`{"customer":{"email":%q},"body":%q}`, c.event.CustomerEmail, body))
				if prior, ok := keys[k]; ok {
					if prior.body == body {
						w = want{id: prior.id, replayed: true}
					} else {
						w = want{err: ErrIdempotencyMismatch}
					}
					calls, wants = append(calls, c), append(wants, w)
					continue
				}
			case kind < 7:
				c.event.Type = "no-such-type"
				if rng.IntN(2) == 0 {
					c.event.IdempotencyKey, c.event.RequestHash = fmt.Sprintf("unknown-%d", n), []byte("A")
				}
				calls, wants = append(calls, c), append(wants, want{err: ErrUnknownEventType})
				continue
			case kind < 8:
				c.event.ChannelID = f.foreignChannel
				calls, wants = append(calls, c), append(wants, want{err: ErrUnknownChannel})
				continue
			case kind < 9:
				c.ctx = gone
				calls, wants = append(calls, c), append(wants, want{err: context.Canceled})
				continue
			default:
				c.event.Payload = json.RawMessage(`{"note":"\u0000"}`)
				calls, wants = append(calls, c), append(wants, want{anyErr: true})
				continue
			}
			// A new event: accepted while the quota has room.
			if room == 0 {
				w = want{err: &accountdb.QuotaError{Kind: accountdb.QuotaEvents, Limit: limit}}
			} else {
				room--
				w = want{id: c.id}
				accepted[c.id] = c.event.CustomerEmail
				if k := c.event.IdempotencyKey; k != "" {
					keys[k] = keyed{id: c.id, body: string(c.event.RequestHash)}
				}
			}
			calls, wants = append(calls, c), append(wants, w)
		}
		f.st.flush(calls, rng.IntN(accountdb.QuotaShards))
		for i, c := range calls {
			w := wants[i]
			switch {
			case w.anyErr:
				assert.Error(t, c.err, "round %d call %d", round, i)
			case w.err != nil:
				assert.Equal(t, w.err, c.err, "round %d call %d", round, i)
			default:
				require.NoError(t, c.err, "round %d call %d", round, i)
				assert.Equal(t, Accepted{EventID: w.id, Replayed: w.replayed}, c.res, "round %d call %d", round, i)
			}
		}
	}
	require.Zero(t, room, "the quota ran out")

	var events []struct {
		ID    string `db:"id"`
		Email string `db:"customer_email"`
	}
	require.NoError(t, f.st.db.Select(&events, `SELECT id, customer_email FROM events`))
	got := map[string]string{}
	for _, e := range events {
		got[e.ID] = e.Email
	}
	assert.Equal(t, accepted, got)
	var count int
	require.NoError(t, f.st.db.Get(&count, `SELECT count(DISTINCT event_id) FROM outbox WHERE kind = 'start'`))
	assert.Equal(t, len(accepted), count)
	var keyRows []struct {
		Key     string `db:"key"`
		EventID string `db:"event_id"`
		Hash    []byte `db:"request_hash"`
	}
	require.NoError(t, f.st.db.Select(&keyRows, `SELECT key, event_id, request_hash FROM idempotency_keys`))
	gotKeys := map[string]keyed{}
	for _, k := range keyRows {
		gotKeys[k.Key] = keyed{id: k.EventID, body: string(k.Hash)}
	}
	assert.Equal(t, keys, gotKeys)
	l, err := f.accounts.AccountLimits(ctx, f.account)
	require.NoError(t, err)
	assert.Equal(t, accountdb.Limit{Limit: limit, Used: limit}, l.DailyEvents)
	var funnel int
	require.NoError(t, f.st.db.Get(&funnel, `SELECT COALESCE(sum(accepted), 0) FROM invite_rollup_changes`))
	assert.Equal(t, len(accepted), funnel)
}

// Keyed and keyless accepts at once, each key sent several times at once
// with the same body: every send of a key gets the one event stored for
// it, exactly one of them as new, and the keyless ones their own.
func TestConcurrentKeyedAcceptsGetOneEventPerKey(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t)
	ctx := context.Background()
	const keys, repeats, plain = 8, 6, 40
	type answer struct {
		Accepted
		err error
	}
	answers := make([][]answer, keys+1)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k := range keys + 1 {
		n := repeats
		if k == keys {
			n = plain
		}
		for i := range n {
			wg.Go(func() {
				c := f.call(ctx, fmt.Sprintf("k%d-%d@example.com", k, i))
				if k < keys {
					c.event.CustomerEmail = fmt.Sprintf("k%d@example.com", k)
					c.event.IdempotencyKey, c.event.RequestHash = fmt.Sprintf("key-%d", k), []byte("same")
				}
				acc, err := f.st.AcceptEvent(ctx, c.event)
				mu.Lock()
				answers[k] = append(answers[k], answer{acc, err})
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	for k := range keys {
		news := 0
		for _, a := range answers[k] {
			require.NoError(t, a.err)
			assert.Equal(t, answers[k][0].EventID, a.EventID, "key %d", k)
			if !a.Replayed {
				news++
			}
		}
		assert.Equal(t, 1, news, "key %d", k)
	}
	seen := map[string]bool{}
	for _, a := range answers[keys] {
		require.NoError(t, a.err)
		assert.False(t, a.Replayed)
		assert.False(t, seen[a.EventID])
		seen[a.EventID] = true
	}
	var n int
	require.NoError(t, f.st.db.Get(&n, `SELECT count(*) FROM events`))
	assert.Equal(t, keys+plain, n)
}
