package brand_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/brand"
)

func TestValidateDisplayName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"Acme Outdoor", nil},
		{"Café Ø & Söhne", nil},
		{"東京ストア", nil},
		{"مكتبة", nil},
		{"Shop 👩‍👩‍👧", nil}, // zero-width joiners are fine
		{"x", nil},
		{strings.Repeat("é", 100), nil},
		{"", brand.ErrDisplayNameEmpty},
		{"   ", brand.ErrDisplayNameEmpty},
		{strings.Repeat("é", 101), brand.ErrDisplayNameTooLong},
		{"Acme\r\nBcc: x@example.com", brand.ErrDisplayNameControls},
		{"Acme\x00", brand.ErrDisplayNameControls},
		{"Acme\u0085", brand.ErrDisplayNameControls}, // C1 next line
		{"Acme\u2028", brand.ErrDisplayNameControls},
		{"Acme \u202egnp.exe", brand.ErrDisplayNameControls}, // right-to-left override
		{"Acme \u2067x", brand.ErrDisplayNameControls},       // right-to-left isolate
		{"Acme \xff", brand.ErrDisplayNameControls},          // not UTF-8
	} {
		assert.Equal(t, tc.want, brand.ValidateDisplayName(tc.in), "%q", tc.in)
	}
}

func TestValidateColor(t *testing.T) {
	t.Parallel()
	for in, ok := range map[string]bool{
		"": true, "#000000": true, "#a1B2c3": true, "#FFFFFF": true,
		"#FFF": false, "000000": false, "#GGGGGG": false, "#1234567": false,
		"red": false, "#12345 ": false, " #123456": false, "#+12345": false,
	} {
		err := brand.ValidateColor(in)
		if ok {
			assert.NoError(t, err, "%q", in)
		} else {
			assert.ErrorIs(t, err, brand.ErrColor, "%q", in)
		}
	}
}

func TestValidateLogoURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]error{
		"":                                   nil,
		"https://cdn.example.com/logo.png":   nil,
		"https://cdn.example.com:8443/l.svg": nil,
		"https://cdn.example.com/a?b=c&d=e":  nil,
		"http://cdn.example.com/logo.png":    brand.ErrLogoURL,
		"HTTPS://cdn.example.com/logo.png":   nil, // url.Parse lower-cases the scheme
		"javascript:alert(1)":                brand.ErrLogoURL,
		"data:image/png;base64,AAAA":         brand.ErrLogoURL,
		"//cdn.example.com/logo.png":         brand.ErrLogoURL,
		"/logo.png":                          brand.ErrLogoURL,
		"https://":                           brand.ErrLogoURL,
		"https://user:pw@cdn.example.com/l":  brand.ErrLogoURL,
		"https://cdn.example.com/a b.png":    brand.ErrLogoURL,
		"https://cdn.example.com/\nx":        brand.ErrLogoURL,
		"https://cdn.example.com/" + strings.Repeat("a", brand.MaxURL): brand.ErrLogoURLTooLong,
	} {
		assert.Equal(t, want, brand.ValidateLogoURL(in), "%q", in)
	}
}

func TestValidateReplyTo(t *testing.T) {
	t.Parallel()
	for in, ok := range map[string]bool{
		"":                            true,
		"service@shop.example":        true,
		"first.last+tag@shop.co.uk":   true,
		"Shop <service@shop.example>": false, // the name comes from DisplayName
		"service@localhost":           false,
		"service":                     false,
		"@shop.example":               false,
		"a@b@shop.example":            false,
		"service@shop.example\r\nBcc: x@y.example": false,
		" service@shop.example":                    false,
		"service@[192.0.2.1]":                      false,
		"servi\u202ece@shop.example":               false,
		"servi\u200bce@shop.example":               false,
		strings.Repeat("a", 250) + "@x.example":    false,
	} {
		err := brand.ValidateReplyTo(in)
		if ok {
			assert.NoError(t, err, "%q", in)
		} else {
			assert.ErrorIs(t, err, brand.ErrReplyTo, "%q", in)
		}
	}
}

func TestContrast(t *testing.T) {
	t.Parallel()
	c := func(s string) brand.RGB {
		v, err := brand.ParseColor(s)
		require.NoError(t, err)
		return v
	}
	// Reference values from the WCAG definition and common checkers.
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"#000000", "#FFFFFF", 21},
		{"#FFFFFF", "#000000", 21},
		{"#FFFFFF", "#FFFFFF", 1},
		{"#767676", "#FFFFFF", 4.54}, // the lightest grey that passes AA on white
		{"#777777", "#FFFFFF", 4.48},
		{"#2563EB", "#FFFFFF", 5.17},
		{"#FF0000", "#FFFFFF", 4.00},
		{"#0000FF", "#FFFFFF", 8.59},
	} {
		assert.InDelta(t, tc.want, brand.Contrast(c(tc.a), c(tc.b)), 0.01, "%s on %s", tc.a, tc.b)
	}
	assert.InDelta(t, 0.0, c("#000000").Luminance(), 1e-9)
	assert.InDelta(t, 1.0, c("#FFFFFF").Luminance(), 1e-9)
	assert.Equal(t, "#0A0B0C", c("#0a0b0c").String())
}

func TestPalette(t *testing.T) {
	t.Parallel()
	def := brand.Palette{Accent: brand.DefaultColor, Button: brand.DefaultColor, ButtonText: brand.White,
		ButtonBorder: brand.DefaultColor, Text: brand.DefaultColor, Tint: "#EEF3FD"}
	for _, tc := range []struct {
		name  string
		color string
		want  brand.Palette
	}{
		{"no colour", "", def},
		{"invalid colour", "blue", def},
		{"dark green: everywhere", "#14532d", brand.Palette{Accent: "#14532D", Button: "#14532D", ButtonText: brand.White,
			ButtonBorder: "#14532D", Text: "#14532D", Tint: "#ECF1EE"}},
		{"gold: button with dark text and an edge, links in our blue", "#FFD700", brand.Palette{Accent: "#FFD700", Button: "#FFD700",
			ButtonText: brand.Ink, ButtonBorder: brand.Ink, Text: brand.DefaultColor, Tint: "#EEF3FD"}},
		{"middle grey: neither white nor dark text reads, our blue", "#808080", brand.Palette{Accent: "#808080",
			Button: brand.DefaultColor, ButtonText: brand.White, ButtonBorder: brand.DefaultColor, Text: brand.DefaultColor, Tint: "#EEF3FD"}},
		{"orange: dark text, visible edge without help", "#E8590C", brand.Palette{Accent: "#E8590C", Button: "#E8590C",
			ButtonText: brand.Ink, ButtonBorder: "#E8590C", Text: brand.DefaultColor, Tint: "#EEF3FD"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, brand.Brand{Color: tc.color}.Palette())
		})
	}
}

// TestPaletteAlwaysReadable walks the colour cube and checks the promises
// of Palette for every colour a shop could choose.
func TestPaletteAlwaysReadable(t *testing.T) {
	t.Parallel()
	parse := func(s string) brand.RGB {
		c, err := brand.ParseColor(s)
		require.NoError(t, err)
		return c
	}
	white := parse(brand.White)
	body := parse("#1F2328") // the pages' body text
	usedBrand := 0
	for r := 0; r < 256; r += 15 {
		for g := 0; g < 256; g += 15 {
			for b := 0; b < 256; b += 15 {
				color := brand.RGB{R: uint8(r), G: uint8(g), B: uint8(b)}.String()
				p := brand.Brand{Color: color}.Palette()
				assert.Equal(t, color, p.Accent)
				if p.Button == color {
					usedBrand++
				}
				assert.GreaterOrEqual(t, brand.Contrast(parse(p.Button), parse(p.ButtonText)), brand.MinTextContrast, color)
				assert.GreaterOrEqual(t, brand.Contrast(parse(p.ButtonBorder), white), brand.MinUIContrast, color)
				assert.GreaterOrEqual(t, brand.Contrast(parse(p.Text), white), brand.MinTextContrast, color)
				assert.GreaterOrEqual(t, brand.Contrast(body, parse(p.Tint)), brand.MinTextContrast, color)
				assert.GreaterOrEqual(t, brand.Contrast(parse(p.Text), parse(p.Tint)), brand.MinUIContrast, color)
			}
		}
	}
	assert.Greater(t, usedBrand, 4000, "most colours reach the button (of 4913)")
}
