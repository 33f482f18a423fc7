package doccheck

import (
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxReadmeLines keeps README.md a landing page; details live in docs/.
const maxReadmeLines = 350

func TestReadmeIsALandingPageThatLinksEveryDoc(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	readme := readFile(t, root, "README.md")
	lines := strings.Count(readme, "\n")
	if !strings.HasSuffix(readme, "\n") {
		lines++
	}
	assert.LessOrEqual(t, lines, maxReadmeLines, "README.md has %d lines; move details into docs/", lines)

	linked := map[string]bool{}
	for _, l := range links(readme) {
		if target, ok := localTarget(l.target); ok {
			linked[path.Clean(target)] = true
		}
	}
	for _, doc := range docFiles(t, root) {
		assert.True(t, linked[doc], "README.md does not link %s: add it to the table of documents", doc)
	}
}

func TestRelativeLinksAndImagesResolve(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	files := append([]string{"README.md"}, docFiles(t, root)...)
	anchors := map[string]map[string]bool{} // file (from root) → its headings' anchors
	for _, f := range files {
		anchors[f] = headingAnchors(readFile(t, root, f))
	}
	for _, f := range files {
		for _, l := range links(readFile(t, root, f)) {
			target, ok := localTarget(l.target)
			if !ok {
				continue
			}
			file, fragment, _ := strings.Cut(target, "#")
			resolved := f // a bare #fragment points into the same file
			if file != "" {
				resolved = path.Clean(path.Join(path.Dir(f), file))
				if strings.HasPrefix(resolved, "../") || path.IsAbs(file) {
					t.Errorf("%s:%d: %q leaves the repository", f, l.line, l.target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(resolved))); err != nil {
					t.Errorf("%s:%d: %q: no such file %s", f, l.line, l.target, resolved)
					continue
				}
			}
			if fragment == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			have, ok := anchors[resolved]
			if !ok {
				have = headingAnchors(readFile(t, root, resolved))
			}
			assert.True(t, have[fragment], "%s:%d: %q: %s has no heading with the anchor #%s", f, l.line, l.target, resolved, fragment)
		}
	}
}

func TestArchitectureNamesEveryPackage(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	arch := readFile(t, root, "docs/architecture.md")
	for _, pkg := range packageDirs(t, root) {
		named := strings.Contains(arch, "`"+pkg+"`") || strings.Contains(arch, "`"+pkg+"/`")
		assert.True(t, named, "docs/architecture.md does not name the package %s: give it an entry in the code map", pkg)
	}
}

// rfcSection is a citation of a section of an RFC, the only "§" the
// documents may carry: any other names a section of a document the
// repository does not hold.
var rfcSection = regexp.MustCompile(`RFC ?[0-9]+,? §`)

func TestDocsCiteNoOutsideContract(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	for _, f := range append([]string{"README.md"}, docFiles(t, root)...) {
		for i, line := range strings.Split(readFile(t, root, f), "\n") {
			if strings.Contains(line, outsideContract) {
				t.Errorf("%s:%d: cites %s: %s", f, i+1, outsideContract, strings.TrimSpace(line))
				continue
			}
			if strings.Count(line, "§") > len(rfcSection.FindAllString(line, -1)) {
				t.Errorf("%s:%d: cites a section (§) of no document the repository carries: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// outsideContract is the name of the working contract the repository
// does not carry, put together so that this file does not cite it.
var outsideContract = "S" + "PEC"

// specCitation is a citation of that contract; UNSPECIFIED and the like
// are other words.
var specCitation = regexp.MustCompile(`\b` + outsideContract + `\b`)

// TestSourcesCiteNoOutsideContract: code, schema, deploy files and the
// OpenAPI document point to the project's own documents, never to one a
// clone does not have.
func TestSourcesCiteNoOutsideContract(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	sources := []string{".go", ".sql", ".yaml", ".yml", ".json", ".html", ".tmpl", ".txt", ".sh"}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !slices.Contains(sources, filepath.Ext(name)) && name != "Makefile" && name != "Dockerfile" {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		for i, line := range strings.Split(readFile(t, root, rel), "\n") {
			if specCitation.MatchString(line) {
				t.Errorf("%s:%d: cites %s: %s", rel, i+1, outsideContract, strings.TrimSpace(line))
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// link is a Markdown link or image, or an HTML <img>, with its line.
type link struct {
	target string
	line   int
}

var (
	mdLink  = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	htmlSrc = regexp.MustCompile(`<(?:img|a)\s[^>]*?(?:src|href)="([^"]+)"`)
	codeRun = regexp.MustCompile("`+[^`]*`+")
)

// links lists the links and images of a Markdown text, outside code.
func links(text string) []link {
	var out []link
	inFence := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = codeRun.ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			out = append(out, link{target: m[1], line: i + 1})
		}
		for _, m := range htmlSrc.FindAllStringSubmatch(line, -1) {
			out = append(out, link{target: m[1], line: i + 1})
		}
	}
	return out
}

// localTarget returns a link's target within the repository, unescaped,
// or false for a URL with a scheme (https:, mailto:).
func localTarget(target string) (string, bool) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "", false
	}
	p, err := url.PathUnescape(u.Path)
	if err != nil {
		p = u.Path
	}
	if u.Fragment != "" {
		return p + "#" + u.Fragment, true
	}
	return p, true
}

// headingAnchors returns the anchors GitHub gives a Markdown text's
// headings: lower case, punctuation dropped, spaces turned into hyphens,
// a repeated heading numbered -1, -2, ….
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		for n := 1; anchors[anchor]; n++ {
			anchor = b.String() + "-" + strconv.Itoa(n)
		}
		anchors[anchor] = true
	}
	return anchors
}

// docFiles lists docs/*.md, from the module root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, matches, "no docs/*.md")
	var out []string
	for _, m := range matches {
		rel, err := filepath.Rel(root, m)
		require.NoError(t, err)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// packageDirs lists the module's package directories, as the go command
// finds them: every directory holding a .go file, but testdata and those
// whose name begins with "." or "_".
func packageDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); rel != "." && !slices.Contains(dirs, rel) {
			dirs = append(dirs, rel)
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, dirs, "store", "the walk found no packages")
	return dirs
}

// moduleRoot is the directory of go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test's directory")
		dir = parent
	}
}

func readFile(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(b)
}
