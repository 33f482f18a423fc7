package apiserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/touchpoint/touchpoint/apiserver"
	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mailevents"
	"github.com/touchpoint/touchpoint/pages"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/storeset"
)

// The tests of openapi.yaml: it is well-formed and self-consistent, it
// lists exactly the routes of routes.go (and the issuer's paths), its
// request examples are accepted by the real handlers, the answers have
// exactly the documented members, and every error status it documents
// can be produced.

// openAPIDoc is openapi.yaml, as JSON values (numbers are float64, like
// those of the answers it describes) and as a YAML tree for the order of
// its examples.
type openAPIDoc struct {
	root map[string]any
	node *yaml.Node
}

func loadOpenAPI(t testing.TB) *openAPIDoc {
	t.Helper()
	raw, err := os.ReadFile("openapi.yaml")
	require.NoError(t, err)
	d := &openAPIDoc{node: &yaml.Node{}}
	require.NoError(t, yaml.Unmarshal(raw, d.node))
	var tree any
	require.NoError(t, d.node.Decode(&tree))
	b, err := json.Marshal(tree)
	require.NoError(t, err, "the document must be expressible as JSON")
	require.NoError(t, json.Unmarshal(b, &d.root))
	return d
}

// operation is one method of one path of the document.
type operation struct {
	method, path string // method in upper case
	node, item   map[string]any
}

func (o operation) key() string { return o.method + " " + o.path }

// onAPI tells the API's operations from the issuer's, which name their
// own server.
func (o operation) onAPI() bool { _, own := o.item["servers"]; return !own }

func (o operation) public() bool {
	sec, ok := o.node["security"].([]any)
	return ok && len(sec) == 0
}

func (o operation) groups() []string {
	var gs []string
	for _, g := range asList(o.node["x-access-groups"]) {
		gs = append(gs, g.(string))
	}
	return gs
}

var openAPIMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func (d *openAPIDoc) operations() []operation {
	var ops []operation
	paths := asMap(d.root["paths"])
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		item := asMap(paths[path])
		for _, m := range openAPIMethods {
			if n := asMap(item[m]); n != nil {
				ops = append(ops, operation{method: strings.ToUpper(m), path: path, node: n, item: item})
			}
		}
	}
	return ops
}

func (d *openAPIDoc) operation(t testing.TB, key string) operation {
	t.Helper()
	for _, op := range d.operations() {
		if op.key() == key {
			return op
		}
	}
	t.Fatalf("the document has no operation %s", key)
	return operation{}
}

// resolve follows $refs within the document; nil when v is not an object
// or a reference leads nowhere.
func (d *openAPIDoc) resolve(v any) map[string]any {
	m := asMap(v)
	for range 10 {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		m = asMap(d.pointer(ref))
	}
	return nil
}

func (d *openAPIDoc) pointer(ref string) any {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil
	}
	var cur any = d.root
	for _, tok := range strings.Split(rest, "/") {
		cur = asMap(cur)[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
	}
	return cur
}

// responses are an operation's documented responses by status ("200",
// "default"), resolved.
func (d *openAPIDoc) responses(o operation) map[string]map[string]any {
	out := map[string]map[string]any{}
	for code, r := range asMap(o.node["responses"]) {
		out[code] = d.resolve(r)
	}
	return out
}

// parameters are the path item's and the operation's, resolved.
func (d *openAPIDoc) parameters(o operation) []map[string]any {
	var out []map[string]any
	for _, p := range append(asList(o.item["parameters"]), asList(o.node["parameters"])...) {
		out = append(out, d.resolve(p))
	}
	return out
}

// page reports whether o is one of the public HTML pages: public, with
// HTML success answers. Its errors are HTML pages too, never problem+json.
func (d *openAPIDoc) page(o operation) bool {
	if !o.public() {
		return false
	}
	for code, r := range d.responses(o) {
		if _, html := asMap(r["content"])["text/html"]; html && strings.HasPrefix(code, "2") {
			return true
		}
	}
	return false
}

func (d *openAPIDoc) hasQuery(o operation) bool {
	return slices.ContainsFunc(d.parameters(o), func(p map[string]any) bool { return p["in"] == "query" })
}

// namedValue is an example: its name and value.
type namedValue struct {
	name  string
	value any
}

// examples are a media type's examples in the document's order.
func (d *openAPIDoc) examples(media map[string]any, yamlPath ...string) []namedValue {
	var out []namedValue
	exs := asMap(media["examples"])
	var names []string
	if len(yamlPath) > 0 { // without a path, orderedKeys lists the document's own keys
		names = d.orderedKeys(yamlPath...)
	}
	if len(names) != len(exs) {
		names = slices.Sorted(maps.Keys(exs))
	}
	for _, name := range names {
		out = append(out, namedValue{name, d.resolve(exs[name])["value"]})
	}
	if ex, ok := media["example"]; ok {
		out = append(out, namedValue{"", ex})
	}
	return out
}

// requestExamples are the examples of an operation's request body in mt.
func (d *openAPIDoc) requestExamples(t testing.TB, o operation, mt string) []namedValue {
	t.Helper()
	media := asMap(asMap(d.resolve(o.node["requestBody"])["content"])[mt])
	require.NotNil(t, media, "%s has no %s request body", o.key(), mt)
	exs := d.examples(media, "paths", o.path, strings.ToLower(o.method), "requestBody", "content", mt, "examples")
	require.NotEmpty(t, exs, "%s has no request examples", o.key())
	return exs
}

// orderedKeys lists the keys of the mapping at path in the YAML tree.
func (d *openAPIDoc) orderedKeys(path ...string) []string {
	n := d.node
	if n.Kind == yaml.DocumentNode {
		n = n.Content[0]
	}
	for _, key := range path {
		var next *yaml.Node
		for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		for next != nil && next.Kind == yaml.AliasNode {
			next = next.Alias
		}
		n = next
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var keys []string
	for i := 0; i < len(n.Content); i += 2 {
		keys = append(keys, n.Content[i].Value)
	}
	return keys
}

// conform lists how v departs from schema. Objects are checked strictly:
// a member the schema does not name is an error unless
// additionalProperties admits it, so an answer's members must be exactly
// documented ones.
func (d *openAPIDoc) conform(schema any, v any, at string) []string {
	s := d.resolve(schema)
	if s == nil {
		return []string{at + ": no schema"}
	}
	if v == nil {
		if s["nullable"] == true {
			return nil
		}
		return []string{at + ": null, but the schema is not nullable"}
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	if alts := asList(s["oneOf"]); len(alts) > 0 {
		var matched int
		var why []string
		for i, alt := range alts {
			if e := d.conform(alt, v, fmt.Sprintf("%s (oneOf %d)", at, i)); len(e) > 0 {
				why = append(why, e...)
			} else {
				matched++
			}
		}
		if matched != 1 {
			fail("matches %d of the oneOf alternatives, not exactly one: %s", matched, strings.Join(why, "; "))
		}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return reflect.DeepEqual(e, v) }) {
		fail("%v is not one of %v", v, enum)
	}
	num := func(key string) (float64, bool) { f, ok := s[key].(float64); return f, ok }
	switch s["type"] {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			fail("want an object, got %T", v)
			break
		}
		for _, k := range asList(s["required"]) {
			if _, ok := m[k.(string)]; !ok {
				fail("the required member %q is missing", k)
			}
		}
		if max, ok := num("maxProperties"); ok && float64(len(m)) > max {
			fail("more than %v members", max)
		}
		props := asMap(s["properties"])
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if ps, ok := props[k]; ok {
				errs = append(errs, d.conform(ps, m[k], at+"."+k)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case map[string]any:
				errs = append(errs, d.conform(ap, m[k], at+"."+k)...)
			case bool:
				if !ap {
					fail("the member %q is not allowed", k)
				}
			default:
				fail("the member %q is not documented", k)
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			fail("want an array, got %T", v)
			break
		}
		if max, ok := num("maxItems"); ok && float64(len(a)) > max {
			fail("more than %v items", max)
		}
		for i, item := range a {
			errs = append(errs, d.conform(s["items"], item, fmt.Sprintf("%s[%d]", at, i))...)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			fail("want a string, got %T", v)
			break
		}
		n := float64(utf8.RuneCountInString(str))
		if min, ok := num("minLength"); ok && n < min {
			fail("shorter than %v characters", min)
		}
		if max, ok := num("maxLength"); ok && n > max {
			fail("longer than %v characters", max)
		}
		if p, ok := s["pattern"].(string); ok {
			if re, err := regexp.Compile(p); err != nil {
				fail("pattern %q: %v", p, err)
			} else if !re.MatchString(str) {
				fail("%q does not match %s", str, p)
			}
		}
		if !formatOK(s["format"], str) {
			fail("%q is not a %v", str, s["format"])
		}
	case "integer", "number":
		f, ok := v.(float64)
		if !ok || (s["type"] == "integer" && f != math.Trunc(f)) {
			fail("want an %v, got %v", s["type"], v)
			break
		}
		if min, ok := num("minimum"); ok && f < min {
			fail("%v is below %v", f, min)
		}
		if max, ok := num("maximum"); ok && f > max {
			fail("%v is above %v", f, max)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			fail("want a boolean, got %T", v)
		}
	case nil: // any value
	default:
		fail("unknown type %v", s["type"])
	}
	return errs
}

func formatOK(format any, s string) bool {
	switch format {
	case "date-time":
		_, err := time.Parse(time.RFC3339Nano, s)
		return err == nil
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	case "email":
		return strings.Count(s, "@") == 1
	case "uri":
		u, err := url.Parse(s)
		return err == nil && u.Scheme != "" && u.Host != ""
	}
	return true
}

// sameShape checks that got has the members of example, no more and no
// fewer, in every object whose schema names its members (maps such as
// metadata hold data, not members, and are left alone). An array matches
// when each example item has the shape of some item of got.
func (d *openAPIDoc) sameShape(schema any, example, got any, at string) []string {
	s := d.resolve(schema)
	switch ex := example.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || s == nil || s["properties"] == nil || asMap(s["additionalProperties"]) != nil {
			return nil // null on one side, or a map
		}
		if want, have := slices.Sorted(maps.Keys(ex)), slices.Sorted(maps.Keys(g)); !slices.Equal(want, have) {
			return []string{fmt.Sprintf("%s: the answer has the members %v, the documented example %v", at, have, want)}
		}
		var errs []string
		props := asMap(s["properties"])
		for _, k := range slices.Sorted(maps.Keys(ex)) {
			errs = append(errs, d.sameShape(props[k], ex[k], g[k], at+"."+k)...)
		}
		return errs
	case []any:
		g, ok := got.([]any)
		if !ok || s == nil {
			return nil
		}
		var errs []string
		for i, item := range ex {
			if !slices.ContainsFunc(g, func(gi any) bool { return len(d.sameShape(s["items"], item, gi, "")) == 0 }) {
				errs = append(errs, fmt.Sprintf("%s[%d]: no item of the answer has the members of this documented item", at, i))
			}
		}
		return errs
	}
	return nil
}

// checkAnswer checks an answer of operation o against the document: its
// status is documented, its required headers are there and conform, its
// content type is documented and a JSON body conforms to the schema. It
// returns the documented response and the decoded JSON body.
func (d *openAPIDoc) checkAnswer(t testing.TB, o operation, res response) (map[string]any, any) {
	t.Helper()
	at := fmt.Sprintf("%s answered %d", o.key(), res.status)
	doc, ok := d.responses(o)[strconv.Itoa(res.status)]
	if !ok {
		t.Errorf("%s, which the document does not list: %s", at, res.body)
		return nil, nil
	}
	for name, h := range asMap(doc["headers"]) {
		h := d.resolve(h)
		v := res.header.Get(name)
		if v == "" {
			if h["required"] == true {
				t.Errorf("%s without its documented header %s", at, name)
			}
			continue
		}
		var val any = v
		if d.resolve(h["schema"])["type"] == "integer" {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Errorf("%s: header %s %q is not an integer", at, name, v)
				continue
			}
			val = float64(n)
		}
		for _, e := range d.conform(h["schema"], val, at+": header "+name) {
			t.Error(e)
		}
	}
	content := asMap(doc["content"])
	if len(res.body) == 0 {
		if len(content) > 0 {
			t.Errorf("%s with no body; the document shows one", at)
		}
		return doc, nil
	}
	mt, _, err := mime.ParseMediaType(res.header.Get("Content-Type"))
	require.NoError(t, err, at)
	media := asMap(content[mt])
	if media == nil {
		t.Errorf("%s with Content-Type %s; documented: %v", at, mt, slices.Sorted(maps.Keys(content)))
		return doc, nil
	}
	if !strings.HasSuffix(mt, "json") {
		return doc, nil
	}
	var body any
	require.NoError(t, json.Unmarshal(res.body, &body), "%s: %s", at, res.body)
	for _, e := range d.conform(media["schema"], body, at) {
		t.Errorf("%s\nbody: %s", e, res.body)
	}
	return doc, body
}

// checkShape checks a success answer against the documented example of
// the same name, else against any documented example.
func (d *openAPIDoc) checkShape(t testing.TB, o operation, res response, doc map[string]any, body any, exampleName string) {
	t.Helper()
	mt, _, _ := mime.ParseMediaType(res.header.Get("Content-Type"))
	media := asMap(asMap(doc["content"])[mt])
	if !strings.HasSuffix(mt, "json") {
		return
	}
	exs := d.examples(media)
	require.NotEmpty(t, exs, "%s %d: no documented example", o.key(), res.status)
	if i := slices.IndexFunc(exs, func(ex namedValue) bool { return ex.name == exampleName }); i >= 0 {
		exs = exs[i : i+1]
	}
	var problems []string
	for _, ex := range exs {
		errs := d.sameShape(media["schema"], ex.value, body, fmt.Sprintf("%s %d (example %q)", o.key(), res.status, ex.name))
		if len(errs) == 0 {
			return
		}
		problems = append(problems, errs...)
	}
	for _, p := range problems {
		t.Errorf("%s\nbody: %s", p, res.body)
	}
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asList(v any) []any         { l, _ := v.([]any); return l }

// TestOpenAPIDocument checks the document on its own: references resolve,
// patterns compile, operations are complete, and every example conforms to
// its schema.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	d := loadOpenAPI(t)
	require.Regexp(t, `^3\.0\.\d+$`, d.root["openapi"])

	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok && d.pointer(ref) == nil {
				t.Errorf("%s: $ref %s leads nowhere", at, ref)
			}
			if p, ok := v["pattern"].(string); ok {
				_, err := regexp.Compile(p)
				assert.NoError(t, err, "%s: pattern", at)
			}
			for k, c := range v {
				walk(c, at+"/"+k)
			}
		case []any:
			for i, c := range v {
				walk(c, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(d.root, "#")

	operationIDs := map[string]string{}
	pathParam := regexp.MustCompile(`\{([^}]+)\}`)
	for _, o := range d.operations() {
		id, _ := o.node["operationId"].(string)
		assert.NotEmpty(t, id, "%s: operationId", o.key())
		if other, dup := operationIDs[id]; dup {
			t.Errorf("%s and %s share the operationId %q", o.key(), other, id)
		}
		operationIDs[id] = o.key()
		assert.NotEmpty(t, o.node["summary"], "%s: summary", o.key())
		assert.NotEmpty(t, o.node["tags"], "%s: tags", o.key())

		var declared []string
		for _, p := range d.parameters(o) {
			if p["in"] == "path" {
				declared = append(declared, p["name"].(string))
				assert.Equal(t, true, p["required"], "%s: path parameter %s must be required", o.key(), p["name"])
			}
			for _, e := range exampleErrors(d, p["schema"], p["example"], fmt.Sprintf("%s parameter %s", o.key(), p["name"])) {
				t.Error(e)
			}
		}
		var inPath []string
		for _, m := range pathParam.FindAllStringSubmatch(o.path, -1) {
			inPath = append(inPath, m[1])
		}
		assert.ElementsMatch(t, inPath, declared, "%s: path parameters", o.key())

		if body := d.resolve(o.node["requestBody"]); body != nil {
			for mt, media := range asMap(body["content"]) {
				for _, ex := range d.examples(asMap(media)) {
					for _, e := range d.conform(asMap(media)["schema"], ex.value, fmt.Sprintf("%s request example %q (%s)", o.key(), ex.name, mt)) {
						t.Error(e)
					}
				}
			}
		}

		responses := d.responses(o)
		assert.Contains(t, responses, "405", "%s: every path answers a method it does not offer with 405 and Allow; document it", o.key())
		// A page of the issuer's sign-in may succeed by sending the
		// browser on (303).
		assert.True(t, slices.ContainsFunc(slices.Collect(maps.Keys(responses)), func(c string) bool {
			return strings.HasPrefix(c, "2") || !o.onAPI() && c == "303"
		}), "%s documents no success", o.key())
		for code, r := range responses {
			at := fmt.Sprintf("%s %s", o.key(), code)
			require.NotNil(t, r, "%s: response", at)
			assert.NotEmpty(t, r["description"], "%s: description", at)
			for mt, media := range asMap(r["content"]) {
				assert.NotNil(t, asMap(media)["schema"], "%s %s: schema", at, mt)
				for _, ex := range d.examples(asMap(media)) {
					for _, e := range d.conform(asMap(media)["schema"], ex.value, fmt.Sprintf("%s example %q", at, ex.name)) {
						t.Error(e)
					}
				}
			}
			if !o.onAPI() {
				continue
			}
			assert.Contains(t, asMap(r["headers"]), "X-Request-Id", "%s: every answer of the API has an X-Request-Id", at)
			n, _ := strconv.Atoi(code)
			switch {
			case n < 400 && code != "default", o.key() == "GET /readyz":
			case d.page(o):
				assert.Equal(t, []string{"text/html"}, slices.Sorted(maps.Keys(asMap(r["content"]))), "%s: the errors of a public page are HTML pages", at)
			default:
				problem := asMap(asMap(r["content"])["application/problem+json"])
				assert.Equal(t, "#/components/schemas/Problem", asMap(problem["schema"])["$ref"], "%s: errors are problem documents", at)
			}
		}

		if !o.onAPI() {
			continue
		}
		desc, _ := o.node["description"].(string)
		if o.public() {
			assert.Empty(t, o.groups(), "%s: public, so no access groups", o.key())
			continue
		}
		require.NotEmpty(t, o.groups(), "%s: x-access-groups (or security: [] for a public route)", o.key())
		quoted := make([]string, len(o.groups()))
		for i, g := range o.groups() {
			quoted[i] = "`" + g + "`"
		}
		assert.Contains(t, desc, "Access groups: "+strings.Join(quoted, ", ")+".", "%s: the description names the access groups", o.key())
	}

	for name, s := range asMap(asMap(d.root["components"])["schemas"]) {
		if ex, ok := asMap(s)["example"]; ok {
			for _, e := range d.conform(s, ex, "schema "+name+" example") {
				t.Error(e)
			}
		}
	}
}

func exampleErrors(d *openAPIDoc, schema, example any, at string) []string {
	if example == nil {
		return nil
	}
	return d.conform(schema, example, at+" example")
}

// TestOpenAPIDocumentsEveryRoute fails when routes.go and the document
// disagree about a path, a method or who may call it, or when the
// document's issuer paths are not the issuer's.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	d := loadOpenAPI(t)
	documented := map[string]operation{}
	var issuer []string
	for _, o := range d.operations() {
		if !o.onAPI() {
			issuer = append(issuer, o.key())
			assert.Equal(t, "{auth_url}", asMap(asList(o.item["servers"])[0])["url"], "%s is served by the issuer", o.path)
			continue
		}
		documented[o.key()] = o
	}

	var routes []string
	for _, r := range apiserver.Routes() {
		key := r.Method + " " + r.Path // mux's {id} is OpenAPI's {id}
		routes = append(routes, key)
		o, ok := documented[key]
		if !ok {
			t.Errorf("routes.go serves %s, which openapi.yaml does not document", key)
			continue
		}
		if r.Groups == nil {
			assert.True(t, o.public(), "%s is public: document it with security: []", key)
		} else {
			assert.Equal(t, r.Groups, o.groups(), "%s: x-access-groups", key)
		}
	}
	for key := range documented {
		assert.Contains(t, routes, key, "openapi.yaml documents %s, which routes.go does not serve", key)
	}
	assert.ElementsMatch(t, []string{
		http.MethodPost + " " + authserver.TokenPath,
		http.MethodGet + " " + authserver.DiscoveryPath,
		http.MethodGet + " " + authserver.JWKSPath,
		http.MethodGet + " " + authserver.AuthorizePath,
		http.MethodPost + " " + authserver.AuthorizePath,
		http.MethodGet + " " + authserver.SignInPath,
		http.MethodPost + " " + authserver.SignInPath,
	}, issuer, "the issuer's operations")
}

// TestOpenAPINamesEveryAuditAction: GET /audit's description names every
// action the trail records.
func TestOpenAPINamesEveryAuditAction(t *testing.T) {
	t.Parallel()
	for _, o := range loadOpenAPI(t).operations() {
		if o.key() != http.MethodGet+" /audit" {
			continue
		}
		desc, _ := o.node["description"].(string)
		for _, a := range persondb.AuditActions() {
			assert.Contains(t, desc, "`"+a+"`")
		}
		return
	}
	t.Fatal("openapi.yaml documents no GET /audit")
}

func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want, err := os.ReadFile("openapi.yaml")
	require.NoError(t, err)

	r := e.do(t, http.MethodGet, "/openapi.yaml", "", nil)
	require.Equal(t, http.StatusOK, r.status, "no token needed: %s", r.body)
	assert.Equal(t, "application/yaml", r.header.Get("Content-Type"))
	assert.Equal(t, string(want), string(r.body))
	assert.Equal(t, "public, max-age=3600", r.header.Get("Cache-Control"))
	etag := r.header.Get("ETag")
	assert.Regexp(t, `^"[0-9a-f]{16}"$`, etag)
	assert.NotEmpty(t, r.header.Get("X-Request-Id"))
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(r.body, &doc))
	assert.Equal(t, "3.0.3", doc["openapi"])

	for _, match := range []string{etag, `"other", ` + etag, "W/" + etag, "*"} {
		r = e.do(t, http.MethodGet, "/openapi.yaml", "", nil, header{"If-None-Match", match})
		assert.Equal(t, http.StatusNotModified, r.status, match)
		assert.Empty(t, r.body)
		assert.Equal(t, etag, r.header.Get("ETag"))
	}
	r = e.do(t, http.MethodGet, "/openapi.yaml", "", nil, header{"If-None-Match", `"stale"`})
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "GET", e.do(t, http.MethodPost, "/openapi.yaml", "", nil).header.Get("Allow"))
}

// apiCall is a request of the examples test.
type apiCall struct {
	path, query, token string
	body               string // JSON; "" for none
	contentType        string // instead of application/json
	headers            []header
}

// openAPIRun sends the document's examples to a real API and keeps what
// the error checks need: a successful call of every operation and the
// resources the examples made.
type openAPIRun struct {
	doc  *openAPIDoc
	e    *env
	good map[string]apiCall // by operation key

	eventTypeName string // the event type the event examples name
	minimalEvent  string // the event example with the fewest members, for e.channel

	mail *mailProviders // sign the mail providers' requests
}

// send makes c as a request of operation key to e's API and checks the
// answer against the document.
func (r *openAPIRun) send(t *testing.T, e *env, key string, c apiCall) (response, map[string]any, any) {
	t.Helper()
	o := r.doc.operation(t, key)
	pattern := "^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(o.path), `[^/]+`) + "$"
	require.Regexp(t, pattern, c.path, "the path of %s", key)
	var body any
	var headers []header
	if c.body != "" {
		body = c.body
	}
	if c.contentType != "" {
		headers = append(headers, header{"Content-Type", c.contentType})
	}
	headers = append(headers, c.headers...)
	path := c.path
	if c.query != "" {
		path += "?" + c.query
	}
	res := e.do(t, o.method, path, c.token, body, headers...)
	doc, decoded := r.doc.checkAnswer(t, o, res)
	return res, doc, decoded
}

// success sends c (with a full token unless the operation is public),
// requires a success and checks the answer's members against the
// example named exampleName (else against any example). It returns the
// JSON answer.
func (r *openAPIRun) success(t *testing.T, key string, c apiCall, exampleName string) map[string]any {
	t.Helper()
	if !r.doc.operation(t, key).public() {
		c.token = r.e.token
	}
	res, doc, body := r.send(t, r.e, key, c)
	require.True(t, res.status >= 200 && res.status < 300, "%s (example %q) answered %d: %s", key, exampleName, res.status, res.body)
	r.doc.checkShape(t, r.doc.operation(t, key), res, doc, body, exampleName)
	r.good[key] = c
	m, _ := body.(map[string]any)
	return m
}

// examples are the JSON request examples of operation key.
func (r *openAPIRun) examples(t *testing.T, key string) []namedValue {
	return r.doc.requestExamples(t, r.doc.operation(t, key), "application/json")
}

func jsonText(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestOpenAPIExamplesAgainstTheHandlers walks through the API with the
// document's request examples (the examples' channel is the account's
// Default channel), then produces every error status the document lists.
func TestOpenAPIExamplesAgainstTheHandlers(t *testing.T) {
	t.Parallel()
	// Feedback links expire as in production, 90 days after the send.
	mail := newMailProviders(t)
	r := &openAPIRun{doc: loadOpenAPI(t), e: newEnv(t, func(o *apiserver.Options) {
		o.FeedbackLinkTTL = 90 * 24 * time.Hour
		o.MailEvents = mail.verifiers(t)
	}), good: map[string]apiCall{}, mail: mail}
	if !t.Run("examples", r.examplesWork) {
		return
	}
	t.Run("errors", r.errorsReachable)
}

func (r *openAPIRun) examplesWork(t *testing.T) {
	e := r.e
	r.success(t, "GET /healthz", apiCall{path: "/healthz"}, "")
	r.success(t, "GET /readyz", apiCall{path: "/readyz"}, "")
	r.success(t, "GET /openapi.yaml", apiCall{path: "/openapi.yaml"}, "")

	// Events: their examples name one event type, on the Default channel.
	var events []namedValue // values: the JSON to send
	most := -1
	richestExample := ""
	for _, ex := range r.examples(t, "POST /events") {
		ev := asMap(ex.value)
		require.NotNil(t, asMap(ev["channel"])["id"], "event example %q: channel.id", ex.name)
		asMap(ev["channel"])["id"] = e.channel
		if r.eventTypeName == "" {
			r.eventTypeName, _ = ev["type"].(string)
		}
		assert.Equal(t, r.eventTypeName, ev["type"], "the event examples name one event type")
		if r.minimalEvent == "" || len(ev) < len(jsonObject(t, r.minimalEvent)) {
			r.minimalEvent = jsonText(t, ev)
		}
		if len(ev) > most {
			most, richestExample = len(ev), ex.name
		}
		events = append(events, namedValue{ex.name, jsonText(t, ev)})
	}

	var checkout, other string // the events' event type, and another
	for _, ex := range r.examples(t, "POST /event-types") {
		et := r.success(t, "POST /event-types", apiCall{path: "/event-types", body: jsonText(t, ex.value)}, ex.name)
		if et["name"] == r.eventTypeName {
			checkout = et["id"].(string)
		} else {
			other = et["id"].(string)
		}
	}
	require.NotEmpty(t, checkout, "the event type examples create the event type %q the event examples name", r.eventTypeName)
	require.NotEmpty(t, other, "the event type examples create a second event type, to patch")
	r.success(t, "GET /event-types", apiCall{path: "/event-types"}, "")
	r.success(t, "GET /event-types/{id}", apiCall{path: "/event-types/" + checkout}, "")
	for _, ex := range r.examples(t, "PATCH /event-types/{id}") {
		r.success(t, "PATCH /event-types/{id}", apiCall{path: "/event-types/" + other, body: jsonText(t, ex.value)}, ex.name)
	}

	for _, ex := range r.examples(t, "POST /channels") {
		r.success(t, "POST /channels", apiCall{path: "/channels", body: jsonText(t, ex.value)}, ex.name)
	}
	r.success(t, "GET /channels", apiCall{path: "/channels"}, "")
	r.success(t, "GET /channels/{id}", apiCall{path: "/channels/" + e.channel}, "")

	list := r.success(t, "GET /invite-settings", apiCall{path: "/invite-settings", query: "channelId=" + e.channel + "&eventTypeId=" + checkout}, "")
	require.Len(t, asList(list["items"]), 1)
	setting := "/invite-settings/" + asMap(asList(list["items"])[0])["id"].(string)
	r.success(t, "GET /invite-settings/{id}", apiCall{path: setting}, "")
	for _, ex := range r.examples(t, "PATCH /invite-settings/{id}") {
		r.success(t, "PATCH /invite-settings/{id}", apiCall{path: setting, body: jsonText(t, ex.value)}, ex.name)
	}

	hooks := r.createWebhooks(t) // before the events, to hear of them

	// The event examples; the richest is read back, the smallest cancelled.
	var richest, smallest string
	for _, ex := range events {
		ref := r.success(t, "POST /events", apiCall{path: "/events", body: ex.value.(string)}, ex.name)["EventRef"].(string)
		if ex.name == richestExample {
			richest = ref
		}
		if ex.value == r.minimalEvent {
			smallest = ref
		}
	}
	for _, ex := range r.examples(t, "POST /events/batch") {
		batch := asMap(ex.value)
		for _, ev := range asList(batch["events"]) {
			asMap(asMap(ev)["channel"])["id"] = e.channel
		}
		res := r.success(t, "POST /events/batch", apiCall{path: "/events/batch", body: jsonText(t, batch)}, ex.name)
		for _, it := range asList(res["items"]) {
			assert.EqualValues(t, http.StatusAccepted, asMap(it)["status"], "batch example %q: %v", ex.name, it)
		}
	}
	r.publicPages(t, richest) // before the richest event is read back: it then has a review
	r.addAttempt(t, smallest)
	r.success(t, "GET /events", apiCall{path: "/events"}, "")
	r.success(t, "GET /events/{id}", apiCall{path: "/events/" + richest}, "")
	r.success(t, "POST /events/{id}/cancel", apiCall{path: "/events/" + smallest + "/cancel"}, "")
	reminded := r.acceptMinimal(t) // sent, its reminder still to come: cancel stops the reminder
	_, err := e.store.DB().Exec(`UPDATE events SET invite_status = 'sent', sent_at = now(), attempts = 1,
		reminder_status = 'scheduled', reminder_scheduled_for = now() + interval '3 days' WHERE id = $1`, reminded)
	require.NoError(t, err)
	r.addAttempt(t, reminded)
	cancelled := r.success(t, "POST /events/{id}/cancel", apiCall{path: "/events/" + reminded + "/cancel"}, "reminderCancelled")
	assert.Equal(t, "sent", asMap(cancelled["invite"])["status"])
	assert.Equal(t, "cancelled", asMap(asMap(cancelled["invite"])["reminder"])["status"])
	failed := r.acceptMinimal(t)
	r.giveUp(t, failed)
	r.addAttempt(t, failed)
	r.success(t, "POST /events/{id}/retry", apiCall{path: "/events/" + failed + "/retry"}, "")
	r.smsCallbacks(t, r.acceptMinimal(t))
	mailed := r.acceptMinimal(t)
	r.addAttempt(t, mailed)
	r.mailEvents(t, mailed)

	// The customer rates the event's first product too, as the feedback page lets them.
	_, _, err = e.store.Reviews.SaveReview(context.Background(), reviewdb.ReviewInput{EventID: richest, Rating: 5, Locale: "en",
		Products: []reviewdb.ProductRating{{Index: 0, Rating: 4, Comment: "Thin walls, keeps warm anyway."}}})
	require.NoError(t, err)
	reviews := r.success(t, "GET /reviews", apiCall{path: "/reviews", query: "channelId=" + e.channel + "&minRating=1"}, "")
	require.Len(t, asList(reviews["items"]), 1, "the review of the feedback form examples")
	review := asMap(asList(reviews["items"])[0])
	assert.Equal(t, richest, review["eventId"])
	r.publicReviews(t, review["id"].(string)) // before the shop replies to it and reports it
	r.reviewOperations(t, review["id"].(string))

	var suppressed string
	for _, ex := range r.examples(t, "POST /suppressions") {
		x := r.success(t, "POST /suppressions", apiCall{path: "/suppressions", body: jsonText(t, ex.value)}, ex.name)
		if suppressed == "" {
			suppressed = x["address"].(string)
		}
	}
	r.success(t, "GET /suppressions", apiCall{path: "/suppressions"}, "")
	r.success(t, "DELETE /suppressions/{address}", apiCall{path: "/suppressions/" + url.PathEscape(suppressed),
		query: "confirm=customer-consent"}, "")
	r.success(t, "GET /suppressions/{address}/history", apiCall{path: "/suppressions/" + url.PathEscape(suppressed) + "/history"}, "")

	r.webhookOperations(t, hooks)

	r.success(t, "GET /account", apiCall{path: "/account"}, "")
	for _, ex := range r.examples(t, "PATCH /account") {
		r.success(t, "PATCH /account", apiCall{path: "/account", body: jsonText(t, ex.value)}, ex.name)
	}

	r.templateOperations(t, checkout)

	ps := persondb.New(pg.NewDB(e.store.DB()))
	anna, err := ps.CreatePerson(context.Background(), people.Operator, e.account, "anna@shop.example", people.Owner)
	require.NoError(t, err)
	_, err = ps.SetRole(context.Background(), people.PersonActor(anna.ID), e.account, anna.ID, people.Editor)
	require.NoError(t, err)
	r.success(t, "GET /audit", apiCall{path: "/audit", query: "from=2020-01-01T00:00:00Z"}, "")

	for _, ex := range r.examples(t, "POST /customers/erase") {
		r.success(t, "POST /customers/erase", apiCall{path: "/customers/erase", body: jsonText(t, ex.value)}, ex.name)
	}

	var api []string
	for _, o := range r.doc.operations() {
		if o.onAPI() {
			api = append(api, o.key())
		}
	}
	assert.ElementsMatch(t, api, slices.Collect(maps.Keys(r.good)), "every documented operation of the API was called with success")
}

// reviewOperations calls the review operations on review id, which has a
// product rating: reading it, the ratings, its product ratings, the
// shop's reply and report, its history.
func (r *openAPIRun) reviewOperations(t *testing.T, id string) {
	at := "/reviews/" + id
	r.success(t, "GET /reviews/{id}", apiCall{path: at}, "")
	r.success(t, "GET /reviews/summary", apiCall{path: "/reviews/summary"}, "")
	period := "from=" + time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly) + "&to=" + time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	funnel := r.success(t, "GET /stats/invites", apiCall{path: "/stats/invites", query: period + "&groupBy=eventType"}, "byEventType")
	assert.NotZero(t, asMap(funnel["total"])["reviewed"])
	r.success(t, "GET /stats/reviews", apiCall{path: "/stats/reviews", query: period + "&timeZone=Europe/Berlin"}, "byDay")
	products := r.success(t, "GET /product-reviews", apiCall{path: "/product-reviews", query: "sku=CUP-ESP-01&minRating=4"}, "")
	require.Len(t, asList(products["items"]), 1)
	r.success(t, "GET /product-reviews/{id}", apiCall{path: "/product-reviews/" + asMap(asList(products["items"])[0])["id"].(string)}, "")
	summary := r.success(t, "GET /products/summary", apiCall{path: "/products/summary", query: "gtin=04006381333931"}, "rated")
	assert.EqualValues(t, 1, summary["count"])
	for _, ex := range r.examples(t, "PUT /reviews/{id}/reply") {
		r.success(t, "PUT /reviews/{id}/reply", apiCall{path: at + "/reply", body: jsonText(t, ex.value)}, ex.name)
	}
	for _, ex := range r.examples(t, "POST /reviews/{id}/report") {
		r.success(t, "POST /reviews/{id}/report", apiCall{path: at + "/report", body: jsonText(t, ex.value)}, ex.name)
	}
	r.success(t, "GET /reviews/{id}/history", apiCall{path: at + "/history"}, "moderated")
	r.success(t, "DELETE /reviews/{id}/reply", apiCall{path: at + "/reply"}, "")
}

// publicReviews reads the account's public reviews, with review id
// among them, in every public form.
func (r *openAPIRun) publicReviews(t *testing.T, id string) {
	acc := "/public/accounts/" + r.e.account
	list := r.success(t, "GET /public/accounts/{acc}/reviews", apiCall{path: acc + "/reviews"}, "reviews")
	require.Len(t, asList(list["items"]), 1)
	r.success(t, "GET /public/accounts/{acc}/reviews.jsonld", apiCall{path: acc + "/reviews.jsonld"}, "")
	r.success(t, "GET /public/accounts/{acc}/widget", apiCall{path: acc + "/widget", query: "locale=de&theme=dark"}, "")
	r.success(t, "GET /public/accounts/{acc}/feeds/google-product-reviews.xml", apiCall{path: acc + "/feeds/google-product-reviews.xml"}, "")
	r.success(t, "GET /public/accounts/{acc}/jwks.json", apiCall{path: acc + "/jwks.json"}, "")
	product := "account=" + r.e.account + "&sku=CUP-ESP-01"
	r.success(t, "GET /public/products/reviews", apiCall{path: "/public/products/reviews", query: product}, "product")
	r.success(t, "GET /public/products/reviews.jsonld", apiCall{path: "/public/products/reviews.jsonld", query: product}, "")
	r.success(t, "GET /public/reviews/{id}/verify", apiCall{path: "/public/reviews/" + id + "/verify", query: "locale=fr"}, "")
}

// templateOperations stores the document's template examples, lists,
// previews and test-sends them, and deletes the account's template.
func (r *openAPIRun) templateOperations(t *testing.T, eventTypeID string) {
	e := r.e
	r.success(t, "GET /templates/{kind}/{locale}", apiCall{path: "/templates/invite/en"}, "builtin")
	sms := e.do(t, http.MethodPut, "/templates/sms_invite/en?eventTypeId="+eventTypeID, e.token,
		map[string]any{"text": "Hi {{firstName}}! How was your visit? Tell us in a minute:"})
	require.Equal(t, http.StatusCreated, sms.status, "%s", sms.body)
	for _, ex := range r.examples(t, "PUT /templates/{kind}/{locale}") {
		r.success(t, "PUT /templates/{kind}/{locale}", apiCall{path: "/templates/invite/en", body: jsonText(t, ex.value)}, ex.name)
	}
	r.success(t, "GET /templates", apiCall{path: "/templates"}, "")
	for _, ex := range r.examples(t, "POST /templates/preview") {
		r.success(t, "POST /templates/preview", apiCall{path: "/templates/preview", body: jsonText(t, ex.value)}, ex.name)
	}
	var test string
	for _, ex := range r.examples(t, "POST /templates/test-send") {
		test = r.success(t, "POST /templates/test-send", apiCall{path: "/templates/test-send", body: jsonText(t, ex.value)}, ex.name)["id"].(string)
	}
	r.success(t, "GET /templates/test-sends/{id}", apiCall{path: "/templates/test-sends/" + test}, "pending")
	r.success(t, "DELETE /templates/{kind}/{locale}", apiCall{path: "/templates/invite/en"}, "")
}

// formContentType is how the public pages' forms are posted.
const formContentType = "application/x-www-form-urlencoded"

// publicPages walks through the public pages with the signed links of
// event id, as its invite would carry them: the feedback form, the form
// examples posted in turn (a later post replaces the review), the
// unsubscribe page and the document's unsubscribe bodies.
func (r *openAPIRun) publicPages(t *testing.T, id string) {
	feedbackLink := linkQuery(t, r.e.feedbackLinks, id)
	r.success(t, "GET /feedback", apiCall{path: "/feedback", query: feedbackLink.Encode()}, "")
	for _, ex := range r.doc.requestExamples(t, r.doc.operation(t, "POST /feedback"), formContentType) {
		form := formOf(ex.value)
		require.True(t, form.Has("event") && form.Has("sig"), "feedback example %q: the form carries the link's event and sig", ex.name)
		form.Set("event", id)
		form.Set("sig", feedbackLink.Get("sig"))
		r.success(t, "POST /feedback", apiCall{path: "/feedback", body: form.Encode(), contentType: formContentType}, ex.name)
	}

	unsubscribeLink := linkQuery(t, r.e.unsubscribeLinks, id).Encode()
	r.success(t, "GET /unsubscribe", apiCall{path: pages.UnsubscribePath, query: unsubscribeLink}, "")
	for _, ex := range r.doc.requestExamples(t, r.doc.operation(t, "POST /unsubscribe"), formContentType) {
		r.success(t, "POST /unsubscribe", apiCall{path: pages.UnsubscribePath, query: unsubscribeLink,
			body: formOf(ex.value).Encode(), contentType: formContentType}, ex.name)
	}
}

// smsCallbacks posts the document's examples of the SMS provider's
// callbacks, each signed as the provider signs it: the status reports as
// reports on event id's invite, the messages as they come in.
func (r *openAPIRun) smsCallbacks(t *testing.T, id string) {
	callback, err := sms.StatusCallbackFor(testSMSStatusURL, id, false)
	require.NoError(t, err)
	u, err := url.Parse(callback)
	require.NoError(t, err)
	for _, ex := range r.doc.requestExamples(t, r.doc.operation(t, "POST /sms/status"), formContentType) {
		r.success(t, "POST /sms/status", signedCall(sms.StatusPath, u.RawQuery, formOf(ex.value), callback), ex.name)
	}
	for _, ex := range r.doc.requestExamples(t, r.doc.operation(t, "POST /sms/inbound"), formContentType) {
		r.success(t, "POST /sms/inbound", signedCall(sms.InboundPath, "", formOf(ex.value), testSMSInboundURL), ex.name)
	}
}

// exampleMailEvent is the event the mail providers' examples report on.
const exampleMailEvent = "evt-1f0b9a6e-3c2d-4e5f-8a7b-9c0d1e2f3a4b"

// mailEvents posts the document's examples of the mail providers'
// reports, on event id's invite, each signed as its provider signs
// (the SNS examples re-signed by the test's SNS, Mailgun's with a fresh
// token), and checks that each report was taken.
func (r *openAPIRun) mailEvents(t *testing.T, id string) {
	const key = "POST /mail-events/{provider}"
	o := r.doc.operation(t, key)
	for _, ex := range r.doc.requestExamples(t, o, "text/plain") {
		m := jsonObject(t, ex.value.(string))
		message := strings.ReplaceAll(m["Message"].(string), exampleMailEvent, id)
		req := r.mail.snsMessage(t, m["Type"].(string), message, nil)
		res := r.success(t, key, apiCall{path: "/mail-events/ses", body: req.body, contentType: "text/plain; charset=UTF-8"}, "")
		assert.EqualValues(t, 0, res["unknown"], "example %q", ex.name)
	}
	for _, ex := range r.doc.requestExamples(t, o, "application/json") {
		body := strings.ReplaceAll(jsonText(t, ex.value), exampleMailEvent, id)
		var req mailRequest
		switch {
		case strings.HasPrefix(ex.name, mailevents.SendGrid):
			req = r.mail.sendGridSigned(t, body, time.Now())
		case strings.HasPrefix(ex.name, mailevents.Postmark):
			req = r.mail.postmarkAs(testPostmarkUser, testPostmarkPassword, body)
		case strings.HasPrefix(ex.name, mailevents.Mailgun):
			req = mailgunSigned(t, testMailgunKey, time.Now(), "openapi-"+r.mail.next(), asMap(jsonObject(t, body)["event-data"]))
		default:
			t.Fatalf("the example %q names no provider", ex.name)
		}
		res := r.success(t, key, apiCall{path: "/mail-events/" + req.provider, body: req.body, headers: req.headers}, "")
		assert.EqualValues(t, 1, res["reports"], "example %q", ex.name)
		assert.EqualValues(t, 0, res["unknown"], "example %q", ex.name)
	}
}

// signedCall posts form to path?query, signed over signedURL with the
// test provider's auth token.
func signedCall(path, query string, form url.Values, signedURL string) apiCall {
	return apiCall{path: path, query: query, body: form.Encode(), contentType: formContentType,
		headers: []header{{sms.SignatureHeader, sms.Signature(testSMSAuthToken, signedURL, form)}}}
}

// linkQuery is the query of links' signed link to event id.
func linkQuery(t testing.TB, links *signedlink.Links, id string) url.Values {
	t.Helper()
	u, err := url.Parse(links.URL(id))
	require.NoError(t, err)
	return u.Query()
}

// formOf is a form example as form values.
func formOf(example any) url.Values {
	form := url.Values{}
	for k, v := range asMap(example) {
		form.Set(k, fmt.Sprint(v))
	}
	return form
}

// forgeSig replaces the signature in a query or form, if it has one.
func forgeSig(t testing.TB, encoded string) string {
	t.Helper()
	v, err := url.ParseQuery(encoded)
	require.NoError(t, err)
	if !v.Has("sig") {
		return encoded
	}
	v.Set("sig", "bm90IHRoZSBzaWduYXR1cmUgb2YgdGhpcyBldmVudA")
	return v.Encode()
}

func jsonObject(t testing.TB, s string) map[string]any {
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}

// resign changes the form of a signed SMS callback c and signs it with
// token over public (with c's query), as the provider would.
func resign(t testing.TB, c apiCall, token, public string, change func(url.Values)) apiCall {
	t.Helper()
	form, err := url.ParseQuery(c.body)
	require.NoError(t, err)
	if change != nil {
		change(form)
	}
	if c.query != "" {
		public += "?" + c.query
	}
	c.body = form.Encode()
	c.headers = []header{{sms.SignatureHeader, sms.Signature(token, public, form)}}
	return c
}

// acceptMinimal accepts the smallest event example and returns its id.
func (r *openAPIRun) acceptMinimal(t *testing.T) string {
	res := r.e.do(t, http.MethodPost, "/events", r.e.token, r.minimalEvent)
	require.Equal(t, http.StatusAccepted, res.status, "%s", res.body)
	return res.object(t)["EventRef"].(string)
}

// addAttempt records a finished send attempt of the event, as a worker
// would have.
func (r *openAPIRun) addAttempt(t *testing.T, eventID string) {
	_, err := r.e.store.DB().Exec(`INSERT INTO send_attempts (event_id, kind, n, medium, started_at, finished_at, outcome, event_received_at)
		SELECT $1, 'invite', 1, 'email', now(), now(), 'sent', received_at FROM events WHERE id = $1`, eventID)
	require.NoError(t, err)
}

// sentLongAgo accepts an event whose invite was sent a year ago: its
// feedback link has expired.
func (r *openAPIRun) sentLongAgo(t *testing.T) string {
	id := r.acceptMinimal(t)
	_, err := r.e.store.DB().Exec(`UPDATE events SET invite_status = 'sent', invite_medium = 'email', attempts = 1,
		sent_at = now() - interval '365 days' WHERE id = $1`, id)
	require.NoError(t, err)
	return id
}

// giveUp fails the invite of an event as a worker would after its last
// attempt, so that the funnel counts it.
func (r *openAPIRun) giveUp(t *testing.T, eventID string) {
	ctx := context.Background()
	_, err := r.e.store.Invites.MarkScheduled(ctx, invite.KindInvite, eventID, time.Now())
	require.NoError(t, err)
	_, err = r.e.store.Invites.GiveUp(ctx, invite.KindInvite, eventID, invite.RetriesExhausted, "421 try later")
	require.NoError(t, err)
}

func (r *openAPIRun) setInviteStatus(t *testing.T, eventID string, status invite.Status) {
	_, err := r.e.store.DB().Exec(`UPDATE events SET invite_status = $2 WHERE id = $1`, eventID, status)
	require.NoError(t, err)
}

var resourceID = regexp.MustCompile(`/([a-z]{3})-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// unknownID replaces the resource id in path by a well-formed id of the
// same kind that does not exist.
func unknownID(path string) string {
	return resourceID.ReplaceAllString(path, "/$1-00000000-0000-4000-8000-000000000000")
}

// errorsReachable produces every 4xx and 5xx status the document lists
// for an operation of the API, starting from the call that succeeded,
// and checks each answer against its documented response.
func (r *openAPIRun) errorsReachable(t *testing.T) {
	e := r.e
	down := newEnvWith(t, unreachableStore(t)) // PostgreSQL unreachable: 503
	readonly := e.tokenFor(t, e.account, auth.GroupReadonly)
	// A client that has used up its rate limit for the next 1000 s.
	limited := newEnv(t, func(o *apiserver.Options) {
		o.RatePerSecond, o.RateBurst = 0.001, 1
		o.ReportRatePerSecond, o.ReportRateBurst = 0.001, 1
	})
	first := limited.do(t, http.MethodGet, "/channels", limited.token, nil)
	require.Equal(t, http.StatusOK, first.status, "%s", first.body)
	// A batch's body must arrive within 100 ms.
	impatient := newEnv(t, func(o *apiserver.Options) { o.BatchReadTimeout = 100 * time.Millisecond })

	// Statuses that depend on the operation.
	specific := map[string]func(c apiCall) apiCall{
		"409 POST /event-types": func(c apiCall) apiCall {
			c.body = jsonText(t, map[string]any{"name": r.eventTypeName})
			return c
		},
		"409 POST /channels": func(c apiCall) apiCall { return c }, // the same name again
		"409 PATCH /event-types/{id}": func(c apiCall) apiCall {
			c.body = jsonText(t, map[string]any{"name": r.eventTypeName})
			return c
		},
		"409 POST /events/{id}/cancel": func(c apiCall) apiCall {
			sent := r.acceptMinimal(t)
			r.setInviteStatus(t, sent, invite.Sent)
			c.path = "/events/" + sent + "/cancel"
			return c
		},
		"409 POST /events/{id}/retry":                    func(c apiCall) apiCall { return c }, // pending again since
		"409 POST /webhooks/{id}/deliveries/{msg}/retry": func(c apiCall) apiCall { return c }, // pending again since
		"409 POST /webhooks/{id}/replay": func(c apiCall) apiCall { // the endpoint disabled
			endpoint := strings.TrimSuffix(c.path, "/replay")
			res := e.do(t, http.MethodPatch, endpoint, e.token, map[string]any{"enabled": false})
			require.Equal(t, http.StatusOK, res.status, "%s", res.body)
			return c
		},
		"422 POST /events": func(c apiCall) apiCall {
			ev := jsonObject(t, r.minimalEvent)
			ev["type"] = "no such event type"
			c.body = jsonText(t, ev)
			return c
		},
		"409 POST /reviews/{id}/report": func(c apiCall) apiCall { // removed by the operator
			_, _, err := e.store.Reviews.ModerateReview(context.Background(), path.Base(path.Dir(c.path)), review.Remove, "spam")
			require.NoError(t, err)
			return c
		},
		"404 GET /templates/{kind}/{locale}":    func(c apiCall) apiCall { c.path = "/templates/letter/en"; return c },
		"404 PUT /templates/{kind}/{locale}":    func(c apiCall) apiCall { c.path = "/templates/invite/pt"; return c },
		"404 DELETE /templates/{kind}/{locale}": func(c apiCall) apiCall { return c }, // deleted already
		"404 POST /templates/preview": func(c apiCall) apiCall {
			c.body = jsonText(t, map[string]any{"kind": "invite", "locale": "en", "eventId": "evt-00000000-0000-4000-8000-000000000000"})
			return c
		},
		"404 POST /templates/test-send": func(c apiCall) apiCall {
			c.body = jsonText(t, map[string]any{"kind": "invite", "locale": "en", "to": "me@shop.example.com",
				"eventTypeId": "ety-00000000-0000-4000-8000-000000000000"})
			return c
		},
		"422 POST /templates/test-send": func(c apiCall) apiCall {
			_, _, err := e.store.Suppressions.AddSuppression(context.Background(), e.account, "suppressed.test@example.com", invite.Email, invite.Unsubscribed, "")
			require.NoError(t, err)
			c.body = jsonText(t, map[string]any{"kind": "invite", "locale": "en", "to": "Suppressed.Test@example.com"})
			return c
		},
		"404 DELETE /suppressions/{address}": func(c apiCall) apiCall {
			c.path = "/suppressions/nobody@example.com"
			return c
		},
		"404 GET /suppressions/{address}/history": func(c apiCall) apiCall {
			c.path = "/suppressions/nobody@example.com/history"
			return c
		},
		"400 DELETE /suppressions/{address}": func(c apiCall) apiCall { c.query = "confirm=yes"; return c },
		"409 DELETE /suppressions/{address}": func(c apiCall) apiCall { // the customer's own unsubscribe
			_, _, err := e.store.Suppressions.AddSuppression(context.Background(), e.account, "opted.out@example.com", invite.Email, invite.Unsubscribed, "")
			require.NoError(t, err)
			c.path, c.query = "/suppressions/opted.out@example.com", ""
			return c
		},
		"403 POST /sms/status":  func(c apiCall) apiCall { return resign(t, c, "not the auth token", testSMSStatusURL, nil) },
		"403 POST /sms/inbound": func(c apiCall) apiCall { return resign(t, c, "not the auth token", testSMSInboundURL, nil) },
		"400 POST /sms/status": func(c apiCall) apiCall { // signed, no MessageSid
			return resign(t, c, testSMSAuthToken, testSMSStatusURL, func(f url.Values) { f.Del("MessageSid"); f.Del("SmsSid") })
		},
		"400 POST /sms/inbound": func(c apiCall) apiCall { // signed, no From
			return resign(t, c, testSMSAuthToken, testSMSInboundURL, func(f url.Values) { f.Del("From") })
		},
		"400 POST /mail-events/{provider}": func(c apiCall) apiCall { // verified, no RecordType
			req := r.mail.postmarkAs(testPostmarkUser, testPostmarkPassword, `{"MessageID":"883953f4"}`)
			return apiCall{path: "/mail-events/postmark", body: req.body, headers: req.headers}
		},
		"401 POST /mail-events/{provider}": func(c apiCall) apiCall {
			req := r.mail.postmarkAs(testPostmarkUser, "not the password", `{"RecordType":"Delivery"}`)
			return apiCall{path: "/mail-events/postmark", body: req.body, headers: req.headers}
		},
		"403 POST /mail-events/{provider}": func(c apiCall) apiCall { // a topic not listed
			req := r.mail.snsMessage(t, "Notification", `{"notificationType":"Delivery"}`, func(m map[string]string) {
				m["TopicArn"] = "arn:aws:sns:eu-west-1:999999999999:someone-else"
			})
			return apiCall{path: "/mail-events/ses", body: req.body, contentType: "text/plain"}
		},
		"404 POST /mail-events/{provider}": func(c apiCall) apiCall { c.path = "/mail-events/sparkpost"; return c },
		"413 POST /mail-events/{provider}": func(c apiCall) apiCall {
			c.body = "[" + strings.Repeat(" ", mailevents.MaxBody) + "]"
			return c
		},
		"503 POST /mail-events/{provider}": func(c apiCall) apiCall { // SNS unreachable for a certificate not cached
			req := r.mail.snsMessage(t, "Notification", `{"notificationType":"Delivery"}`, func(m map[string]string) {
				m["SigningCertURL"] = r.mail.sns.URL + "/SimpleNotificationService-unreachable.pem"
			})
			return apiCall{path: "/mail-events/ses", body: req.body, contentType: "text/plain"}
		},
		"404 GET /public/products/reviews": func(c apiCall) apiCall {
			c.query = "account=acc-00000000-0000-4000-8000-000000000000&sku=CUP-ESP-01"
			return c
		},
		"404 GET /public/products/reviews.jsonld": func(c apiCall) apiCall {
			c.query = "account=acc-00000000-0000-4000-8000-000000000000&sku=CUP-ESP-01"
			return c
		},
		"404 GET /public/accounts/{acc}/widget":         func(c apiCall) apiCall { c.path = unknownID(c.path); return c },
		"404 GET /public/reviews/{id}/verify":           func(c apiCall) apiCall { c.path = unknownID(c.path); return c },
		"400 GET /public/reviews/{id}/verify":           func(c apiCall) apiCall { c.query = "limit=0"; return c },
		"400 GET /public/accounts/{acc}/reviews.jsonld": func(c apiCall) apiCall { c.query = "limit=0"; return c },
		"400 GET /public/accounts/{acc}/jwks.json":      func(c apiCall) apiCall { c.query = "limit=0"; return c },
		"400 GET /public/accounts/{acc}/feeds/google-product-reviews.xml": func(c apiCall) apiCall {
			c.query = "limit=0"
			return c
		},
		"410 GET /feedback": func(c apiCall) apiCall {
			c.query = linkQuery(t, e.feedbackLinks, r.sentLongAgo(t)).Encode()
			return c
		},
		"410 POST /feedback": func(c apiCall) apiCall {
			form, err := url.ParseQuery(c.body)
			require.NoError(t, err)
			link := linkQuery(t, e.feedbackLinks, r.sentLongAgo(t))
			form.Set("event", link.Get("event"))
			form.Set("sig", link.Get("sig"))
			c.body = form.Encode()
			return c
		},
		"400 POST /feedback": func(c apiCall) apiCall { // a valid link, no rating
			form, err := url.ParseQuery(c.body)
			require.NoError(t, err)
			form.Del("rating")
			c.body = form.Encode()
			return c
		},
	}

	for _, o := range r.doc.operations() {
		if !o.onAPI() {
			continue
		}
		for code := range r.doc.responses(o) {
			status, _ := strconv.Atoi(code)
			if status < 400 {
				continue
			}
			c, target := r.good[o.key()], e
			if status == http.StatusMethodNotAllowed { // a method the path does not offer
				res := e.do(t, otherMethod(o), c.path+"?"+c.query, c.token, nil)
				assert.Equal(t, status, res.status, "%s: the documented %d: %s", o.key(), status, res.body)
				r.doc.checkAnswer(t, o, res)
				continue
			}
			if status == http.StatusRequestTimeout { // a body that stops halfway
				require.Equal(t, "POST /events/batch", o.key(), "only a batch's body has a deadline")
				res := impatient.holdBatch(t, impatient.token, []byte(c.body), len(c.body)/2).wait()
				assert.Equal(t, status, res.status, "%s: the documented %d: %s", o.key(), status, res.body)
				r.doc.checkAnswer(t, o, res)
				continue
			}
			hasBody := r.doc.resolve(o.node["requestBody"]) != nil
			ok, repeat := true, false
			f, found := specific[code+" "+o.key()]
			switch {
			case found:
				c = f(c)
			case status == http.StatusNotFound && r.doc.page(o): // a link that does not verify
				c.query, c.body = forgeSig(t, c.query), forgeSig(t, c.body)
			case status == http.StatusTooManyRequests && (r.doc.page(o) || strings.HasPrefix(o.path, "/public/") ||
				strings.HasPrefix(o.path, "/mail-events/")):
				// Pages, the public reviews and the providers' reports are
				// limited per address: send until limited.
				target, repeat = limited, true
			case status == http.StatusBadRequest:
				switch {
				case hasBody:
					c.body = `{"noSuchMember":true}`
				case r.doc.hasQuery(o):
					c.query = "limit=0"
				default:
					ok = false
				}
			case status == http.StatusUnauthorized:
				c.token = ""
			case status == http.StatusForbidden:
				c.token = readonly
			case status == http.StatusNotFound:
				c.path = unknownID(c.path)
				ok = c.path != r.good[o.key()].path
			case status == http.StatusRequestEntityTooLarge:
				c.body = `{"name":"` + strings.Repeat("x", apiserver.DefaultMaxBodyBytes) + `"}`
				if o.key() == "POST /events/batch" { // a limit of its own
					c.body = `{"events":[{"name":"` + strings.Repeat("x", 8<<20) + `"}]}`
				}
				ok = hasBody
			case status == http.StatusUnsupportedMediaType:
				c.contentType = "text/plain"
				ok = hasBody
			case status == http.StatusTooManyRequests:
				target, c.token = limited, limited.token
			case status == http.StatusServiceUnavailable:
				target = down
				if c.token != "" {
					c.token = down.token
				}
			default:
				ok = false
			}
			if !ok {
				t.Errorf("%s documents %d, and this test does not know how to produce it", o.key(), status)
				continue
			}
			res, _, _ := r.send(t, target, o.key(), c)
			for i := 0; repeat && res.status != status && i < 400; i++ {
				res, _, _ = r.send(t, target, o.key(), c)
			}
			assert.Equal(t, status, res.status, "%s: the documented %d: %s", o.key(), status, res.body)
		}
	}
}

// otherMethod is a method that o's path does not offer.
func otherMethod(o operation) string {
	for _, m := range []string{http.MethodPatch, http.MethodPut, http.MethodDelete, http.MethodPost, http.MethodGet} {
		if o.item[strings.ToLower(m)] == nil {
			return m
		}
	}
	panic("every method is offered on " + o.path)
}

// TestOpenAPITokenEndpoint checks the issuer's documented operations
// against a real issuer: the token request examples, the exact members
// of the token answer, every documented error, discovery and the JWKS.
func TestOpenAPITokenEndpoint(t *testing.T) {
	t.Parallel()
	d := loadOpenAPI(t)
	e := newEnv(t)
	token := d.operation(t, http.MethodPost+" "+authserver.TokenPath)
	client, secret := e.newClient(t, e.account, auth.GroupFull)

	post := func(issuerURL string, form url.Values, basicID, basicSecret string) response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, issuerURL+authserver.TokenPath, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basicID != "" {
			req.SetBasicAuth(url.QueryEscape(basicID), url.QueryEscape(basicSecret))
		}
		return roundTrip(t, req)
	}

	for _, ex := range d.requestExamples(t, token, "application/x-www-form-urlencoded") {
		form := url.Values{}
		for k, v := range asMap(ex.value) {
			form.Set(k, v.(string))
		}
		basic := !form.Has("client_id") // the example sends the credentials with HTTP Basic
		if !basic {
			form.Set("client_id", client.ClientID)
			form.Set("client_secret", secret)
		}
		if form.Has("audience") {
			form.Set("audience", testAudience)
		}
		var res response
		if basic {
			res = post(e.issuerURL, form, client.ClientID, secret)
		} else {
			res = post(e.issuerURL, form, "", "")
		}
		require.Equal(t, http.StatusOK, res.status, "example %q: %s", ex.name, res.body)
		doc, body := d.checkAnswer(t, token, res)
		d.checkShape(t, token, res, doc, body, ex.name)
		got := asMap(body)
		assert.EqualValues(t, 300, got["expires_in"], "example %q", ex.name)
		assert.Equal(t, "no-cache", res.header.Get("Pragma"))
		// The token works on the API.
		assert.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/channels", got["access_token"].(string), nil).status)
	}

	good := url.Values{"grant_type": {"client_credentials"}, "client_id": {client.ClientID}, "client_secret": {secret}}
	with := func(k, v string) url.Values {
		f := maps.Clone(good)
		f.Set(k, v)
		return f
	}
	for code := range d.responses(token) {
		var res response
		switch status, _ := strconv.Atoi(code); status {
		case http.StatusOK:
			continue
		case http.StatusBadRequest:
			res = post(e.issuerURL, with("grant_type", "password"), "", "")
		case http.StatusUnauthorized:
			res = post(e.issuerURL, with("client_secret", "wrong"), "", "")
		case http.StatusRequestEntityTooLarge:
			res = post(e.issuerURL, with("audience", strings.Repeat("a", 9<<10)), "", "")
		case http.StatusTooManyRequests:
			// Failed attempts of one client id are limited to 10 a minute.
			other, _ := e.newClient(t, e.account, auth.GroupFull)
			for range 20 {
				res = post(e.issuerURL, url.Values{"grant_type": {"client_credentials"}, "client_id": {other.ClientID}, "client_secret": {"wrong"}}, "", "")
				if res.status != http.StatusUnauthorized {
					break
				}
			}
		case http.StatusServiceUnavailable:
			res = post(issuerWithoutDatabase(t), good, "", "")
		case http.StatusMethodNotAllowed:
			req, err := http.NewRequest(http.MethodGet, e.issuerURL+authserver.TokenPath+"?"+good.Encode(), nil)
			require.NoError(t, err)
			res = roundTrip(t, req)
		default:
			t.Errorf("%s documents %s, and this test does not know how to produce it", token.key(), code)
			continue
		}
		assert.Equal(t, code, strconv.Itoa(res.status), "%s: %s", token.key(), res.body)
		d.checkAnswer(t, token, res)
	}

	for _, path := range []string{authserver.DiscoveryPath, authserver.JWKSPath} {
		o := d.operation(t, http.MethodGet+" "+path)
		req, err := http.NewRequest(http.MethodGet, e.issuerURL+path, nil)
		require.NoError(t, err)
		res := roundTrip(t, req)
		require.Equal(t, http.StatusOK, res.status, "%s: %s", path, res.body)
		doc, body := d.checkAnswer(t, o, res)
		d.checkShape(t, o, res, doc, body, "")
		for code := range d.responses(o) {
			if code == "200" {
				continue
			}
			require.Equal(t, "405", code, "%s documents %s, and this test does not know how to produce it", o.key(), code)
			req, err := http.NewRequest(http.MethodPost, e.issuerURL+path, nil)
			require.NoError(t, err)
			res := roundTrip(t, req)
			assert.Equal(t, http.StatusMethodNotAllowed, res.status, "%s: %s", path, res.body)
			d.checkAnswer(t, o, res)
		}
	}
}

// issuerWithoutDatabase serves an issuer whose database has gone away
// after its start, and returns its URL.
func issuerWithoutDatabase(t *testing.T) string {
	t.Helper()
	db := testdb.New(t)
	issuer, err := authserver.New(context.Background(), authserver.Options{Store: storeset.New(db, "P7D").Auth,
		Issuer: "http://issuer.touchpoint.test", Audience: testAudience, SecretKey: testSecretKey,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
	require.NoError(t, err)
	require.NoError(t, db.Close())
	ts := httptest.NewServer(issuer)
	t.Cleanup(ts.Close)
	return ts.URL
}

func roundTrip(t testing.TB, req *http.Request) response {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var b strings.Builder
	_, err = io.Copy(&b, res.Body)
	require.NoError(t, err)
	return response{status: res.StatusCode, header: res.Header, body: []byte(b.String())}
}
