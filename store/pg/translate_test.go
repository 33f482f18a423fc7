package pg

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
)

// Every way lib/pq and database/sql report a lost or refused connection is
// ErrUnavailable (a 503 the client may retry); everything else keeps its
// own meaning.
func TestTranslate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want error // nil: passed through as it is
	}{
		{sql.ErrNoRows, ErrNotFound},
		{&pq.Error{Code: "23505", Constraint: "events_pkey"}, ErrConflict},
		{&pq.Error{Code: "08006"}, ErrUnavailable}, // connection_failure
		{&pq.Error{Code: "57P01"}, ErrUnavailable}, // admin_shutdown
		{&pq.Error{Code: "53300"}, ErrUnavailable}, // too_many_connections
		{&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, ErrUnavailable},
		{io.EOF, ErrUnavailable},              // the server closed the connection first
		{io.ErrUnexpectedEOF, ErrUnavailable}, // mid-message
		{fmt.Errorf("prepare: %w", driver.ErrBadConn), ErrUnavailable},
		{sql.ErrConnDone, ErrUnavailable},
		{context.DeadlineExceeded, ErrUnavailable},
		{errors.New("sql: database is closed"), ErrUnavailable},
		{&pq.Error{Code: "22P02"}, nil}, // invalid_text_representation: our bug, a 500
		{context.Canceled, nil},         // the client went away
	} {
		got := Translate(c.err)
		if c.want == nil {
			assert.Same(t, c.err, got, "%v", c.err)
			continue
		}
		assert.ErrorIs(t, got, c.want, "%v", c.err)
	}
	assert.NoError(t, Translate(nil))
}
