package admincli

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseInterspersed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args       []string
		positional []string
		account    string
		json       bool
	}{
		{[]string{"f"}, []string{"f"}, "", false},
		{[]string{"f", "--account", "a"}, []string{"f"}, "a", false},
		{[]string{"--account", "a", "f"}, []string{"f"}, "a", false},
		{[]string{"f", "--json", "g", "--account=a"}, []string{"f", "g"}, "a", true},
		{[]string{"-", "--json"}, []string{"-"}, "", true},
		{[]string{"--json", "--", "--account", "a"}, []string{"--account", "a"}, "", true},
		{[]string{"f", "--", "-x"}, []string{"f", "-x"}, "", false},
		{nil, nil, "", false},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		account := fs.String("account", "", "")
		asJSON := fs.Bool("json", false, "")
		got, err := parseInterspersed(fs, tc.args)
		require.NoError(t, err, "%q", tc.args)
		assert.Equal(t, tc.positional, got, "%q", tc.args)
		assert.Equal(t, tc.account, *account, "%q", tc.args)
		assert.Equal(t, tc.json, *asJSON, "%q", tc.args)
	}
}
