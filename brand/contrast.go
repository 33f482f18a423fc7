package brand

import (
	"fmt"
	"math"
	"strconv"
)

// The colours Touchpoint uses where a shop's colour would not be readable.
const (
	DefaultColor = "#2563EB" // a calm blue: white text on it reads at 5.2:1
	White        = "#FFFFFF" // the page and email background behind buttons and links
	Ink          = "#111827" // near-black text for light button colours
)

// WCAG 2.2 thresholds (success criteria 1.4.3 and 1.4.11).
const (
	MinTextContrast = 4.5 // normal-size text against its background
	MinUIContrast   = 3.0 // borders and focus indicators against their surroundings
)

// RGB is an sRGB colour with 8 bits per channel.
type RGB struct{ R, G, B uint8 }

// ParseColor reads "#RRGGBB" (hex digits of either case).
func ParseColor(s string) (RGB, error) {
	if len(s) != 7 || s[0] != '#' {
		return RGB{}, fmt.Errorf("parse colour %q: %w", s, ErrColor)
	}
	var c [3]uint8
	for i := range c {
		v, err := strconv.ParseUint(s[1+2*i:3+2*i], 16, 8)
		if err != nil {
			return RGB{}, fmt.Errorf("parse colour %q: %w", s, ErrColor)
		}
		c[i] = uint8(v)
	}
	return RGB{c[0], c[1], c[2]}, nil
}

// mustParse is ParseColor for the constants above.
func mustParse(s string) RGB {
	c, err := ParseColor(s)
	if err != nil {
		panic(err)
	}
	return c
}

// String formats the colour as "#RRGGBB" in upper case.
func (c RGB) String() string { return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B) }

// Luminance is the WCAG relative luminance: 0 for black, 1 for white.
func (c RGB) Luminance() float64 {
	lin := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.R) + 0.7152*lin(c.G) + 0.0722*lin(c.B)
}

// Contrast is the WCAG contrast ratio of two colours, from 1 (none) to 21
// (black on white); the order does not matter.
func Contrast(a, b RGB) float64 {
	la, lb := a.Luminance(), b.Luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// Mix blends c over base: weight 1 is c, 0 is base.
func Mix(c, base RGB, weight float64) RGB {
	m := func(x, y uint8) uint8 { return uint8(math.Round(weight*float64(x) + (1-weight)*float64(y))) }
	return RGB{m(c.R, base.R), m(c.G, base.G), m(c.B, base.B)}
}

// Palette says which colour to use for each part of a page or email, all
// as "#RRGGBB". Every pair that carries text reaches MinTextContrast, and
// Text also serves for borders and focus rings (MinUIContrast on White).
type Palette struct {
	// Accent is the shop's colour whenever one is set, for decoration
	// that carries no text (a band along the top of a page).
	Accent string
	// Button and ButtonText colour a filled button: the shop's colour
	// under white or Ink text, whichever reads at 4.5:1, else
	// DefaultColor under white.
	Button, ButtonText string
	// ButtonBorder outlines the button: the button colour itself when it
	// stands out from White at 3:1, else ButtonText, so that a pale
	// button still shows its edge.
	ButtonBorder string
	// Text colours links, headings in the shop's colour, selected
	// states and focus rings on White: the shop's colour when it reads
	// at 4.5:1 there, else DefaultColor.
	Text string
	// Tint is a light wash of Text for the background of a selected
	// option; body text stays readable on it.
	Tint string
}

// Palette works out where the brand colour may be applied. An empty or
// invalid colour gives Touchpoint's own palette.
func (b Brand) Palette() Palette {
	def, white, ink := mustParse(DefaultColor), mustParse(White), mustParse(Ink)
	p := Palette{
		Accent: def.String(), Button: def.String(), ButtonText: white.String(),
		ButtonBorder: def.String(), Text: def.String(),
	}
	c, err := ParseColor(b.Color)
	if err == nil {
		p.Accent = c.String()
		switch {
		case Contrast(c, white) >= MinTextContrast:
			p.Button, p.ButtonText = c.String(), white.String()
		case Contrast(c, ink) >= MinTextContrast:
			p.Button, p.ButtonText = c.String(), ink.String()
		}
		if Contrast(c, white) >= MinTextContrast {
			p.Text = c.String()
		}
		p.ButtonBorder = p.Button
		if btn := mustParse(p.Button); Contrast(btn, white) < MinUIContrast {
			p.ButtonBorder = p.ButtonText
		}
	}
	p.Tint = Mix(mustParse(p.Text), white, 0.08).String()
	return p
}
