package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The scrubber takes a customer's values out of a text as whole words,
// ignoring case, in any script, longest first, and leaves other words
// that merely contain them.
func TestScrubberReplacesWholeValues(t *testing.T) {
	t.Parallel()
	s := newScrubber(customerValues([]byte(`{"customer": {"email": "Zoë.Ünal@Example.com", "firstName": "Zoë",
		"lastName": "Ünal", "address": "7 Hidden Lane, 10115 Berlin", "mobile": "+49 151 2345 6789", "reference": "C-17"}}`)))
	for in, want := range map[string]string{
		"Thanks, Zoë!":                            "Thanks, [erased]!",
		"ZOË ÜNAL wrote this":                     "[erased] wrote this",
		"zoë.ünal@example.com answered":           "[erased] answered",
		"mailto:zoë.ünal@example.com":             "mailto:[erased]",
		"xzoë.ünal@example.com":                   "xzoë.[erased]@example.com", // not her address, but her name
		"Zoëlle and Zoëlle, not Zoë":              "Zoëlle and Zoëlle, not [erased]",
		"call +49 151 2345 6789 or 4915123456789": "call [erased] or [erased]",
		"494915123456789 is another number":       "494915123456789 is another number",
		"send it to 7 Hidden Lane, 10115 Berlin":  "send it to [erased]",
		"near Berlin":                             "near Berlin", // a word of a part of the address
		"my customer number is C-17.":             "my customer number is [erased].",
		"C-170 is another":                        "C-170 is another",
		"7 apples":                                "7 apples", // one digit alone is no one's data
		"https://shop.example/?for=zo%C3%AB.%C3%BCnal%40example.com&n=2": "https://shop.example/?for=[erased]&n=2",
		"https://shop.example/for/Zo%C3%AB%20%C3%9Cnal.png":              "https://shop.example/for/[erased].png",
		"https://shop.example/?to=zo%C3%AB+%C3%BCnal":                    "https://shop.example/?to=[erased]",
		"": "",
	} {
		assert.Equal(t, want, s.text(in), "%q", in)
	}
}

// A document keeps its shape: strings scrubbed, the customer reference
// nulled, the customer's members of an event dropped, numbers kept as
// they were written.
func TestRedactJSON(t *testing.T) {
	t.Parallel()
	s := newScrubber([]string{"Greta", "cst-42"})
	out, err := redactJSON(`{"type":"review.created","timestamp":"2026-01-02T03:04:05.000Z","data":{"eventId":"evt-1",`+
		`"customerReference":"cst-42","rating":4,"score":1.50,"comment":"Greta here","products":[{"comment":"for greta"}]}}`, s)
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"review.created","timestamp":"2026-01-02T03:04:05.000Z","data":{"eventId":"evt-1",`+
		`"customerReference":null,"rating":4,"score":1.50,"comment":"[erased] here","products":[{"comment":"for [erased]"}]}}`, out)
	assert.Contains(t, out, `1.50`, "numbers as written")

	out, err = redactJSON(`{"customer":{"email":"greta@example.com","firstName":"Greta","locale":"de"},"metadata":{"note":"for Greta"}}`, s)
	require.NoError(t, err)
	assert.JSONEq(t, `{"customer":{"locale":"de"},"metadata":{"note":"for [erased]"}}`, out, "an event's customer members go")

	same := `{"type":"invite.sent","data":{"customerReference":null}}`
	out, err = redactJSON(same, s)
	require.NoError(t, err)
	assert.Equal(t, same, out, "nothing to take out: the bytes stay")

	_, err = redactJSON(`{"type":`, s)
	assert.Error(t, err)
}
