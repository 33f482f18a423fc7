package apiserver_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/stretchr/testify/require"
)

// The document as an independent validator (kin-openapi) reads it: the
// document itself and its examples, and every exchange of the handler
// tests. Each env's servers record what they answered (validated below
// when the test ends): an answer must be one its operation documents,
// with the documented headers and body, and a request the API took (2xx)
// must be one the document admits, so the document is neither looser nor
// stricter than the API. The validator is a test dependency only.

func init() {
	// Bodies the validator has no decoder of: checked as text.
	for _, mt := range []string{"text/html", "application/xml", "text/xml", "application/yaml"} {
		openapi3filter.RegisterBodyDecoder(mt, openapi3filter.PlainBodyDecoder)
	}
	openapi3filter.RegisterBodyDecoder("application/jwk-set+json", openapi3filter.JSONBodyDecoder)
}

// validator is the loaded document and its paths, ready to match requests.
type validator struct {
	doc   *openapi3.T
	err   error
	paths []docPath
}

// docPath is a path template of the document and its pattern.
type docPath struct {
	template string
	re       *regexp.Regexp
	names    []string
	issuer   bool // served by the issuer, not the API
}

var (
	validatorOnce   sync.Once
	sharedValidator validator
)

// openAPIValidator loads openapi.yaml once for the whole package.
func openAPIValidator(t testing.TB) *validator {
	t.Helper()
	validatorOnce.Do(func() {
		v := &sharedValidator
		loader := openapi3.NewLoader()
		v.doc, v.err = loader.LoadFromFile("openapi.yaml")
		if v.err != nil {
			return
		}
		param := regexp.MustCompile(`\{([^}]+)\}`)
		for template, item := range v.doc.Paths.Map() {
			p := docPath{template: template, issuer: len(item.Servers) > 0}
			for _, m := range param.FindAllStringSubmatch(template, -1) {
				p.names = append(p.names, m[1])
			}
			p.re = regexp.MustCompile("^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(template), `([^/]+)`) + "$")
			v.paths = append(v.paths, p)
		}
		// Literal paths before templated ones: /reviews/summary is not a review id.
		slices.SortStableFunc(v.paths, func(a, b docPath) int {
			if c := len(a.names) - len(b.names); c != 0 {
				return c
			}
			return strings.Compare(a.template, b.template)
		})
	})
	require.NoError(t, sharedValidator.err, "openapi.yaml")
	return &sharedValidator
}

// route finds the operation of a request to the API (issuer false) or to
// the issuer. Without an operation of the method on a documented path, it
// returns another operation of the path: what it documents for a 405.
func (v *validator) route(issuer bool, method, path string) (*routers.Route, map[string]string, bool) {
	// As the API's router does: the first path that offers the method,
	// else the first path at all (whose answer is 405).
	var fallback *routers.Route
	var fallbackParams map[string]string
	for _, p := range v.paths {
		if p.issuer != issuer {
			continue
		}
		m := p.re.FindStringSubmatch(path)
		if m == nil {
			continue
		}
		params := map[string]string{}
		for i, name := range p.names {
			params[name] = m[i+1]
		}
		item := v.doc.Paths.Value(p.template)
		if op := item.GetOperation(method); op != nil {
			return &routers.Route{Spec: v.doc, Path: p.template, PathItem: item, Method: method, Operation: op}, params, true
		}
		for _, other := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if op := item.GetOperation(other); op != nil && fallback == nil {
				fallback = &routers.Route{Spec: v.doc, Path: p.template, PathItem: item, Method: other, Operation: op}
				fallbackParams = params
			}
		}
	}
	return fallback, fallbackParams, false
}

// exchange is one request and its answer, as a server saw them.
type exchange struct {
	method, target string
	reqHeader      http.Header
	reqBody        []byte
	reqComplete    bool // the whole body was kept
	status         int
	header         http.Header
	body           []byte
	complete       bool
}

// maxRecorded bounds what is kept of a body, and maxExchanges and
// maxLogBytes what a server keeps: load tests send far more than is worth
// checking one by one.
const (
	maxRecorded  = 1 << 20
	maxExchanges = 5000
	maxLogBytes  = 64 << 20
)

// exchangeLog records what a server answered, for check.
type exchangeLog struct {
	issuer bool
	mu     sync.Mutex
	all    []exchange
	bytes  int
}

// validated records the exchanges of h; when the test ends (after the
// server closes: register it before the server's Close), they are checked
// against the document. A benchmark gets h as it is: it measures the API,
// and the recorder's copies of request bodies (up to maxRecorded each,
// maxLogBytes kept) would weigh on its memory and time — 48 concurrent
// 8 MiB batches doubled the peak RSS BenchmarkBatchBytesInFlight reports.
// The tests' exchanges check the document.
func validated(t testing.TB, h http.Handler, issuer bool) http.Handler {
	t.Helper()
	if _, bench := t.(*testing.B); bench {
		return h
	}
	l := &exchangeLog{issuer: issuer}
	t.Cleanup(func() { l.check(t) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := exchange{method: r.Method, target: r.URL.RequestURI(), reqHeader: r.Header.Clone()}
		var reqBody capped
		if r.Body != nil {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(r.Body, &reqBody), r.Body}
		}
		rw := &recordingWriter{ResponseWriter: w}
		h.ServeHTTP(rw, r)
		if rw.status == 0 {
			rw.status = http.StatusOK
		}
		if r.Body != nil {
			// What the handler did not read counts as sent too.
			_, _ = io.Copy(&reqBody, io.LimitReader(r.Body, maxRecorded))
		}
		x.reqBody, x.reqComplete = reqBody.buf.Bytes(), !reqBody.over
		x.status, x.header, x.body, x.complete = rw.status, rw.header, rw.body.buf.Bytes(), !rw.body.over
		if x.header == nil {
			x.header = w.Header().Clone()
		}
		l.mu.Lock()
		if size := len(x.reqBody) + len(x.body); len(l.all) < maxExchanges && l.bytes+size <= maxLogBytes {
			l.all = append(l.all, x)
			l.bytes += size
		}
		l.mu.Unlock()
	})
}

// capped keeps the first maxRecorded bytes written to it.
type capped struct {
	buf  bytes.Buffer
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := maxRecorded - c.buf.Len(); len(p) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

// recordingWriter passes an answer on and keeps a copy.
type recordingWriter struct {
	http.ResponseWriter
	status int
	header http.Header
	body   capped
}

func (w *recordingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.header = w.ResponseWriter.Header().Clone()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	_, _ = w.body.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// check validates every recorded exchange against the document.
func (l *exchangeLog) check(t testing.TB) {
	v := openAPIValidator(t)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.all {
		if err := v.validate(l.issuer, x); err != nil {
			t.Errorf("openapi.yaml does not describe this exchange: %v", err)
		}
	}
}

func (v *validator) validate(issuer bool, x exchange) error {
	u, err := url.ParseRequestURI(x.target)
	if err != nil {
		return nil // not a request the API routes
	}
	route, params, offered := v.route(issuer, x.method, u.Path)
	if route == nil || x.method == http.MethodHead || x.method == http.MethodOptions {
		return nil // an unknown path: nothing documented to hold it to
	}
	at := fmt.Sprintf("%s %s → %d", x.method, x.target, x.status)
	if !offered && x.status != http.StatusMethodNotAllowed {
		return fmt.Errorf("%s: %s does not document %s", at, route.Path, x.method)
	}
	req, err := http.NewRequest(x.method, "http://api.touchpoint.test"+x.target, bytes.NewReader(x.reqBody))
	if err != nil {
		return nil
	}
	req.Header = x.reqHeader
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	// A request the API took must be one the document admits.
	if offered && x.status < 300 && x.reqComplete {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("%s: the API took a request the document refuses: %v\nrequest body: %.2000s", at, err, x.reqBody)
		}
	}
	if !x.complete {
		return nil
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.status, Header: x.header,
		Body: io.NopCloser(bytes.NewReader(x.body)), Options: opts}
	if mt, _, _ := mime.ParseMediaType(x.header.Get("Content-Type")); len(x.body) == 0 && mt == "" {
		out.Options = &openapi3filter.Options{AuthenticationFunc: opts.AuthenticationFunc, IncludeResponseStatus: true, ExcludeResponseBody: true}
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fmt.Errorf("%s (as %s %s): %v\nbody: %.2000s", at, route.Method, route.Path, err, x.body)
	}
	return nil
}

// TestOpenAPIValidator checks the document with the validator: the
// document itself and every example against its schema.
func TestOpenAPIValidator(t *testing.T) {
	t.Parallel()
	v := openAPIValidator(t)
	require.NoError(t, v.doc.Validate(context.Background(), openapi3.EnableExamplesValidation(),
		openapi3.EnableSchemaFormatValidation(), openapi3.EnableSchemaDefaultsValidation(), openapi3.EnableMultiError()))
}
