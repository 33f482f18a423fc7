package persondb

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/pg"
)

// LinkPrefix is the prefix of a sign-in link's id.
const LinkPrefix = "lnk"

// SignInLink is a one-time sign-in link mailed to a person, with the
// authorization request it will answer.
type SignInLink struct {
	ID            string     `db:"id"`
	TokenHash     []byte     `db:"token_hash"`
	BrowserHash   []byte     `db:"browser_hash"` // of the cookie of the browser that asked
	PersonID      string     `db:"person_id"`
	ClientID      string     `db:"client_id"`
	RedirectURI   string     `db:"redirect_uri"`
	State         string     `db:"state"`
	Nonce         string     `db:"nonce"`
	CodeChallenge string     `db:"code_challenge"`
	CreatedAt     time.Time  `db:"created_at"`
	ExpiresAt     time.Time  `db:"expires_at"`
	UsedAt        *time.Time `db:"used_at"`
}

const linkColumns = `id, token_hash, browser_hash, person_id, client_id, redirect_uri, state, nonce, code_challenge, created_at, expires_at, used_at`

// Why a link does not sign in.
var (
	ErrMailCap      = errors.New("this address has had its sign-in mails for the hour")
	ErrLinkUsed     = errors.New("the sign-in link has been used")
	ErrLinkExpired  = errors.New("the sign-in link has expired")
	ErrOtherBrowser = errors.New("the sign-in link was asked for in another browser")
)

// Check says whether the link signs in now in the browser whose cookie
// hashes to browserHash: nil, ErrLinkUsed, ErrLinkExpired or
// ErrOtherBrowser.
func (l SignInLink) Check(now time.Time, browserHash []byte) error {
	switch {
	case l.UsedAt != nil:
		return ErrLinkUsed
	case !now.Before(l.ExpiresAt):
		return ErrLinkExpired
	case subtle.ConstantTimeCompare(l.BrowserHash, browserHash) != 1:
		return ErrOtherBrowser
	}
	return nil
}

// keepLinks is how long links are kept after they were made: long past
// their use, as the record the hourly cap counts.
const keepLinks = 24 * time.Hour

// CreateSignInLink stores a link for an active person, valid for ttl,
// unless maxPerHour links were made for them in the last hour
// (ErrMailCap). ErrNotFound for an unknown person, ErrDisabled for a
// disabled one.
func (s *Store) CreateSignInLink(ctx context.Context, l SignInLink, ttl time.Duration, maxPerHour int) (SignInLink, error) {
	now := s.Now()
	l.ID, l.CreatedAt, l.ExpiresAt, l.UsedAt = pg.NewID(LinkPrefix), now, now.Add(ttl), nil
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		var p Person
		// The person's row lock orders concurrent requests, so the cap holds.
		if err := tx.GetContext(ctx, &p, `SELECT `+personColumns+` FROM people WHERE id = $1 FOR UPDATE`, l.PersonID); err != nil {
			return err
		}
		if !p.Active() {
			return ErrDisabled
		}
		var recent int
		if err := tx.GetContext(ctx, &recent, `SELECT count(*) FROM sign_in_links WHERE person_id = $1 AND created_at > $2`,
			p.ID, now.Add(-time.Hour)); err != nil {
			return err
		}
		if recent >= maxPerHour {
			return ErrMailCap
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sign_in_links WHERE created_at < $1`, now.Add(-keepLinks)); err != nil {
			return err
		}
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO sign_in_links (`+linkColumns+`) VALUES (:id, :token_hash, :browser_hash,
			:person_id, :client_id, :redirect_uri, :state, :nonce, :code_challenge, :created_at, :expires_at, :used_at)`, l); err != nil {
			return err
		}
		return RecordTx(ctx, tx, now, Entry{AccountID: p.AccountID, Actor: people.PersonActor(p.ID), Action: AuditLinkSent,
			Target: p.ID, Detail: map[string]string{"link": l.ID}})
	})
	if err != nil {
		return SignInLink{}, fmt.Errorf("create sign-in link: %w", err)
	}
	return l, nil
}

// SignInLinkByToken returns the link of a token's hash, used or not, and
// its person.
func (s *Store) SignInLinkByToken(ctx context.Context, tokenHash []byte) (SignInLink, Person, error) {
	var l SignInLink
	if err := s.db.GetContext(ctx, &l, `SELECT `+linkColumns+` FROM sign_in_links WHERE token_hash = $1`, tokenHash); err != nil {
		return l, Person{}, fmt.Errorf("sign-in link: %w", pg.Translate(err))
	}
	p, err := s.PersonByID(ctx, l.PersonID)
	return l, p, err
}

// AuthCode is an authorization code of the code flow, stored as its hash.
type AuthCode struct {
	CodeHash      []byte     `db:"code_hash"`
	PersonID      string     `db:"person_id"`
	ClientID      string     `db:"client_id"`
	RedirectURI   string     `db:"redirect_uri"`
	Nonce         string     `db:"nonce"`
	CodeChallenge string     `db:"code_challenge"`
	AuthTime      time.Time  `db:"auth_time"` // when the person proved who they are
	CreatedAt     time.Time  `db:"created_at"`
	ExpiresAt     time.Time  `db:"expires_at"`
	UsedAt        *time.Time `db:"used_at"`
}

const codeColumns = `code_hash, person_id, client_id, redirect_uri, nonce, code_challenge, auth_time, created_at, expires_at, used_at`

// UseSignInLink spends the link of tokenHash in the browser of
// browserHash and stores in its place the authorization code of
// codeHash, valid for ttl, which answers the link's request. The link's
// Check decides; a person disabled since is ErrDisabled. A link refused
// for another browser stays usable in its own.
func (s *Store) UseSignInLink(ctx context.Context, tokenHash, browserHash, codeHash []byte, ttl time.Duration) (SignInLink, AuthCode, error) {
	now := s.Now()
	var l SignInLink
	var c AuthCode
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &l, `SELECT `+linkColumns+` FROM sign_in_links WHERE token_hash = $1 FOR UPDATE`, tokenHash); err != nil {
			return err
		}
		if err := l.Check(now, browserHash); err != nil {
			return err
		}
		var active bool
		if err := tx.GetContext(ctx, &active, `SELECT disabled_at IS NULL FROM people WHERE id = $1`, l.PersonID); err != nil {
			return err
		}
		if !active {
			return ErrDisabled
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sign_in_links SET used_at = $2 WHERE id = $1`, l.ID, now); err != nil {
			return err
		}
		l.UsedAt = &now
		c = AuthCode{CodeHash: codeHash, PersonID: l.PersonID, ClientID: l.ClientID, RedirectURI: l.RedirectURI, Nonce: l.Nonce,
			CodeChallenge: l.CodeChallenge, AuthTime: now, CreatedAt: now, ExpiresAt: now.Add(ttl)}
		if _, err := tx.ExecContext(ctx, `DELETE FROM authorization_codes WHERE expires_at < $1`, now.Add(-time.Hour)); err != nil {
			return err
		}
		_, err := tx.NamedExecContext(ctx, `INSERT INTO authorization_codes (`+codeColumns+`) VALUES (:code_hash, :person_id,
			:client_id, :redirect_uri, :nonce, :code_challenge, :auth_time, :created_at, :expires_at, :used_at)`, c)
		return err
	})
	if err != nil {
		return l, AuthCode{}, fmt.Errorf("use sign-in link: %w", err)
	}
	return l, c, nil
}

// UseAuthCode spends an authorization code: the first call for a code
// that has not expired gets it, with its person; every other call gets
// ErrNotFound. A code of a person disabled since is ErrDisabled.
func (s *Store) UseAuthCode(ctx context.Context, codeHash []byte) (AuthCode, Person, error) {
	now := s.Now()
	var c AuthCode
	err := s.db.GetContext(ctx, &c, `UPDATE authorization_codes SET used_at = $2
		WHERE code_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING `+codeColumns, codeHash, now)
	if err != nil {
		return c, Person{}, fmt.Errorf("use authorization code: %w", pg.Translate(err))
	}
	p, err := s.PersonByID(ctx, c.PersonID)
	if err == nil && !p.Active() {
		err = ErrDisabled
	}
	return c, p, err
}
