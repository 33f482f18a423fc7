package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/touchpoint/touchpoint/auth"
)

// FuzzAuthenticate feeds arbitrary bearer tokens — mutations of a real
// one among them — to the verifier: it must never panic, never accept
// anything but the untouched real token, and always answer with one of
// its two error kinds.
func FuzzAuthenticate(f *testing.F) {
	e := newEnv(f)
	v := e.verifier(f, true)
	real := e.token(f)
	parts := strings.Split(real, ".")
	for _, seed := range []string{
		real,
		parts[0] + "." + parts[1] + ".",
		parts[0] + "." + parts[1] + "." + parts[2][:len(parts[2])-2] + "AA",
		"eyJhbGciOiJub25lIiwidHlwIjoiYXQrand0In0." + parts[1] + ".",
		"a.b.c", "..", "", "Bearer x", strings.Repeat("A", 5000),
		`{"payload":"e30","signatures":[{"protected":"e30","signature":""}]}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, err := v.Authenticate(context.Background(), raw)
		if raw == real {
			return // the one genuine token may pass (until its idle time runs out)
		}
		if err == nil {
			t.Fatalf("accepted a token the issuer never signed: %q", raw)
		}
		if !errors.Is(err, auth.ErrInvalidToken) && !errors.Is(err, auth.ErrUnavailable) {
			t.Fatalf("error of neither kind: %v", err)
		}
	})
}
