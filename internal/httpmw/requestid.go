package httpmw

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
)

// RequestID adopts a sane incoming X-Request-Id (so a caller's id follows
// the request through the logs) or makes one, and echoes it. Every answer
// also says X-Content-Type-Options: nosniff, so no browser takes a JSON
// or YAML answer that echoes input for a page or a script. The rest of
// the request is served with the context that with returns for its id.
func RequestID(with func(ctx context.Context, id string) context.Context, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !saneRequestID(id) {
			b := make([]byte, 16)
			rand.Read(b) // never fails
			id = hex.EncodeToString(b)
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(with(r.Context(), id)))
	})
}

// saneRequestID accepts 1–128 characters that cannot forge log lines or
// headers: letters, digits and . _ : -.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:-", c)) {
			return false
		}
	}
	return true
}
