package view_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/locale"
)

var placeholder = regexp.MustCompile(`\{[a-zA-Z]+\}`)

// TestLocaleTexts: the console speaks the six languages of the
// templates; every text of every language is written, and names the same
// placeholders as its English original. (A language lacking a text, or
// having one English lacks, stops the console at start.)
func TestLocaleTexts(t *testing.T) {
	t.Parallel()
	texts, err := locale.Tables(os.DirFS("."), "locales/*.json")
	require.NoError(t, err)
	var langs []string
	for l := range texts {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	assert.Equal(t, []string{"da", "de", "en", "es", "fr", "nl"}, langs)
	for l, m := range texts {
		for k, v := range m {
			assert.NotEmpty(t, strings.TrimSpace(v), "%s %s", l, k)
			want, got := placeholder.FindAllString(texts["en"][k], -1), placeholder.FindAllString(v, -1)
			slices.Sort(want)
			slices.Sort(got)
			assert.Equal(t, want, got, "%s %s: placeholders", l, k)
		}
	}
}
