package auth

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/touchpoint/touchpoint/store/authdb"
)

// useTracker enforces the sliding idle lifetime across API replicas.
//
// Each replica keeps the latest use it knows of every token in memory and
// writes the uses it saw to PostgreSQL (token_uses) in one batched upsert
// per flush interval F, and on shutdown. The database is read only when
// memory says the token is idle. The contract, with idle limit I (300s):
//
//   - a token used within I of its last use, on any replica, is always
//     accepted;
//   - a token idle longer than I + F is always rejected.
//
// A use is accepted iff now − max(iat, known uses) ≤ I + F, where the
// known uses include the database's value whenever memory alone would
// exceed I. Why the first promise holds: a use not yet in the database is
// at most F old (assuming flushes succeed), and it was accepted because of
// an earlier use or iat at most I before it, itself in the database,
// in memory here, or a use younger than F with the same property; so the
// database or iat always holds a value within I + F of now. Uses accepted
// only thanks to the F tolerance are written at once, which keeps that
// chain intact. Why the second holds: every value compared is a real use
// (or iat), so a token whose true last use is older than I + F fails.
type useTracker struct {
	store       Store
	idle, flush time.Duration
	now         func() time.Time
	log         *slog.Logger

	mu   sync.Mutex
	uses map[string]*tokenUse
}

type tokenUse struct {
	last  time.Time // latest known use, local or from the database
	exp   time.Time
	dirty bool // last is a local use not yet written
	dead  bool // rejected as idle: it can never come back
}

// use checks the idle rule for one request and records the use.
func (u *useTracker) use(ctx context.Context, jti string, iat, exp time.Time) error {
	now := u.now()
	u.mu.Lock()
	known := iat
	if e := u.uses[jti]; e != nil {
		if e.dead {
			u.mu.Unlock()
			return u.idleErr()
		}
		known = later(known, e.last)
	}
	if now.Sub(known) <= u.idle {
		u.record(jti, now, exp, true)
		u.mu.Unlock()
		return nil
	}
	u.mu.Unlock()

	// Idle as far as this replica knows: another one may have seen a use.
	last, ok, err := u.store.TokenLastUse(ctx, jti)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if ok {
		known = later(known, last)
	}
	idle := now.Sub(known)
	if idle > u.idle+u.flush {
		u.mu.Lock()
		u.uses[jti] = &tokenUse{last: known, exp: exp, dead: true}
		u.mu.Unlock()
		return u.idleErr()
	}
	dirty := true
	if idle > u.idle {
		// Accepted within the flush tolerance only: write it through so
		// other replicas can count from it (see the type's comment).
		if err := u.store.RecordTokenUses(ctx, []authdb.TokenUse{{JTI: jti, LastUsedAt: now, ExpiresAt: exp}}); err != nil {
			return fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		dirty = false
	}
	u.mu.Lock()
	u.record(jti, later(known, now), exp, dirty)
	u.mu.Unlock()
	return nil
}

func (u *useTracker) idleErr() error {
	return invalid(fmt.Sprintf("token idle for more than %ds", int(u.idle/time.Second)))
}

// record notes a use; u.mu is held.
func (u *useTracker) record(jti string, at, exp time.Time, dirty bool) {
	e := u.uses[jti]
	if e == nil {
		e = &tokenUse{exp: exp}
		u.uses[jti] = e
	}
	if at.After(e.last) {
		e.last = at
		e.dirty = e.dirty || dirty
	}
}

// flushOnce writes every unwritten use in one batch and forgets tokens
// that are expired or idle past any chance of use.
func (u *useTracker) flushOnce(ctx context.Context) error {
	now := u.now()
	var batch []authdb.TokenUse
	u.mu.Lock()
	for jti, e := range u.uses {
		switch {
		case e.dirty:
			batch = append(batch, authdb.TokenUse{JTI: jti, LastUsedAt: e.last, ExpiresAt: e.exp})
			e.dirty = false
		case now.After(e.exp), !e.dead && now.Sub(e.last) > u.idle+u.flush:
			delete(u.uses, jti)
		}
	}
	u.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := u.store.RecordTokenUses(ctx, batch); err != nil {
		u.mu.Lock()
		for _, b := range batch {
			u.record(b.JTI, b.LastUsedAt, b.ExpiresAt, true)
			u.uses[b.JTI].dirty = true // record only marks newer uses
		}
		u.mu.Unlock()
		return err
	}
	return nil
}

// run flushes every interval until ctx ends, then once more.
func (u *useTracker) run(ctx context.Context) {
	t := time.NewTicker(u.flush)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := u.flushOnce(fctx); err != nil {
				u.log.Error("final flush of token uses failed", "error", err)
			}
			return
		case <-t.C:
			if err := u.flushOnce(ctx); err != nil && ctx.Err() == nil {
				u.log.Warn("flush token uses failed; will retry", "error", err)
			}
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
