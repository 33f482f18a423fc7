package persondb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/pg"
)

// SessionPrefix is the prefix of a session's id.
const SessionPrefix = "ses"

// Session is a signed-in browser of the console, with its person as they
// are now.
type Session struct {
	ID         string    `db:"id"`
	CSRFToken  string    `db:"csrf_token"`
	Issuer     string    `db:"issuer"`
	CreatedAt  time.Time `db:"created_at"`
	LastSeenAt time.Time `db:"last_seen_at"`
	ExpiresAt  time.Time `db:"expires_at"`
	Person     Person    `db:"person"`
}

// NewSession is a session to start.
type NewSession struct {
	TokenHash []byte // of the cookie's token
	// Replaces is the token hash of the browser's session before this
	// sign-in, ended in the same transaction; nil when it had none.
	Replaces  []byte
	PersonID  string
	CSRFToken string
	Issuer    string
	Lifetime  time.Duration // absolute: the session ends then, used or not
	Idle      time.Duration // sessions unused this long are swept
}

// StartSession starts a session for an active person (ErrDisabled
// otherwise), ending the one it replaces, and sweeps the sessions that
// have expired.
func (s *Store) StartSession(ctx context.Context, n NewSession) (Session, error) {
	now := s.Now()
	ses := Session{ID: pg.NewID(SessionPrefix), CSRFToken: n.CSRFToken, Issuer: n.Issuer, CreatedAt: now, LastSeenAt: now,
		ExpiresAt: now.Add(n.Lifetime)}
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &ses.Person, `SELECT `+personColumns+` FROM people WHERE id = $1 FOR SHARE`, n.PersonID); err != nil {
			return err
		}
		if !ses.Person.Active() {
			return ErrDisabled
		}
		if n.Replaces != nil {
			if _, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE token_hash = $1`, n.Replaces); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE last_seen_at <= $1 OR expires_at <= $2`,
			now.Add(-n.Idle), now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO console_sessions (token_hash, id, person_id, csrf_token, issuer, created_at,
			last_seen_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $6, $7)`,
			n.TokenHash, ses.ID, n.PersonID, n.CSRFToken, n.Issuer, now, ses.ExpiresAt); err != nil {
			return err
		}
		return RecordTx(ctx, tx, now, Entry{AccountID: ses.Person.AccountID, Actor: people.PersonActor(n.PersonID),
			Action: AuditSessionStarted, Target: ses.ID, Detail: map[string]string{"issuer": n.Issuer}})
	})
	if err != nil {
		return Session{}, fmt.Errorf("start session: %w", err)
	}
	return ses, nil
}

// Session returns the session of a cookie's token hash and marks it
// used: ErrNotFound when there is none, it has been idle for idle or
// more, it has expired, or its person is disabled.
func (s *Store) Session(ctx context.Context, tokenHash []byte, idle time.Duration) (Session, error) {
	now := s.Now()
	var ses Session
	err := s.db.GetContext(ctx, &ses, `UPDATE console_sessions s SET last_seen_at = $2 FROM people p
		WHERE s.token_hash = $1 AND p.id = s.person_id AND p.disabled_at IS NULL
		  AND s.last_seen_at > $3 AND s.expires_at > $2
		RETURNING s.id, s.csrf_token, s.issuer, s.created_at, s.last_seen_at, s.expires_at,
		  p.id AS "person.id", p.account_id AS "person.account_id", p.email AS "person.email", p.role AS "person.role",
		  p.language AS "person.language",
		  p.disabled_at AS "person.disabled_at", p.created_at AS "person.created_at", p.updated_at AS "person.updated_at"`,
		tokenHash, now, now.Add(-idle))
	if err != nil {
		return ses, fmt.Errorf("session: %w", pg.Translate(err))
	}
	return ses, nil
}

// EndSession ends the session of a cookie's token hash, as its person
// signs out; ending one that has gone already is no error.
func (s *Store) EndSession(ctx context.Context, tokenHash []byte) error {
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var ended struct {
			ID        string `db:"id"`
			PersonID  string `db:"person_id"`
			AccountID string `db:"account_id"`
		}
		err := tx.GetContext(ctx, &ended, `DELETE FROM console_sessions s USING people p WHERE s.token_hash = $1 AND p.id = s.person_id
			RETURNING s.id, s.person_id, p.account_id`, tokenHash)
		if err != nil {
			if errors.Is(pg.Translate(err), pg.ErrNotFound) {
				return nil
			}
			return err
		}
		return RecordTx(ctx, tx, s.Now(), Entry{AccountID: ended.AccountID, Actor: people.PersonActor(ended.PersonID),
			Action: AuditSessionEnded, Target: ended.ID})
	})
	if err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}
