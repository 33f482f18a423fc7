package contact_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/contact"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/text"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]struct {
		address string
		medium  invite.Medium
	}{
		" Greta@Example.COM ": {"greta@example.com", invite.Email},
		"+49 151 12345678":    {"+4915112345678", invite.SMS},
	} {
		a, m, err := contact.Normalize(raw)
		assert.NoError(t, err, raw)
		assert.Equal(t, want.address, a, raw)
		assert.Equal(t, want.medium, m, raw)
	}
	var textErr *text.Error
	for raw, want := range map[string]error{
		"":                              contact.ErrRequired,
		"   ":                           contact.ErrRequired,
		"greta":                         contact.ErrAddress,
		"Greta <greta@example.com>":     contact.ErrAddress,
		"015112345678":                  contact.ErrAddress,
		"+1":                            contact.ErrMobile,
		"a@" + longLocal() + ".example": contact.ErrTooLong,
		"greta\u202e@example.com":       textErr,
	} {
		_, _, err := contact.Normalize(raw)
		if want == textErr {
			assert.ErrorAs(t, err, &textErr, "%q", raw)
			continue
		}
		assert.ErrorIs(t, err, want, "%q", raw)
	}
}

func longLocal() string {
	b := make([]byte, contact.MaxAddress)
	for i := range b {
		b[i] = 'a'
	}
	return string(b)
}

func TestMask(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "s***@example.com", contact.Mask("shop@example.com"))
	assert.Equal(t, "***5678", contact.Mask("+4915112345678"))
	assert.Equal(t, "***12", contact.Mask("12"))
}
