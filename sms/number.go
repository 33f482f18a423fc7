package sms

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nyaruka/phonenumbers"
)

// ErrNotMobile: the number is valid but cannot receive text messages
// (a landline, a pager, a premium-rate number, …).
var ErrNotMobile = errors.New("not a mobile number")

// ErrInvalidNumber: the text is not a valid phone number, or a national
// number whose country the locale does not tell.
var ErrInvalidNumber = errors.New("invalid phone number")

// NormalizeMobile turns a customer's mobile number into E.164
// ("+4915112345678"). A number written internationally ("+49 151 …",
// "0049 151 …" with a known country) stands for itself; a national one
// ("0151 …") is read in the locale's country: the region of "de_AT" (AT),
// or for a bare language its usual country —
//
//	de → DE, da → DK, fr → FR, es → ES, nl → NL, en → GB
//
// (en → GB because the product's languages are European; a shop in the
// United States sends "en_US"). Other bare languages give no country, so
// only international numbers pass. The number must be valid and of a
// type that receives SMS: mobile, or — where the numbering plan cannot
// tell (the United States, …) — fixed-line-or-mobile. Errors wrap
// ErrInvalidNumber or ErrNotMobile and never carry the number.
func NormalizeMobile(raw, locale string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", fmt.Errorf("empty: %w", ErrInvalidNumber)
	}
	region := regionOf(locale)
	if region == "" && !strings.HasPrefix(raw, "+") {
		return "", fmt.Errorf("national number without a country (locale %q): %w", locale, ErrInvalidNumber)
	}
	n, err := phonenumbers.Parse(raw, region)
	if err != nil || !phonenumbers.IsValidNumber(n) {
		return "", ErrInvalidNumber
	}
	switch phonenumbers.GetNumberType(n) {
	case phonenumbers.MOBILE, phonenumbers.FIXED_LINE_OR_MOBILE:
		return phonenumbers.Format(n, phonenumbers.E164), nil
	}
	return "", ErrNotMobile
}

// regionOf is the country a national number is read in: the locale's
// region, else its language's usual country, else "".
func regionOf(locale string) string {
	lang, region, _ := strings.Cut(strings.ReplaceAll(strings.TrimSpace(locale), "-", "_"), "_")
	region = strings.ToUpper(region)
	if region == "UK" {
		region = "GB" // a common spelling; ISO 3166 says GB
	}
	if region != "" && phonenumbers.GetCountryCodeForRegion(region) != 0 {
		return region
	}
	switch strings.ToLower(lang) {
	case "de":
		return "DE"
	case "da":
		return "DK"
	case "fr":
		return "FR"
	case "es":
		return "ES"
	case "nl":
		return "NL"
	case "en":
		return "GB"
	}
	return ""
}
