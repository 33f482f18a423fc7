package pages

import (
	"embed"

	"github.com/touchpoint/touchpoint/locale"
)

//go:embed locales/*.json
var localeFiles embed.FS

// DefaultLocale is the last fallback and must exist.
const DefaultLocale = locale.Default

// loadTexts reads locales/*.json, every locale with exactly the keys of
// DefaultLocale.
func loadTexts() (map[string]map[string]string, error) {
	return locale.Tables(localeFiles, "locales/*.json")
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
