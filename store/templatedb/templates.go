package templatedb

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// A shop's templates: one row per (account or event type, kind, language)
// in message_templates holds the version in force, and every version
// stored stays in message_template_versions. The templates package
// checks what may be stored, encodes it and chooses between the levels;
// this file only keeps them.

// TemplateKey names a template: the account's (EventTypeID "") or an
// event type's, of a kind, in a language.
type TemplateKey struct {
	AccountID   string
	EventTypeID string
	Kind        string // a templates.Kind
	Locale      string
}

// scope is the key's level as message_template_versions keeps it.
func (k TemplateKey) scope() string { return k.EventTypeID }

// Template is a stored template in its current version.
type Template struct {
	ID          string `db:"id"`
	AccountID   string `db:"account_id"`
	EventTypeID string `db:"event_type_id"`
	Kind        string `db:"kind"` // a templates.Kind
	Locale      string `db:"locale"`
	Version     int    `db:"version"`
	// Content is the template's content as the caller encoded it
	// (templates.EncodeContent).
	Content   []byte    `db:"content"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

const templateColumns = `id, account_id, COALESCE(event_type_id, '') AS event_type_id, kind, locale, version, content, created_at, updated_at`

// checkEventType makes an event type of another account (or none) not
// found, within tx.
func checkEventType(ctx context.Context, q sqlx.QueryerContext, accountID, eventTypeID string) error {
	if eventTypeID == "" {
		return nil
	}
	var ok bool
	if err := sqlx.GetContext(ctx, q, &ok, `SELECT EXISTS (SELECT 1 FROM event_types WHERE id = $1 AND account_id = $2)`,
		eventTypeID, accountID); err != nil {
		return fmt.Errorf("event type: %w", err)
	}
	if !ok {
		return pg.ErrNotFound
	}
	return nil
}

// PutTemplate stores content (validated and encoded by the caller) as the
// template of key in a new version, and returns it; created reports that
// the key had no template. An event type of another account is
// ErrNotFound. by names the API client, for the version's record.
func (s *Store) PutTemplate(ctx context.Context, key TemplateKey, content []byte, by string) (t Template, created bool, err error) {
	err = pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if err := checkEventType(ctx, tx, key.AccountID, key.EventTypeID); err != nil {
			return err
		}
		// Writers of one key queue here, so versions count without gaps
		// or collisions.
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, templateLockKey(key)); err != nil {
			return err
		}
		var version int
		if err := tx.GetContext(ctx, &version, `SELECT COALESCE(max(version), 0) + 1 FROM message_template_versions
			WHERE account_id = $1 AND scope = $2 AND kind = $3 AND locale = $4`,
			key.AccountID, key.scope(), key.Kind, key.Locale); err != nil {
			return fmt.Errorf("next version: %w", err)
		}
		now := s.Now()
		if _, err := tx.ExecContext(ctx, `INSERT INTO message_template_versions
			(account_id, scope, kind, locale, version, content, created_at, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			key.AccountID, key.scope(), key.Kind, key.Locale, version, content, now, by); err != nil {
			return fmt.Errorf("insert version: %w", err)
		}
		res, err := tx.ExecContext(ctx, `UPDATE message_templates SET version = $5, content = $6, updated_at = $7
			WHERE account_id = $1 AND event_type_id IS NOT DISTINCT FROM NULLIF($2, '') AND kind = $3 AND locale = $4`,
			key.AccountID, key.EventTypeID, key.Kind, key.Locale, version, content, now)
		if err != nil {
			return fmt.Errorf("update template: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			created = true
			if _, err := tx.ExecContext(ctx, `INSERT INTO message_templates
				(id, account_id, event_type_id, kind, locale, version, content, created_at, updated_at)
				VALUES ($1, $2, NULLIF($3, ''), $4, $5, $6, $7, $8, $8)`,
				pg.NewID("tpl"), key.AccountID, key.EventTypeID, key.Kind, key.Locale, version, content, now); err != nil {
				return fmt.Errorf("insert template: %w", err)
			}
		}
		if t, err = templateIn(ctx, tx, key); err != nil {
			return err
		}
		return persondb.RecordTx(ctx, tx, now, persondb.Entry{AccountID: key.AccountID, Actor: people.Actor(by),
			Action: persondb.AuditTemplateSaved, Target: t.ID, Detail: key.auditDetail(version)})
	})
	if err != nil {
		return Template{}, false, fmt.Errorf("put template: %w", err)
	}
	return t, created, nil
}

// auditDetail names the template of k and its version in the audit trail.
func (k TemplateKey) auditDetail(version int) map[string]string {
	d := map[string]string{"kind": k.Kind, "locale": k.Locale, "version": strconv.Itoa(version)}
	if k.EventTypeID != "" {
		d["eventTypeId"] = k.EventTypeID
	}
	return d
}

func templateLockKey(k TemplateKey) string {
	return "touchpoint:template:" + k.AccountID + ":" + k.EventTypeID + ":" + k.Kind + ":" + k.Locale
}

// GetTemplate returns the template stored for key; ErrNotFound when
// there is none (or the event type is another account's).
func (s *Store) GetTemplate(ctx context.Context, key TemplateKey) (Template, error) {
	if err := checkEventType(ctx, s.db, key.AccountID, key.EventTypeID); err != nil {
		return Template{}, pg.Translate(err)
	}
	t, err := templateIn(ctx, s.db, key)
	return t, pg.Translate(err)
}

func templateIn(ctx context.Context, q sqlx.QueryerContext, key TemplateKey) (Template, error) {
	var t Template
	err := sqlx.GetContext(ctx, q, &t, `SELECT `+templateColumns+` FROM message_templates
		WHERE account_id = $1 AND event_type_id IS NOT DISTINCT FROM NULLIF($2, '') AND kind = $3 AND locale = $4`,
		key.AccountID, key.EventTypeID, key.Kind, key.Locale)
	return t, err
}

// DeleteTemplate removes the template of key, so the next level applies
// again; its versions stay on record. ErrNotFound when there is none.
func (s *Store) DeleteTemplate(ctx context.Context, key TemplateKey) error {
	err := pg.InTx(ctx, s.db, func(tx *sqlx.Tx) error {
		var version int
		err := tx.GetContext(ctx, &version, `DELETE FROM message_templates
			WHERE account_id = $1 AND event_type_id IS NOT DISTINCT FROM NULLIF($2, '') AND kind = $3 AND locale = $4
			RETURNING version`, key.AccountID, key.EventTypeID, key.Kind, key.Locale)
		if err != nil {
			return err
		}
		now := s.Now()
		if _, err = tx.ExecContext(ctx, `UPDATE message_template_versions SET deleted_at = $6
			WHERE account_id = $1 AND scope = $2 AND kind = $3 AND locale = $4 AND version = $5`,
			key.AccountID, key.scope(), key.Kind, key.Locale, version, now); err != nil {
			return err
		}
		return persondb.RecordChange(ctx, tx, now, key.AccountID, persondb.AuditTemplateDeleted, "", key.auditDetail(version))
	})
	if err != nil {
		return fmt.Errorf("delete template: %w", err)
	}
	return nil
}

// TemplateFilter narrows ListTemplates; zero values do not filter.
type TemplateFilter struct {
	Kind   string
	Locale string
	// EventTypeID: that event type's templates only. AccountOnly: the
	// account's own level only; EventTypesOnly: those of event types only.
	EventTypeID    string
	AccountOnly    bool
	EventTypesOnly bool
}

// ListTemplates lists the account's stored templates, newest first.
func (s *Store) ListTemplates(ctx context.Context, accountID string, f TemplateFilter, p pg.Page) ([]Template, *pg.Cursor, error) {
	w := pg.NewWhere(accountID)
	if f.Kind != "" {
		w.Add("kind = ", f.Kind)
	}
	if f.Locale != "" {
		w.Add("locale = ", f.Locale)
	}
	if f.EventTypeID != "" {
		w.Add("event_type_id = ", f.EventTypeID)
	}
	if f.AccountOnly {
		w.Cond("event_type_id IS NULL")
	}
	if f.EventTypesOnly {
		w.Cond("event_type_id IS NOT NULL")
	}
	var ts []Template
	next, err := pg.SelectPage(ctx, s.Read(ctx), &ts, w, `SELECT `+templateColumns+` FROM message_templates`, p,
		func(t Template) pg.Cursor { return pg.Cursor{CreatedAt: t.CreatedAt, ID: t.ID} })
	if err != nil {
		return nil, nil, err
	}
	return ts, next, nil
}

// Level is the template stored at one level (an event type's or the
// account's) in its version in force, as the caller encoded it: what
// templates.Choose chooses from (converted to a templates.Stored). A zero
// Version: none is stored at that level.
type Level struct {
	Version int
	Content []byte
}

// TemplateLevels returns the templates stored for an event type (when
// eventTypeID is not "") and for the account, of a kind in a language.
// An event type of another account is ErrNotFound.
func (s *Store) TemplateLevels(ctx context.Context, accountID, eventTypeID, kind, lang string) (
	eventType, account Level, err error) {
	if err := checkEventType(ctx, s.db, accountID, eventTypeID); err != nil {
		return Level{}, Level{}, pg.Translate(err)
	}
	var rows []struct {
		EventType bool   `db:"event_type"`
		Version   int    `db:"version"`
		Content   []byte `db:"content"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT event_type_id IS NOT NULL AS event_type, version, content FROM message_templates
		WHERE account_id = $1 AND (event_type_id IS NULL OR event_type_id = NULLIF($2, '')) AND kind = $3 AND locale = $4`,
		accountID, eventTypeID, kind, lang); err != nil {
		return Level{}, Level{}, fmt.Errorf("template levels: %w", pg.Translate(err))
	}
	for _, r := range rows {
		if r.EventType {
			eventType = Level{Version: r.Version, Content: r.Content}
		} else {
			account = Level{Version: r.Version, Content: r.Content}
		}
	}
	return eventType, account, nil
}

// EventTemplate is what rendering an event's message needs besides the
// invite's content: the templates stored for the event's type and for its
// account, of which the one in force is chosen (its event type's, else its
// account's, else the built-in one), and the values of the placeholders
// that the invite content does not hold.
type EventTemplate struct {
	ForEventType, ForAccount Level
	OrderReference           string
	EventType                string // the event type's name
}

// LoadEventTemplate reads, at send time, the templates of kind in lang
// stored for the event.
func (s *Store) LoadEventTemplate(ctx context.Context, eventID, kind, lang string) (EventTemplate, error) {
	var r struct {
		OrderReference   string `db:"transaction_reference"`
		EventType        string `db:"event_type"`
		EventTypeVersion sql.NullInt64
		EventTypeContent []byte `db:"event_type_content"`
		AccountVersion   sql.NullInt64
		AccountContent   []byte `db:"account_content"`
	}
	err := s.db.QueryRowxContext(ctx, `
		SELECT e.transaction_reference, et.name,
		       te.version, te.content, ta.version, ta.content
		FROM events e JOIN event_types et ON et.id = e.event_type_id
		LEFT JOIN message_templates te ON te.event_type_id = e.event_type_id AND te.kind = $2 AND te.locale = $3
		LEFT JOIN message_templates ta ON ta.account_id = e.account_id AND ta.event_type_id IS NULL AND ta.kind = $2 AND ta.locale = $3
		WHERE e.id = $1`, eventID, kind, lang).Scan(&r.OrderReference, &r.EventType,
		&r.EventTypeVersion, &r.EventTypeContent, &r.AccountVersion, &r.AccountContent)
	if err != nil {
		return EventTemplate{}, fmt.Errorf("load event template: %w", pg.Translate(err))
	}
	level := func(v sql.NullInt64, content []byte) Level {
		if !v.Valid {
			return Level{}
		}
		return Level{Version: int(v.Int64), Content: content}
	}
	return EventTemplate{ForEventType: level(r.EventTypeVersion, r.EventTypeContent), ForAccount: level(r.AccountVersion, r.AccountContent),
		OrderReference: r.OrderReference, EventType: r.EventType}, nil
}

// TemplateVersion is one version of a template as the shop stored it.
type TemplateVersion struct {
	Version   int       `db:"version"`
	Content   []byte    `db:"content"` // as the caller encoded it
	CreatedAt time.Time `db:"created_at"`
	CreatedBy string    `db:"created_by"` // a person's or an API client's id
	// DeletedAt is when a DELETE retired this version; nil for the
	// others.
	DeletedAt *time.Time `db:"deleted_at"`
}

// TemplateVersions lists the versions of the key's template, newest
// first, at most limit (1–100): who stored what, and when.
func (s *Store) TemplateVersions(ctx context.Context, key TemplateKey, limit int) ([]TemplateVersion, error) {
	var vs []TemplateVersion
	err := s.db.SelectContext(ctx, &vs, `SELECT version, content, created_at, created_by, deleted_at FROM message_template_versions
		WHERE account_id = $1 AND scope = $2 AND kind = $3 AND locale = $4 ORDER BY version DESC LIMIT $5`,
		key.AccountID, key.scope(), key.Kind, key.Locale, min(max(limit, 1), 100))
	if err != nil {
		return nil, fmt.Errorf("template versions: %w", pg.Translate(err))
	}
	return vs, nil
}
