package persondb

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Link makes an external provider's account (issuer, subject) sign in as
// the person. ErrConflict when that account is someone's already.
func (s *Store) Link(ctx context.Context, by people.Actor, accountID, personID, issuer, subject string) error {
	_, err := s.change(ctx, accountID, personID, func(tx *sqlx.Tx, p *Person) (Entry, error) {
		if err := insertIdentity(ctx, tx, s.Now(), issuer, subject, p.ID); err != nil {
			return Entry{}, err
		}
		// The subject is the provider's name for the person, sometimes
		// their address: the trail names the provider only.
		return Entry{Actor: by, Action: AuditPersonLinked, Detail: map[string]string{"issuer": issuer}}, nil
	})
	if err != nil {
		return fmt.Errorf("link %s: %w", personID, err)
	}
	return nil
}

func insertIdentity(ctx context.Context, tx *sqlx.Tx, now time.Time, issuer, subject, personID string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO person_identities (issuer, subject, person_id, created_at) VALUES ($1, $2, $3, $4)`,
		issuer, subject, personID, now)
	return err
}

// PersonByIdentity returns the person an external provider's account is
// linked to.
func (s *Store) PersonByIdentity(ctx context.Context, issuer, subject string) (Person, error) {
	var p Person
	err := s.db.GetContext(ctx, &p, `SELECT `+prefixed("p")+` FROM person_identities i JOIN people p ON p.id = i.person_id
		WHERE i.issuer = $1 AND i.subject = $2`, issuer, subject)
	if err != nil {
		return p, fmt.Errorf("person by identity: %w", pg.Translate(err))
	}
	return p, nil
}

// MatchByEmail links an external provider's account to the person whose
// address the provider vouched for, and returns them: the first sign-in
// of a person whom `users link` did not link. From then on the account
// signs in as that person, whatever address the provider says later.
// ErrNotFound when nobody has the address; ErrConflict when the person
// is linked to another account of the same provider.
func (s *Store) MatchByEmail(ctx context.Context, issuer, subject, email string) (Person, error) {
	var p Person
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &p, `SELECT `+personColumns+` FROM people WHERE email = $1 AND email <> '' FOR UPDATE`, email); err != nil {
			return err
		}
		var other int
		if err := tx.GetContext(ctx, &other, `SELECT count(*) FROM person_identities WHERE person_id = $1 AND issuer = $2`, p.ID, issuer); err != nil {
			return err
		}
		if other > 0 {
			return pg.ErrConflict
		}
		now := s.Now()
		if err := insertIdentity(ctx, tx, now, issuer, subject, p.ID); err != nil {
			return err
		}
		return RecordTx(ctx, tx, now, Entry{AccountID: p.AccountID, Actor: people.PersonActor(p.ID), Action: AuditPersonLinked,
			Target: p.ID, Detail: map[string]string{"issuer": issuer, "by": "email"}})
	})
	if err != nil {
		return p, fmt.Errorf("match by email: %w", err)
	}
	return p, nil
}

// prefixed is personColumns qualified by a table alias.
func prefixed(alias string) string {
	return alias + ".id, " + alias + ".account_id, " + alias + ".email, " + alias + ".role, " + alias + ".language, " + alias + ".disabled_at, " +
		alias + ".created_at, " + alias + ".updated_at"
}
