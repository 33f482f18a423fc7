package console_test

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/console"
)

// reads records what the console tells the read replica.
type reads struct {
	mu     sync.Mutex
	marked []string // the person of each page whose reads may go to the replica
	wrote  []string // the person of each change
}

type readsKey struct{}

func (r *reads) Reads(ctx context.Context, client string) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marked = append(r.marked, client)
	return context.WithValue(ctx, readsKey{}, client)
}

func (r *reads) Wrote(client string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wrote = append(r.wrote, client)
}

// TestReadsOfAPersonsPages: a page's reads may go to the read replica,
// for the person who asked; a change is told as that person's write, so
// their next pages read the primary; a request the console refuses is
// neither.
func TestReadsOfAPersonsPages(t *testing.T) {
	t.Parallel()
	rd := &reads{}
	s := newSite(t, func(o *console.Options) { o.Reads = rd })
	r := s.reviewed(t, s.a, 5, "Great!")

	require.Equal(t, http.StatusOK, s.get(t, viewerA, "/console/reviews").status)
	require.Equal(t, http.StatusSeeOther, s.post(t, editorA, "/console/reviews/"+r.ID+"/reply", url.Values{"text": {"Thank you!"}}).status)
	require.Equal(t, http.StatusForbidden, s.post(t, viewerA, "/console/reviews/"+r.ID+"/reply", url.Values{"text": {"Hi"}}).status,
		"a viewer may not reply")

	rd.mu.Lock()
	defer rd.mu.Unlock()
	assert.Equal(t, []string{viewerA}, rd.marked)
	assert.Equal(t, []string{editorA}, rd.wrote)
}
