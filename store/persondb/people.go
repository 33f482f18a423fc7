package persondb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/pg"
)

// Person is someone who signs in to the console of one account.
type Person struct {
	ID        string      `db:"id"`
	AccountID string      `db:"account_id"`
	Email     string      `db:"email"` // lower case; "" once erased
	Role      people.Role `db:"role"`
	// Language is the console's language the person chose; "" for their
	// browser's.
	Language string `db:"language"`
	// DisabledAt is when the person was disabled (or erased); nil while
	// they may sign in.
	DisabledAt *time.Time `db:"disabled_at"`
	CreatedAt  time.Time  `db:"created_at"`
	UpdatedAt  time.Time  `db:"updated_at"`
}

// Active reports whether the person may sign in.
func (p Person) Active() bool { return p.DisabledAt == nil }

const personColumns = `id, account_id, email, role, language, disabled_at, created_at, updated_at`

// ErrDisabled: the person is disabled; nothing of theirs changes.
var ErrDisabled = errors.New("the person is disabled")

// CreatePerson adds a person to an account; the email is taken as given
// (people.NormalizeEmail makes it). ErrConflict when the address is
// someone's already, in any account: an address signs in to one account.
func (s *Store) CreatePerson(ctx context.Context, by people.Actor, accountID, email string, role people.Role) (Person, error) {
	now := s.Now()
	p := Person{ID: pg.NewID(people.IDPrefix), AccountID: accountID, Email: email, Role: role, CreatedAt: now, UpdatedAt: now}
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.NamedExecContext(ctx, `INSERT INTO people (`+personColumns+`)
			VALUES (:id, :account_id, :email, :role, :language, :disabled_at, :created_at, :updated_at)`, p); err != nil {
			return err
		}
		return RecordTx(ctx, tx, now, Entry{AccountID: accountID, Actor: by, Action: AuditPersonCreated, Target: p.ID,
			Detail: map[string]string{"role": string(role)}})
	})
	if err != nil {
		return Person{}, fmt.Errorf("create person: %w", err)
	}
	return p, nil
}

// People lists an account's people, oldest first.
func (s *Store) People(ctx context.Context, accountID string) ([]Person, error) {
	var out []Person
	err := s.db.SelectContext(ctx, &out, `SELECT `+personColumns+` FROM people WHERE account_id = $1 ORDER BY created_at, id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("list people: %w", pg.Translate(err))
	}
	return out, nil
}

// Person returns a person of the account; ErrNotFound for anyone else's.
func (s *Store) Person(ctx context.Context, accountID, id string) (Person, error) {
	var p Person
	err := s.db.GetContext(ctx, &p, `SELECT `+personColumns+` FROM people WHERE id = $1 AND account_id = $2`, id, accountID)
	if err != nil {
		return p, fmt.Errorf("person %s: %w", id, pg.Translate(err))
	}
	return p, nil
}

// PersonByID returns a person whatever their account: for the issuer,
// which knows a person by the subject of its tokens alone.
func (s *Store) PersonByID(ctx context.Context, id string) (Person, error) {
	var p Person
	if err := s.db.GetContext(ctx, &p, `SELECT `+personColumns+` FROM people WHERE id = $1`, id); err != nil {
		return p, fmt.Errorf("person %s: %w", id, pg.Translate(err))
	}
	return p, nil
}

// PersonByEmail returns the person an address (as NormalizeEmail writes
// it) belongs to.
func (s *Store) PersonByEmail(ctx context.Context, email string) (Person, error) {
	var p Person
	if email == "" {
		return p, pg.ErrNotFound
	}
	if err := s.db.GetContext(ctx, &p, `SELECT `+personColumns+` FROM people WHERE email = $1`, email); err != nil {
		return p, fmt.Errorf("person by email: %w", pg.Translate(err))
	}
	return p, nil
}

// change locks a person of the account, lets apply change it in tx, and
// records the change.
func (s *Store) change(ctx context.Context, accountID, id string, apply func(tx *sqlx.Tx, p *Person) (Entry, error)) (Person, error) {
	var p Person
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		if err := tx.GetContext(ctx, &p, `SELECT `+personColumns+` FROM people WHERE id = $1 AND account_id = $2 FOR UPDATE`,
			id, accountID); err != nil {
			return err
		}
		e, err := apply(tx, &p)
		if err != nil || e.Action == "" {
			return err
		}
		e.AccountID, e.Target = p.AccountID, p.ID
		return RecordTx(ctx, tx, s.Now(), e)
	})
	return p, err
}

// SetLanguage sets the console's language a person reads in (lang, which
// the caller checked is one of the console's; "" for their browser's).
// Changing it is the person's own business, but the trail records it as
// every change.
func (s *Store) SetLanguage(ctx context.Context, by people.Actor, accountID, id, lang string) (Person, error) {
	p, err := s.change(ctx, accountID, id, func(tx *sqlx.Tx, p *Person) (Entry, error) {
		if p.Language == lang {
			return Entry{}, nil
		}
		p.Language, p.UpdatedAt = lang, s.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE people SET language = $2, updated_at = $3 WHERE id = $1`, p.ID, lang, p.UpdatedAt); err != nil {
			return Entry{}, err
		}
		return Entry{Actor: by, Action: AuditLanguageChanged, Detail: map[string]string{"language": lang}}, nil
	})
	if err != nil {
		return Person{}, fmt.Errorf("set language: %w", pg.Translate(err))
	}
	return p, nil
}

// SetRole changes a person's role. A disabled person's role stays:
// ErrDisabled.
func (s *Store) SetRole(ctx context.Context, by people.Actor, accountID, id string, role people.Role) (Person, error) {
	p, err := s.change(ctx, accountID, id, func(tx *sqlx.Tx, p *Person) (Entry, error) {
		if !p.Active() {
			return Entry{}, ErrDisabled
		}
		if p.Role == role {
			return Entry{}, nil
		}
		from := p.Role
		p.Role, p.UpdatedAt = role, s.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE people SET role = $2, updated_at = $3 WHERE id = $1`, p.ID, role, p.UpdatedAt); err != nil {
			return Entry{}, err
		}
		return Entry{Actor: by, Action: AuditRoleChanged, Detail: map[string]string{"from": string(from), "to": string(role)}}, nil
	})
	if err != nil {
		return p, fmt.Errorf("set role of %s: %w", id, err)
	}
	return p, nil
}

// Disable stops a person from signing in: their sessions end at once,
// and their unused sign-in links and codes stop working. ended is the
// number of sessions ended. Disabling twice changes nothing.
func (s *Store) Disable(ctx context.Context, by people.Actor, accountID, id string) (p Person, ended int, err error) {
	p, err = s.change(ctx, accountID, id, func(tx *sqlx.Tx, p *Person) (Entry, error) {
		if !p.Active() {
			return Entry{}, nil
		}
		now := s.Now()
		p.DisabledAt, p.UpdatedAt = &now, now
		if _, err := tx.ExecContext(ctx, `UPDATE people SET disabled_at = $2, updated_at = $2 WHERE id = $1`, p.ID, now); err != nil {
			return Entry{}, err
		}
		if ended, err = endSignIns(ctx, tx, p.ID); err != nil {
			return Entry{}, err
		}
		return Entry{Actor: by, Action: AuditPersonDisabled, Detail: map[string]string{"sessionsEnded": fmt.Sprint(ended)}}, nil
	})
	if err != nil {
		return p, 0, fmt.Errorf("disable %s: %w", id, err)
	}
	return p, ended, nil
}

// SignOut ends every session of a person; it returns how many there were.
func (s *Store) SignOut(ctx context.Context, by people.Actor, accountID, id string) (int, error) {
	var ended int
	_, err := s.change(ctx, accountID, id, func(tx *sqlx.Tx, p *Person) (Entry, error) {
		res, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE person_id = $1`, p.ID)
		if err != nil {
			return Entry{}, err
		}
		n, _ := res.RowsAffected()
		ended = int(n)
		return Entry{Actor: by, Action: AuditSignedOut, Detail: map[string]string{"sessionsEnded": fmt.Sprint(ended)}}, nil
	})
	if err != nil {
		return 0, fmt.Errorf("sign out %s: %w", id, err)
	}
	return ended, nil
}

// endSignIns ends a person's sessions and withdraws their pending links
// and codes; it returns the number of sessions ended.
func endSignIns(ctx context.Context, tx *sqlx.Tx, personID string) (int, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE person_id = $1`, personID)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	for _, q := range []string{`DELETE FROM sign_in_links WHERE person_id = $1`, `DELETE FROM authorization_codes WHERE person_id = $1`} {
		if _, err := tx.ExecContext(ctx, q, personID); err != nil {
			return 0, err
		}
	}
	return int(n), nil
}

// Erase forgets a person's address and every way they signed in: the row
// stays, disabled and without an email, so the trail's usr-… still names
// someone, but nothing of it leads to the person any more.
func (s *Store) Erase(ctx context.Context, by people.Actor, accountID, id string) (Person, error) {
	p, err := s.change(ctx, accountID, id, func(tx *sqlx.Tx, p *Person) (Entry, error) {
		now := s.Now()
		if p.DisabledAt == nil {
			p.DisabledAt = &now
		}
		p.Email, p.UpdatedAt = "", now
		if _, err := tx.ExecContext(ctx, `UPDATE people SET email = '', disabled_at = $2, updated_at = $3 WHERE id = $1`,
			p.ID, p.DisabledAt, now); err != nil {
			return Entry{}, err
		}
		if _, err := endSignIns(ctx, tx, p.ID); err != nil {
			return Entry{}, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM person_identities WHERE person_id = $1`, p.ID); err != nil {
			return Entry{}, err
		}
		return Entry{Actor: by, Action: AuditPersonErased}, nil
	})
	if err != nil {
		return p, fmt.Errorf("erase %s: %w", id, err)
	}
	return p, nil
}

// Emails maps the ids of people of the account to their addresses, for
// naming who did what; an erased person, or one of another account, is
// left out.
func (s *Store) Emails(ctx context.Context, accountID string, ids []string) (map[string]string, error) {
	var rows []struct {
		ID    string `db:"id"`
		Email string `db:"email"`
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT id, email FROM people WHERE account_id = $1 AND id = ANY($2) AND email <> ''`,
		accountID, pq.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("people's addresses: %w", pg.Translate(err))
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Email
	}
	return out, nil
}
