package doccheck

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/mailevents"
)

// TestMailProvidersAreDocumented: the documents name every mail provider
// of the registry, and no other: api.md's route lists them, and the
// operations guide gives each its route and every variable it reads.
func TestMailProvidersAreDocumented(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	api := readFile(t, root, "docs/api.md")
	m := regexp.MustCompile("`POST /mail-events/\\{provider\\}` \\(([^)]*)\\)").FindStringSubmatch(api)
	require.NotNil(t, m, "api.md lists the providers after `POST /mail-events/{provider}`")
	var listed []string
	for _, name := range regexp.MustCompile("`([a-z0-9]+)`").FindAllStringSubmatch(m[1], -1) {
		listed = append(listed, name[1])
	}
	assert.Equal(t, mailevents.Names(), listed, "api.md's list of mail providers")

	ops := readFile(t, root, "docs/operations.md")
	for _, p := range mailevents.Providers() {
		assert.Contains(t, ops, "/mail-events/"+p.Name, "operations.md gives %s its route", p.Name)
		for _, v := range p.Settings {
			assert.True(t, strings.Contains(ops, "`"+v.Name+"`"), "operations.md documents %s of %s", v.Name, p.Name)
		}
	}
}
