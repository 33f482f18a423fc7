// Package locale chooses the language of everything a customer reads —
// the invite and reminder emails, the text messages, the public pages —
// by one rule, so the three never disagree.
package locale

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strconv"
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

// maxRanges bounds the language ranges read from one Accept-Language
// header: nobody prefers twenty languages, and a header of thousands of
// ranges must not cost a sort of thousands.
const maxRanges = 20

// FromAcceptLanguage returns the locale for a reader who sent an
// Accept-Language header (RFC 9110, section 12.5.4), for what is shown
// without an event to take the locale from: the ranges by preference
// (weight, then order), the first whose language has is taken as Pick
// takes it ("de-AT" → "de_AT" when has it, else "de"), else Default.
// A range with a malformed tag or weight is skipped, as are "*" (any
// language: Default is one) and a weight of 0 ("not acceptable").
func FromAcceptLanguage(header string, has func(string) bool) string {
	type choice struct {
		tag string
		q   float64
	}
	var cs []choice
	for i, part := range strings.Split(header, ",") {
		if i >= maxRanges {
			break
		}
		tag, params, _ := strings.Cut(part, ";")
		tag = strings.TrimSpace(tag)
		q, ok := weight(params)
		if !ok || q == 0 || tag == "*" || !languageRange(tag) {
			continue
		}
		cs = append(cs, choice{tag, q})
	}
	slices.SortStableFunc(cs, func(a, b choice) int {
		switch {
		case a.q > b.q:
			return -1
		case a.q < b.q:
			return 1
		}
		return 0
	})
	for _, c := range cs {
		if l := Pick(c.tag, has); l != Default || language(c.tag) == Default {
			return l
		}
	}
	return Default
}

// weight reads the parameters after a language range: "" (weight 1) or
// "q=" and a number from 0 to 1 with at most three decimals.
func weight(params string) (float64, bool) {
	params = strings.TrimSpace(params)
	if params == "" {
		return 1, true
	}
	v, ok := strings.CutPrefix(params, "q=")
	if !ok {
		v, ok = strings.CutPrefix(params, "Q=")
	}
	if !ok || v == "" || len(v) > 5 {
		return 0, false
	}
	intPart, frac, dot := strings.Cut(v, ".")
	if (intPart != "0" && intPart != "1") || (dot && len(frac) > 3) || strings.Trim(frac, "0123456789") != "" {
		return 0, false
	}
	if intPart == "1" && strings.Trim(frac, "0") != "" {
		return 0, false
	}
	q, err := strconv.ParseFloat(v, 64)
	return q, err == nil
}

// languageRange reports whether tag is a language range: 1–8 letters,
// then subtags of 1–8 letters or digits, joined by "-" (or "_", as some
// clients write it).
func languageRange(tag string) bool {
	for i, sub := range strings.Split(strings.ReplaceAll(tag, "_", "-"), "-") {
		if len(sub) < 1 || len(sub) > 8 {
			return false
		}
		for _, r := range sub {
			letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
			if !letter && (i == 0 || r < '0' || r > '9') {
				return false
			}
		}
	}
	return true
}

// language is the primary language of a tag, lower case.
func language(tag string) string {
	lang, _, _ := strings.Cut(strings.ReplaceAll(tag, "-", "_"), "_")
	return strings.ToLower(lang)
}

// Tables reads the tables of texts of every locale, one JSON object of
// key → text per file matched by pattern in fsys, named <locale>.json,
// and checks that every locale has exactly the keys of Default: a text
// missing in one language, or left over in one, fails at start.
func Tables(fsys fs.FS, pattern string) (map[string]map[string]string, error) {
	names, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	texts := map[string]map[string]string{}
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		var m map[string]string
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("locale %s: %w", name, err)
		}
		texts[strings.TrimSuffix(path.Base(name), ".json")] = m
	}
	def := texts[Default]
	if def == nil {
		return nil, fmt.Errorf("locale %s: %w", Default, fs.ErrNotExist)
	}
	for l, m := range texts {
		for k := range def {
			if _, ok := m[k]; !ok {
				return nil, fmt.Errorf("locale %s lacks key %q", l, k)
			}
		}
		for k := range m {
			if _, ok := def[k]; !ok {
				return nil, fmt.Errorf("locale %s has key %q that %s lacks", l, k, Default)
			}
		}
	}
	return texts, nil
}
