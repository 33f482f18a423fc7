package store

import "time"

// Channel segments an account's business; events name one.
type Channel struct {
	ID        string    `db:"id"`
	AccountID string    `db:"account_id"`
	Name      string    `db:"name"`
	Type      string    `db:"type"` // "native" or an integration's slug
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}
