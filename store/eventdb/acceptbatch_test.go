package eventdb

import (
	"context"
	"encoding/json"
	"fmt"
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
	st, accounts := New(base), accountdb.New(base, "PT10S")
	acc, ch, err := accounts.CreateAccount(ctx, "batch")
	require.NoError(t, err)
	_, err = accounts.CreateEventType(ctx, acc.ID, "checkout", true)
	require.NoError(t, err)
	_, other, err := accounts.CreateAccount(ctx, "other")
	require.NoError(t, err)
	return batchFixture{st: st, account: acc.ID, channel: ch.ID, foreignChannel: other.ID,
		transactionDate: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
}

func (f batchFixture) call(ctx context.Context, email string) *acceptCall {
	return &acceptCall{ctx: ctx, id: pg.NewID("evt"), now: f.st.Now(), event: NewEvent{
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

	f.st.acceptBatch([]*acceptCall{plain, unknownType, full, cancelled, foreign})

	require.NoError(t, plain.err)
	require.NoError(t, full.err)
	assert.Equal(t, plain.id, plain.res.EventID)
	assert.Equal(t, full.id, full.res.EventID)
	assert.ErrorIs(t, unknownType.err, ErrUnknownEventType)
	assert.ErrorIs(t, foreign.err, ErrUnknownChannel)
	assert.ErrorIs(t, cancelled.err, context.Canceled)

	// The same request through the single statement, for comparison.
	single := f.call(ctx, "b@example.com")
	single.event = full.event
	_, err := f.st.acceptOne(ctx, single.event, single.id, full.now)
	require.NoError(t, err)
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

	f.st.acceptBatch([]*acceptCall{good1, poison, good2})

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
// lost connection is every request's pg.ErrUnavailable, and once PostgreSQL
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
		f.st.acceptBatch(batch)
		one := f.call(ctx, "c@example.com")
		_, err := f.st.acceptOne(ctx, one.event, one.id, one.now)
		return []error{batch[0].err, batch[1].err, err}
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
