package locale_test

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

func TestFromAcceptLanguage(t *testing.T) {
	t.Parallel()
	available := map[string]bool{"en": true, "de": true, "de_AT": true, "fr": true, "da": true, "es": true, "nl": true}
	has := func(l string) bool { return available[l] }
	for header, want := range map[string]string{
		"":                                 "en",
		"de-AT,de;q=0.9,en;q=0.8":          "de_AT",
		"de-CH,de;q=0.9,en;q=0.8":          "de",
		"de-DE,de;q=0.9,en;q=0.5":          "de",
		"pt-BR,pt;q=0.9,nl;q=0.8,en;q=0.7": "nl",
		"en;q=0.5, fr;q=0.9":               "fr",
		"en;q=0.1, nl":                     "nl",
		"ja, fr-CH;q=0.9, de;q=0.8":        "fr",
		"*":                                "en",
		"*;q=1, da;q=0.5":                  "da",
		"ja, da;q=0":                       "en",
		"es-419":                           "es",
		"DA-dk":                            "da",
		"en-US, de":                        "en",
		"fr;q=bogus, da":                   "da",
		"fr;q=2, da;q=0.1":                 "da",
		"fr;q=-1, da;q=0.1":                "da",
		"fr;q=1.5, da;q=0.1":               "da",
		"fr;q=0.1234, da;q=0.1":            "da",
		"fr;q=1.000, da":                   "fr",
		"fr;Q=0.9, da;q=0.8":               "fr",
		"x;q=abc, *;q=1":                   "en",
		"fr1, da":                          "da",
		"<script>, fr":                     "fr",
		"d e, fr":                          "fr",
		"de--AT, fr":                       "fr",
		"averylongtag, fr":                 "fr",
		",,, fr ,":                         "fr",
		"ja, ko, zh, ru, pl, cs, sk, hu, ro, bg, el, tr, he, ar, fa, hi, th, vi, id, ms, fr": "en",
	} {
		assert.Equal(t, want, locale.FromAcceptLanguage(header, has), "%q", header)
	}
}

// FuzzFromAcceptLanguage: whatever a browser sends, the answer is a
// locale that has, or Default.
func FuzzFromAcceptLanguage(f *testing.F) {
	f.Add("de-AT,de;q=0.9,en;q=0.8")
	f.Add("fr;q=0.1234, *")
	available := map[string]bool{"en": true, "de": true, "de_AT": true}
	f.Fuzz(func(t *testing.T, header string) {
		if got := locale.FromAcceptLanguage(header, func(l string) bool { return available[l] }); !available[got] {
			t.Fatalf("FromAcceptLanguage(%q) = %q", header, got)
		}
	})
}

// TestTables: every language must have exactly English's keys; a table
// that lacks one, or has one more, fails naming it.
func TestTables(t *testing.T) {
	t.Parallel()
	good := fstest.MapFS{"t/en.json": {Data: []byte(`{"a":"A","b":"B"}`)}, "t/de.json": {Data: []byte(`{"a":"Ä","b":"Ö"}`)}}
	texts, err := locale.Tables(good, "t/*.json")
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]string{"en": {"a": "A", "b": "B"}, "de": {"a": "Ä", "b": "Ö"}}, texts)

	for name, fsys := range map[string]fstest.MapFS{
		`locale de lacks key "b"`:             {"t/en.json": {Data: []byte(`{"a":"A","b":"B"}`)}, "t/de.json": {Data: []byte(`{"a":"Ä"}`)}},
		`locale de has key "c" that en lacks`: {"t/en.json": {Data: []byte(`{"a":"A"}`)}, "t/de.json": {Data: []byte(`{"a":"Ä","c":"C"}`)}},
		"locale en":                           {"t/de.json": {Data: []byte(`{"a":"Ä"}`)}},
		"t/de.json":                           {"t/en.json": {Data: []byte(`{"a":"A"}`)}, "t/de.json": {Data: []byte(`{"a":`)}},
	} {
		_, err := locale.Tables(fsys, "t/*.json")
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
	}
}
