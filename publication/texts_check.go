package publication

import (
	"fmt"
	"maps"
	"slices"

	"github.com/touchpoint/touchpoint/locale"
)

// CheckTexts reports a language whose table lacks a key English has, or
// has one English lacks.
func CheckTexts() error {
	want := slices.Sorted(maps.Keys(texts[locale.Default]))
	for _, lang := range Locales() {
		if got := slices.Sorted(maps.Keys(texts[lang])); !slices.Equal(got, want) {
			return fmt.Errorf("the texts of %s have the keys %v, English %v", lang, got, want)
		}
	}
	return nil
}
