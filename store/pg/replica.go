package pg

// Reads served by a streaming replica (DATABASE_READ_URL). A read goes to
// the replica only when three things hold: its context was marked by
// Replica.Reads (the API marks the requests that only read: the public
// reads, stats and lists), the repository asked through DB.Read (the
// reads that may be a little behind; everything else, and every write,
// keeps to the primary), and the replica is fit — measured within MaxLag
// of the primary and answering — and the client has not written within
// FreshFor. Otherwise the read goes to the primary, which always has
// the answer.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

const (
	// FreshFor is how long after its own write a client's reads stay on
	// the primary (longer while the replica lags more), so a client
	// reads what it has just written.
	FreshFor = 5 * time.Second
	// MaxLag is how far behind the primary the replica may be and still
	// serve reads.
	MaxLag = 30 * time.Second
	// ProbeEvery is how often the replica's lag is measured.
	ProbeEvery = time.Second
	// probeTimeout bounds one measurement: a replica that does not
	// answer within it is down.
	probeTimeout = 3 * time.Second
	// maxSamples bounds the primary's WAL positions kept to measure the
	// lag with (an hour of probes): a replica further behind is reported
	// that far behind.
	maxSamples = 3600
)

// Where a read that the replica could serve went, and why (the argument
// of ReplicaOptions.OnRead).
const (
	ReadReplica  = "replica"   // to the replica
	ReadOwnWrite = "own_write" // to the primary: the client wrote within FreshFor
	ReadLagging  = "lagging"   // to the primary: the replica is more than MaxLag behind
	ReadDown     = "down"      // to the primary: the replica does not answer, or is no replica
)

// ReplicaOptions tune a Replica; zero values take the defaults above.
type ReplicaOptions struct {
	FreshFor, MaxLag, ProbeEvery time.Duration
	// Now is the clock of the lag and of FreshFor; default time.Now.
	Now func() time.Time
	// OnRead is told where each read that the replica could serve went
	// (ReadReplica, ReadOwnWrite, ReadLagging, ReadDown): the metric.
	OnRead func(reason string)
	// Logger is told when the replica stops or starts serving reads.
	Logger *slog.Logger
}

// Replica is a streaming replica of the primary: its pool, its lag
// measured against the primary, and the clients that wrote lately.
type Replica struct {
	pool, primary *sqlx.DB
	stmts         *Statements // the reads of DB.ReadPlanned on the replica
	opts          ReplicaOptions

	mu        sync.Mutex
	samples   []walSample // the primary's WAL positions, oldest first
	measured  bool        // a probe has found the replica's lag
	lag       time.Duration
	down      error                // why the replica cannot serve reads; nil: it can
	sameSys   bool                 // its system identifier is the primary's
	writes    map[string]time.Time // client → its last write
	prunedAt  time.Time
	lastState string // for the log: the state last reported
}

// walSample is the primary's WAL position at a time: a replica that has
// replayed lsn has every change committed before at.
type walSample struct {
	at  time.Time
	lsn uint64
}

// OpenReplica makes the pool of the replica at url, of at most maxConns
// connections, beside the primary's pool. It does not connect: a replica
// that is down at start is found by the first probe, and until a probe
// finds it fit every read goes to the primary.
func OpenReplica(url string, primary *sqlx.DB, maxConns int, opts ReplicaOptions) (*Replica, error) {
	pool, err := newPool(url, maxConns)
	if err != nil {
		return nil, fmt.Errorf("open read replica: %w", err)
	}
	if opts.FreshFor <= 0 {
		opts.FreshFor = FreshFor
	}
	if opts.MaxLag <= 0 {
		opts.MaxLag = MaxLag
	}
	if opts.ProbeEvery <= 0 {
		opts.ProbeEvery = ProbeEvery
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Replica{pool: pool, primary: primary, stmts: NewStatements(pool), opts: opts, writes: map[string]time.Time{},
		down: errors.New("not measured yet")}, nil
}

// Pool is the replica's connection pool.
func (r *Replica) Pool() *sqlx.DB { return r.pool }

// Close closes the replica's pool.
func (r *Replica) Close() error { return r.pool.Close() }

// Run measures the replica's lag every ProbeEvery until ctx ends.
func (r *Replica) Run(ctx context.Context) error {
	t := time.NewTicker(r.opts.ProbeEvery)
	defer t.Stop()
	for {
		r.Probe(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Probe measures the replica's lag once. The lag is measured against the
// primary's own WAL positions, never a clock of either server: each probe
// reads the primary's position, then the replica's replayed position; the
// replica is as far behind as the time since the newest primary position
// it has replayed. A primary that cannot be read leaves its last position
// to age, so the lag grows: a replica that cannot be compared is not
// trusted for long.
func (r *Replica) Probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	at := r.opts.Now()
	var primaryLSN string
	primaryErr := r.primary.GetContext(ctx, &primaryLSN, `SELECT pg_current_wal_lsn()::text`)
	var st struct {
		InRecovery bool           `db:"in_recovery"`
		Replayed   sql.NullString `db:"replayed"`
	}
	err := r.pool.GetContext(ctx, &st, `SELECT pg_is_in_recovery() AS in_recovery, pg_last_wal_replay_lsn()::text AS replayed`)
	var sysErr error
	if err == nil && !r.isSameSystem() {
		sysErr = r.checkSystem(ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if primaryErr == nil {
		if lsn, perr := parseLSN(primaryLSN); perr == nil {
			r.addSample(at, lsn)
		}
	}
	switch {
	case err != nil:
		r.setDown(fmt.Errorf("the read replica does not answer: %w", Translate(err)))
	case sysErr != nil:
		r.setDown(sysErr)
	case !st.InRecovery:
		r.setDown(errors.New("the read replica is not a standby (pg_is_in_recovery() is false): it may have been promoted"))
	case !st.Replayed.Valid:
		r.setDown(errors.New("the read replica has replayed nothing yet"))
	case len(r.samples) == 0:
		r.setDown(fmt.Errorf("the primary's WAL position is unknown: %w", Translate(primaryErr)))
	default:
		replayed, perr := parseLSN(st.Replayed.String)
		if perr != nil {
			r.setDown(perr)
			break
		}
		// The newest position it has replayed; none: it is behind all
		// of them, so at least as far as the oldest.
		i := 0
		for j, s := range r.samples {
			if s.lsn > replayed {
				break
			}
			i = j
		}
		r.lag = max(0, at.Sub(r.samples[i].at))
		r.samples = r.samples[i:] // older ones are never needed again
		r.measured, r.down = true, nil
	}
	r.logState()
}

// addSample keeps the primary's position at a time; an unchanged
// position keeps only its newest time.
func (r *Replica) addSample(at time.Time, lsn uint64) {
	if n := len(r.samples); n > 0 && r.samples[n-1].lsn >= lsn {
		r.samples[n-1].at = at
		return
	}
	if len(r.samples) == maxSamples {
		r.samples = r.samples[1:]
	}
	r.samples = append(r.samples, walSample{at: at, lsn: lsn})
}

func (r *Replica) isSameSystem() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sameSys
}

// checkSystem makes sure the replica is a copy of the primary's cluster
// (the same system identifier), whose WAL positions can be compared.
func (r *Replica) checkSystem(ctx context.Context) error {
	const q = `SELECT system_identifier::text FROM pg_control_system()`
	var p, s string
	if err := r.primary.GetContext(ctx, &p, q); err != nil {
		return nil // the primary's trouble; its samples age
	}
	if err := r.pool.GetContext(ctx, &s, q); err != nil {
		return fmt.Errorf("the read replica does not answer: %w", Translate(err))
	}
	if p != s {
		return errors.New("DATABASE_READ_URL is not a replica of DATABASE_URL's server (their system identifiers differ)")
	}
	r.mu.Lock()
	r.sameSys = true
	r.mu.Unlock()
	return nil
}

func (r *Replica) setDown(err error) { r.down, r.measured = err, false }

// logState logs a change between serving reads and not.
func (r *Replica) logState() {
	s := r.statusLocked()
	if s.State == r.lastState || r.opts.Logger == nil {
		r.lastState = s.State
		return
	}
	r.lastState = s.State
	if s.State == StateOK {
		r.opts.Logger.Info("the read replica serves reads", "lag_seconds", s.Lag.Seconds())
		return
	}
	r.opts.Logger.Warn("reads go to the primary: "+s.Err.Error(), "replica_state", s.State)
}

// The states of a replica (ReplicaStatus.State).
const (
	StateOK      = "ok"      // it serves reads
	StateLagging = "lagging" // more than MaxLag behind: reads go to the primary
	StateDown    = "down"    // it does not answer, or is no replica of the primary
)

// ReplicaStatus is what the last probe found.
type ReplicaStatus struct {
	State string
	// Lag is how far the replica was behind the primary (0 when down).
	Lag time.Duration
	// Err says why reads go to the primary; nil when State is StateOK.
	Err error
}

// Status is what the last probe found.
func (r *Replica) Status() ReplicaStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.statusLocked()
}

func (r *Replica) statusLocked() ReplicaStatus {
	switch {
	case r.down != nil:
		return ReplicaStatus{State: StateDown, Err: r.down}
	case r.lag > r.opts.MaxLag:
		return ReplicaStatus{State: StateLagging, Lag: r.lag,
			Err: fmt.Errorf("the read replica is %s behind the primary (more than %s)", r.lag.Round(time.Second), r.opts.MaxLag)}
	}
	return ReplicaStatus{State: StateOK, Lag: r.lag}
}

// Fallback is the error of Ready: why reads that the replica could serve
// go to the primary. ReadinessState names the state for a readiness
// answer.
type Fallback struct{ Status ReplicaStatus }

func (f *Fallback) Error() string { return f.Status.Err.Error() }

// ReadinessState is "lagging" or "down".
func (f *Fallback) ReadinessState() string { return f.Status.State }

// Ready is nil while the replica serves reads, else a *Fallback. Reads
// then go to the primary, which answers them all: a process stays ready.
func (r *Replica) Ready() error {
	if s := r.Status(); s.State != StateOK {
		return &Fallback{Status: s}
	}
	return nil
}

// Wrote notes that client has just written: its reads keep to the
// primary for FreshFor (longer while the replica lags more).
func (r *Replica) Wrote(client string) {
	if client == "" {
		return
	}
	now := r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes[client] = now
	// Forget writes too old to matter, at most once a minute: the map
	// holds the clients that wrote within the last minute or so.
	if now.Sub(r.prunedAt) > time.Minute {
		for c, at := range r.writes {
			if now.Sub(at) > r.opts.FreshFor+r.opts.MaxLag {
				delete(r.writes, c)
			}
		}
		r.prunedAt = now
	}
}

// readsKey marks a context whose reads the replica may serve.
type readsKey struct{}

// Reads marks ctx as a request of client ("" for anyone, such as a
// public page) that only reads: the reads asked through DB.Read may go
// to the replica.
func (r *Replica) Reads(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, readsKey{}, client)
}

// serves reports whether a read of client goes to the replica, and tells
// OnRead where it went.
func (r *Replica) serves(client string) bool {
	now := r.opts.Now()
	r.mu.Lock()
	reason := ReadReplica
	switch s := r.statusLocked(); {
	case s.State == StateDown:
		reason = ReadDown
	case s.State == StateLagging:
		reason = ReadLagging
	case client != "" && now.Sub(r.writes[client]) < max(r.opts.FreshFor, r.lag):
		reason = ReadOwnWrite
	}
	r.mu.Unlock()
	if r.opts.OnRead != nil {
		r.opts.OnRead(reason)
	}
	return reason == ReadReplica
}

// failed reports whether a read on the replica failed in a way the
// primary does not share — the replica went away (it is then taken out
// until a probe finds it again), or replay cancelled the query — so the
// read is repeated on the primary.
func (r *Replica) failed(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "40001" { // canceling statement due to conflict with recovery
		return true
	}
	if !errors.Is(Translate(err), ErrUnavailable) {
		return false
	}
	r.mu.Lock()
	r.setDown(fmt.Errorf("a read on the read replica failed: %w", err))
	r.logState()
	r.mu.Unlock()
	if r.opts.OnRead != nil {
		r.opts.OnRead(ReadDown)
	}
	return true
}

// Queryer runs the reads of DB.Read.
type Queryer interface {
	sqlx.QueryerContext
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

// Read is where a read that may be a little behind goes: the replica when
// ctx was marked by Replica.Reads and the replica serves the client, else
// the primary. A read that fails on the replica because it went away is
// repeated on the primary.
func (d *DB) Read(ctx context.Context) Queryer {
	r := d.replica.Load()
	if r == nil || !r.servesRead(ctx) {
		return d.pool
	}
	return replicaRead{r: r, replica: r.pool, primary: d.pool}
}

// ReadPlanned is Read for a read whose planning costs more than its run,
// with a text drawn from a small set (see Statements): it runs as a
// prepared statement, and PostgreSQL reuses its plan.
func (d *DB) ReadPlanned(ctx context.Context) Queryer {
	r := d.replica.Load()
	if r == nil || !r.servesRead(ctx) {
		return prepared{d.stmts}
	}
	return replicaRead{r: r, replica: prepared{r.stmts}, primary: prepared{d.stmts}}
}

// servesRead reports whether ctx was marked by Reads and the replica
// serves its client.
func (r *Replica) servesRead(ctx context.Context) bool {
	client, marked := ctx.Value(readsKey{}).(string)
	return marked && r.serves(client)
}

// UseReplica sends the reads of DB.Read to r where they may go.
func (d *DB) UseReplica(r *Replica) { d.replica.Store(r) }

// replicaRead runs a read on the replica, and on the primary when the
// replica fails it.
type replicaRead struct {
	r                *Replica
	replica, primary Queryer
}

func (q replicaRead) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	err := q.replica.GetContext(ctx, dest, query, args...)
	if q.r.failed(ctx, err) {
		return q.primary.GetContext(ctx, dest, query, args...)
	}
	return err
}

func (q replicaRead) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	err := q.replica.SelectContext(ctx, dest, query, args...)
	if q.r.failed(ctx, err) {
		// Rows read before the failure are dropped: Select appends.
		if v := reflect.ValueOf(dest); v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Slice {
			v.Elem().SetLen(0)
		}
		return q.primary.SelectContext(ctx, dest, query, args...)
	}
	return err
}

func (q replicaRead) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := q.replica.QueryContext(ctx, query, args...)
	if q.r.failed(ctx, err) {
		return q.primary.QueryContext(ctx, query, args...)
	}
	return rows, err
}

func (q replicaRead) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	rows, err := q.replica.QueryxContext(ctx, query, args...)
	if q.r.failed(ctx, err) {
		return q.primary.QueryxContext(ctx, query, args...)
	}
	return rows, err
}

// QueryRowxContext has no second try: its error comes with Scan. Use
// GetContext.
func (q replicaRead) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	return q.replica.QueryRowxContext(ctx, query, args...)
}

// parseLSN reads a WAL position as PostgreSQL writes it ("16/B374D848").
func parseLSN(s string) (uint64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("WAL position %q is not of the form X/Y", s)
	}
	return h<<32 | l, nil
}
