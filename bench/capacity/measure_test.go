package capacity

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseActions(t *testing.T) {
	t.Parallel()
	text := `# HELP action Temporal Actions counted by the embedded Temporal server.
# TYPE action counter
action{action_type="command_BatchMarkers",namespace="default"} 3
action{action_type="grpc_StartWorkflowExecution",namespace="default"} 2
action{action_type="grpc_StartWorkflowExecution",namespace="temporal-system"} 7
touchpoint_events_accepted_total 5
`
	got, err := ParseActions(strings.NewReader(text), "default")
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"command_BatchMarkers": 3, "grpc_StartWorkflowExecution": 2}, got)
}
