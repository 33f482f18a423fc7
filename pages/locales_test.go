package pages_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/locale"
	"github.com/touchpoint/touchpoint/pages"
)

// readLocales reads the locale tables from the source tree.
func readLocales(t *testing.T) map[string]map[string]string {
	t.Helper()
	texts, err := locale.Tables(os.DirFS("."), "locales/*.json")
	require.NoError(t, err)
	return texts
}

// TestLocalesHaveTheSameKeys fails when one locale lacks a key another
// has, naming both.
func TestLocalesHaveTheSameKeys(t *testing.T) {
	t.Parallel()
	locales := readLocales(t)
	require.Len(t, locales, 6)
	for a, am := range locales {
		for b, bm := range locales {
			for k := range am {
				_, ok := bm[k]
				assert.True(t, ok, "%s has %q, %s lacks it", a, k, b)
			}
		}
	}
}

var placeholder = regexp.MustCompile(`\{[a-z]+\}`)

// TestLocaleTexts: no text is empty, each names the same placeholders as
// its English original, and every error code has its message.
func TestLocaleTexts(t *testing.T) {
	t.Parallel()
	locales := readLocales(t)
	en := locales["en"]
	for locale, m := range locales {
		for k, v := range m {
			assert.NotEmpty(t, strings.TrimSpace(v), "%s %s", locale, k)
			want := placeholder.FindAllString(en[k], -1)
			got := placeholder.FindAllString(v, -1)
			slices.Sort(want)
			slices.Sort(got)
			assert.Equal(t, want, got, "%s %s: placeholders", locale, k)
			if strings.HasSuffix(k, "_generic") {
				assert.NotContains(t, v, "{shop}", "%s %s: the generic text has no shop", locale, k)
			}
		}
		for _, code := range []string{pages.CodeRatingRequired, pages.CodeCommentTooLong, pages.CodeCommentInvalid} {
			assert.Contains(t, m, "error_"+code, locale)
		}
		for _, k := range []string{"rating_1", "rating_2", "rating_3", "rating_4", "rating_5"} {
			assert.Contains(t, m, k, locale)
		}
		words := map[string]bool{}
		for _, k := range []string{"rating_1", "rating_2", "rating_3", "rating_4", "rating_5"} {
			words[m[k]] = true
		}
		assert.Len(t, words, 5, "%s: five different words for five ratings", locale)
	}
	assert.Equal(t, slices.Sorted(maps.Keys(locales)), newPages(t).Locales())
}
