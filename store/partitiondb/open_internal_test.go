package partitiondb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testdb"
)

// TestOpenWorkIsFoundByIndex: whether a month still has work is answered
// by partial indexes, never by reading the month's rows: at 1,666,667
// events a month, a scan beside the accepts slowed them while the month
// was dropped. With sequential scans priced out, no plan of the question
// reads a table.
func TestOpenWorkIsFoundByIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := testdb.New(t).Connx(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `SET enable_seqscan = off`)
	require.NoError(t, err)
	month := time.Now().UTC().Format("2006_01")
	for _, g := range groups {
		if len(g.open) == 0 {
			continue
		}
		part := g.tables[len(g.tables)-1] + "_" + month
		var plan []string
		require.NoError(t, conn.SelectContext(ctx, &plan, `EXPLAIN `+openSQL(part, g.open)))
		assert.NotContains(t, strings.Join(plan, "\n"), "Seq Scan", part)
		assert.Equal(t, len(g.open), strings.Count(strings.Join(plan, "\n"), "Index"), "%s: an index for each condition:\n%s",
			part, strings.Join(plan, "\n"))
	}
}
