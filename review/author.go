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
// (showName, the feedback page's checkbox) it is their first name and the
// initial of their last name: "Greta Z."; without it, or when the names
// the shop sent cannot give that safely, it is VerifiedCustomer(loc).
//
// It never shows a full last name, an email address, a number or
// anything but letters, spaces, hyphens and apostrophes: a first name
// that holds the last name as well ("Greta Zimmermann", as some shops
// send it) loses those words; one with "@" or digits in it, or longer
// than a first name gets, is not used at all. When the last name is
// missing and the first name has several words, the last of them is
// taken for the last name. Control and bidirectional characters are
// dropped first.
func Author(showName bool, firstName, lastName, loc string) string {
	if showName {
		if name, ok := publicName(firstName, lastName); ok {
			return name
		}
	}
	return VerifiedCustomer(loc)
}

// publicName is "First I." from the names, or false when they do not
// give a name that is safe to show.
func publicName(first, last string) (string, bool) {
	firsts, lasts := nameWords(first), nameWords(last)
	if len(lasts) == 0 && len(firsts) > 1 {
		firsts, lasts = firsts[:len(firsts)-1], firsts[len(firsts)-1:]
	}
	var shown []string
	for _, w := range firsts {
		inLast := false
		for _, l := range lasts {
			inLast = inLast || strings.EqualFold(w, l)
		}
		if !inLast {
			shown = append(shown, w)
		}
	}
	name := strings.Join(shown, " ")
	if name == "" || utf8.RuneCountInString(name) > maxAuthorName || !nameLike(name) {
		return "", false
	}
	if len(lasts) == 0 {
		return name, true
	}
	initial, _ := utf8.DecodeRuneInString(lasts[0])
	if !unicode.IsLetter(initial) {
		return name, true
	}
	return name + " " + string(unicode.ToUpper(initial)) + ".", true
}

// nameWords splits a name into words after dropping what CleanText drops.
func nameWords(s string) []string { return strings.Fields(CleanText(s)) }

// nameLike reports whether s holds only letters, marks, spaces, hyphens,
// apostrophes and periods ("Anne-Marie", "D'Arcy", "J."), with a letter.
func nameLike(s string) bool {
	letter := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letter = true
		case unicode.Is(unicode.Mn, r), r == ' ', r == '-', r == '\'', r == '’', r == '.':
		default:
			return false
		}
	}
	return letter
}
