// Package locale chooses the language of everything a customer reads —
// the invite and reminder emails, the text messages, the public pages —
// by one rule, so the three never disagree.
package locale

import (
	"maps"
	"slices"
	"strings"
)

// Default is the last fallback; every set of texts has it.
const Default = "en"

// Pick returns the locale to use for the requested one (an event's
// defaultLocale): the exact locale ("de_AT", also written "de-at" or
// "DE_at"), else its language ("de"), else Default. has reports whether a
// locale is available.
func Pick(requested string, has func(string) bool) string {
	lang, region, _ := strings.Cut(strings.ReplaceAll(strings.TrimSpace(requested), "-", "_"), "_")
	lang, region = strings.ToLower(lang), strings.ToUpper(region)
	if region != "" && has(lang+"_"+region) {
		return lang + "_" + region
	}
	if has(lang) {
		return lang
	}
	return Default
}

// Names lists the locales of a set keyed by locale, sorted.
func Names[V any](set map[string]V) []string {
	return slices.Sorted(maps.Keys(set))
}
