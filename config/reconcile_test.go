package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/config"
)

func TestReconcilerSettings(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Minute, c.ReconcileInterval)
	assert.Equal(t, 10*time.Minute, c.ReconcileGrace)

	for name, tc := range map[string]struct {
		env  map[string]string
		want string // "" when valid
	}{
		"set":                  {map[string]string{"TOUCHPOINT_RECONCILE_INTERVAL": "1m", "TOUCHPOINT_RECONCILE_GRACE": "3m"}, ""},
		"interval too short":   {map[string]string{"TOUCHPOINT_RECONCILE_INTERVAL": "10ms"}, "TOUCHPOINT_RECONCILE_INTERVAL"},
		"grace not a duration": {map[string]string{"TOUCHPOINT_RECONCILE_GRACE": "soon"}, "TOUCHPOINT_RECONCILE_GRACE"},
		"grace within the send timeout": {map[string]string{"TOUCHPOINT_RECONCILE_GRACE": "2m", "TOUCHPOINT_SEND_TIMEOUT": "2m"},
			"TOUCHPOINT_RECONCILE_GRACE"},
	} {
		c, err := config.Load(env(tc.env))
		if err == nil {
			err = c.Validate(false)
		}
		if tc.want == "" {
			assert.NoError(t, err, name)
			continue
		}
		assert.ErrorContains(t, err, tc.want, name)
	}
}
