package doccheck

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mapEntry is a package named by the code map: a "### `pkg`" heading, or
// a "- `pkg`:" item of a list of small packages.
var mapEntry = regexp.MustCompile("^(?:### |- )`([a-z0-9_/.-]+?)/?`")

// TestCodeMapNamesOnlyPackagesThatExist gives every package an entry of
// its own in the code map, and keeps the map true the other way round: a
// package moved or removed takes its entry with it.
func TestCodeMapNamesOnlyPackagesThatExist(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	arch := readFile(t, root, "docs/architecture.md")
	start := strings.Index(arch, "\n## Code map")
	require.GreaterOrEqual(t, start, 0, "docs/architecture.md has no \"## Code map\" section")
	section := arch[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	pkgs := packageDirs(t, root)
	var entries []string
	for _, line := range strings.Split(section, "\n") {
		if m := mapEntry.FindStringSubmatch(line); m != nil {
			entries = append(entries, m[1])
			assert.True(t, slices.Contains(pkgs, m[1]), "the code map has an entry for %s, which is not a package of the module", m[1])
		}
	}
	for _, pkg := range pkgs {
		assert.True(t, slices.Contains(entries, pkg), "the code map names %s but gives it no entry of its own (a \"### `%s`\" heading or a \"- `%s`:\" item)", pkg, pkg, pkg)
	}
}
