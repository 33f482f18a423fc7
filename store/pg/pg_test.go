package pg_test

import (
	"testing"

	"github.com/touchpoint/touchpoint/store/pg"
)

func TestValidID(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		"ety-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b":  true,
		"ety-0B5E8F3C-8A3E-4F3E-9A57-1C2D3E4F5A6B":  false, // not canonical lowercase
		"chl-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b":  false, // other prefix
		"ety-0b5e8f3c8a3e4f3e9a571c2d3e4f5a6b":      false,
		"ety-../../etc/passwd":                      false,
		"":                                          false,
		"ety-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6bx": false,
	} {
		if got := pg.ValidID("ety", id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}
