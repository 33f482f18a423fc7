package locale_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/locale"
)

func TestPick(t *testing.T) {
	t.Parallel()
	available := map[string]bool{"en": true, "de": true, "de_AT": true, "fr": true}
	has := func(l string) bool { return available[l] }
	for requested, want := range map[string]string{
		"de_AT": "de_AT", "de-at": "de_AT", "DE_at": "de_AT", " de_AT ": "de_AT",
		"de_CH": "de", "de": "de", "fr_BE": "fr",
		"": "en", "xx": "en", "pt_BR": "en", "_AT": "en", "en_US": "en",
	} {
		assert.Equal(t, want, locale.Pick(requested, has), requested)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	assert.Equal(t, []string{"da", "de", "en"}, locale.Names(map[string]int{"en": 1, "da": 2, "de": 3}))
}
