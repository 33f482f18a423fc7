package sms_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/sms"
)

func TestNormalizeMobile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw, locale string
		want        string // "" when an error is expected
		notMobile   bool   // the error is ErrNotMobile, else ErrInvalidNumber
	}{
		// National numbers in each locale's country.
		{"0151 12345678", "de", "+4915112345678", false},
		{"0151/123 456 78", "de_DE", "+4915112345678", false},
		{"0664 1234567", "de_AT", "+436641234567", false},
		{"0664 1234567", "de-at", "+436641234567", false},
		{"079 123 45 67", "de_CH", "+41791234567", false},
		{"20 12 34 56", "da", "+4520123456", false},
		{"06 12 34 56 78", "fr", "+33612345678", false},
		{"0470 12 34 56", "fr_BE", "+32470123456", false},
		{"612 34 56 78", "es", "+34612345678", false},
		{"06-12345678", "nl", "+31612345678", false},
		{"07400 123456", "en", "+447400123456", false},
		{"07400 123456", "en_GB", "+447400123456", false},
		{"07400 123456", "en_UK", "+447400123456", false},
		{"(201) 555-0123", "en_US", "+12015550123", false}, // fixed-line-or-mobile
		// International numbers stand for themselves, whatever the locale.
		{"+49 151 12345678", "fr", "+4915112345678", false},
		{"+4915112345678", "", "+4915112345678", false},
		{"+45 20 12 34 56", "pt_BR", "+4520123456", false},
		{"0049 151 12345678", "de_AT", "+4915112345678", false},
		{"00 31 6 12345678", "nl", "+31612345678", false},
		// Refused.
		{"030 12345678", "de", "", true},     // a Berlin landline
		{"01 42 68 53 00", "fr", "", true},   // a Paris landline
		{"0900 1234567", "de", "", true},     // premium rate
		{"+44 20 7946 0958", "en", "", true}, // a London landline
		{"0151 123", "de", "", false},        // too short
		{"+999 1234567", "", "", false},      // no such country
		{"mobile please", "de", "", false},   // not a number
		{"", "de", "", false},                // nothing
		{"0151 12345678", "", "", false},     // national, no country known
		{"0151 12345678", "pt", "", false},   // national, no country known
		{"06 12 34 56 78", "de", "", true},   // a French mobile read in Germany: a landline near Wiesbaden
	}
	for _, tt := range tests {
		got, err := sms.NormalizeMobile(tt.raw, tt.locale)
		if tt.want != "" {
			require.NoError(t, err, "%q in %q", tt.raw, tt.locale)
			assert.Equal(t, tt.want, got, "%q in %q", tt.raw, tt.locale)
			continue
		}
		require.Error(t, err, "%q in %q gave %q", tt.raw, tt.locale, got)
		assert.Empty(t, got)
		if tt.notMobile {
			assert.ErrorIs(t, err, sms.ErrNotMobile, "%q in %q", tt.raw, tt.locale)
		} else {
			assert.ErrorIs(t, err, sms.ErrInvalidNumber, "%q in %q", tt.raw, tt.locale)
		}
		if tt.raw != "" {
			assert.NotContains(t, err.Error(), tt.raw, "the error names the number")
		}
	}
}
