package review

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/touchpoint/touchpoint/locale"
)

// maxAuthorName bounds the first name shown in public, in characters;
// anything longer is not a first name.
const maxAuthorName = 40

// verifiedCustomer is the public author of a review whose customer did not
// agree to be named, in each language of the customer pages. Every review
// is a verified one: it exists only because a real event led to an invite.
var verifiedCustomer = map[string]string{
	"en": "Verified customer",
	"de": "Verifizierter Kunde",
	"da": "Verificeret kunde",
	"fr": "Client vérifié",
	"es": "Cliente verificado",
	"nl": "Geverifieerde klant",
}

// Locales lists the languages Author speaks.
func Locales() []string { return locale.Names(verifiedCustomer) }

// VerifiedCustomer is the localised "Verified customer" for a locale such
// as "de_AT" (the language is enough; English when there is none).
func VerifiedCustomer(loc string) string {
	return verifiedCustomer[locale.Pick(loc, func(l string) bool { _, ok := verifiedCustomer[l]; return ok })]
}

// Author is the name under which a review is shown in public, the one
// function every public output uses. With the customer's consent
// (showName, the feedback page's checkbox) it is the first word of their
// first name, a space, the first letter of their last name and a period:
// "Anna S." from "Anna Maria" / "Strauß". Nothing else of either name is
// shown, whatever its spelling, case or transliteration: a first name
// that holds the whole name ("Zoë Müller" / "Mueller") still gives
// "Zoë M.".
//
// Without consent, or when the names cannot give that form, it is
// VerifiedCustomer(loc): no first name, a first word that is not a
// name (an "@", a digit, markup, longer than a first name gets), and a
// last name that is missing or holds no letter. A missing last name is
// not guessed from the first name's other words ("Jan van der Berg"
// alone could end in any of them), and the first name alone is not the
// public form either, so it too gives "Verified customer".
func Author(showName bool, firstName, lastName, loc string) string {
	if showName {
		if name, ok := publicName(firstName, lastName); ok {
			return name
		}
	}
	return VerifiedCustomer(loc)
}

// publicName is "First L." from the names, or false when they do not
// give it.
func publicName(first, last string) (string, bool) {
	firsts := strings.Fields(first)
	if len(firsts) == 0 {
		return "", false
	}
	name := firsts[0]
	if utf8.RuneCountInString(name) > maxAuthorName || !nameLike(name) {
		return "", false
	}
	i := strings.IndexFunc(last, unicode.IsLetter)
	if i < 0 {
		return "", false
	}
	initial, n := utf8.DecodeRuneInString(last[i:])
	marks := last[i+n:]
	marks = marks[:len(marks)-len(strings.TrimLeftFunc(marks, func(r rune) bool { return unicode.Is(unicode.Mn, r) }))]
	return name + " " + string(unicode.ToUpper(initial)) + marks + ".", true
}

// nameLike reports whether s holds only letters, marks, hyphens,
// apostrophes and periods ("Anne-Marie", "D'Arcy", "J."), with a letter.
func nameLike(s string) bool {
	letter := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.Is(unicode.Mn, r), r == '-', r == '\'', r == '’', r == '.':
		default:
			return false
		}
	}
	return letter
}
