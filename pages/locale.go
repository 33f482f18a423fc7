package pages

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/touchpoint/touchpoint/locale"
)

//go:embed locales/*.json
var localeFiles embed.FS

// DefaultLocale is the last fallback and must exist.
const DefaultLocale = locale.Default

// loadTexts reads locales/*.json and checks that every locale has
// exactly the keys of DefaultLocale.
func loadTexts() (map[string]map[string]string, error) {
	names, err := fs.Glob(localeFiles, "locales/*.json")
	if err != nil {
		return nil, err
	}
	texts := map[string]map[string]string{}
	for _, name := range names {
		b, err := localeFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("locale %s: %w", name, err)
		}
		texts[strings.TrimSuffix(path.Base(name), ".json")] = m
	}
	def := texts[DefaultLocale]
	if def == nil {
		return nil, fmt.Errorf("locale %s: %w", DefaultLocale, fs.ErrNotExist)
	}
	for locale, m := range texts {
		for k := range def {
			if _, ok := m[k]; !ok {
				return nil, fmt.Errorf("locale %s lacks key %q", locale, k)
			}
		}
		for k := range m {
			if _, ok := def[k]; !ok {
				return nil, fmt.Errorf("locale %s has key %q that %s lacks", locale, k, DefaultLocale)
			}
		}
	}
	return texts, nil
}

// Locales lists the locales the pages speak, sorted.
func (p *Pages) Locales() []string { return locale.Names(p.texts) }

// Pick chooses the texts for a locale exactly as the invite emails do:
// the exact locale ("de_AT", also written "de-at"), else its language
// ("de"), else English.
func (p *Pages) Pick(requested string) string {
	return locale.Pick(requested, func(l string) bool { return p.texts[l] != nil })
}

// AcceptLanguage picks a locale from a browser's Accept-Language header
// (locale.FromAcceptLanguage), for the pages that know no event
// (NotFound, BadRequest).
func (p *Pages) AcceptLanguage(header string) string {
	return locale.FromAcceptLanguage(header, func(l string) bool { return p.texts[l] != nil })
}
