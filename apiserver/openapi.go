package apiserver

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"strings"
)

// openAPIDocument is the OpenAPI 3 description of this API. It is written
// by hand; openapi_test.go keeps it in step with routes.go and the
// handlers.
//
//go:embed openapi.yaml
var openAPIDocument []byte

// openAPIETag names this build's document, for conditional requests.
var openAPIETag = func() string {
	sum := sha256.Sum256(openAPIDocument)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}()

// openAPI serves GET /openapi.yaml: cacheable for an hour, then
// revalidated with its ETag.
func (s *server) openAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("ETag", openAPIETag)
	h.Set("Cache-Control", "public, max-age=3600")
	if etagListed(r.Header.Get("If-None-Match"), openAPIETag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/yaml")
	w.Write(openAPIDocument) // a failed write means the client is gone
}

// etagListed reports whether an If-None-Match value names etag (weakly
// compared, RFC 9110 §13.1.2) or is "*".
func etagListed(ifNoneMatch, etag string) bool {
	for _, tag := range strings.Split(ifNoneMatch, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}
