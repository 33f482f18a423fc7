package jsonstrict

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	optionalType   = reflect.TypeFor[optionalField]()
	readOnlyType   = reflect.TypeFor[ReadOnly]()
	timeType       = reflect.TypeFor[time.Time]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()

	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// walk checks valid JSON against struct type t and returns the walker,
// which holds the elements of the arrays of json.RawMessage it met.
func walk(data []byte, t reflect.Type) (*walker, error) {
	src := &lexer{data: data}
	if tok, _ := src.Token(); tok != json.Delim('{') {
		return nil, notAnObject()
	}
	wk := &walker{src: src}
	if err := wk.object(t, ""); err != nil {
		return nil, err // not reached: the lexer reads only valid JSON
	}
	if len(wk.errs) > 0 {
		return nil, wk.errs
	}
	return wk, nil
}

// walker checks a token stream against a Go type. Its methods return
// only the lexer's errors, which valid JSON does not have.
type walker struct {
	src  *lexer
	errs FieldErrors
	raws []json.RawMessage // elements of arrays of json.RawMessage
}

func (w *walker) fail(path, format string, args ...any) {
	if len(w.errs) < MaxFieldErrors {
		w.errs = append(w.errs, FieldError{Field: path, Message: fmt.Sprintf(format, args...)})
	}
}

// value checks the next value; only syntax errors are returned.
func (w *walker) value(t reflect.Type, path string) error {
	tok, err := w.src.Token()
	if err != nil {
		return err
	}
	return w.valueFrom(tok, t, path)
}

// valueFrom checks the value whose first token is tok.
func (w *walker) valueFrom(tok json.Token, t reflect.Type, path string) error {
	switch {
	case t == readOnlyType:
		w.fail(path, "is read-only")
		return w.skip(tok)
	case t.Kind() != reflect.Pointer && t.Implements(optionalType):
		if tok == nil {
			return nil
		}
		return w.valueFrom(tok, reflect.Zero(t).Interface().(optionalField).optionalOf(), path)
	case t == rawMessageType || t.Kind() == reflect.Interface:
		return w.skip(tok)
	case t != timeType && (reflect.PointerTo(t).Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)):
		// A type that decodes itself is checked by Unmarshal afterwards.
		return w.skip(tok)
	case tok == nil:
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			return nil
		}
		w.fail(path, "must be %s, not null", kindName(t))
		return nil
	case t == timeType:
		if s, ok := tok.(string); !ok {
			return w.mismatch(tok, t, path)
		} else if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			w.fail(path, "must be an RFC 3339 timestamp such as 2026-11-22T06:00:00.000Z")
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return w.valueFrom(tok, t.Elem(), path)
	case reflect.Struct:
		if tok != json.Delim('{') {
			return w.mismatch(tok, t, path)
		}
		return w.object(t, path)
	case reflect.Map:
		if tok != json.Delim('{') {
			return w.mismatch(tok, t, path)
		}
		return w.mapping(t, path)
	case reflect.Slice:
		if tok != json.Delim('[') {
			return w.mismatch(tok, t, path)
		}
		if t.Elem() == rawMessageType {
			return w.rawElements()
		}
		for i := 0; w.src.More(); i++ {
			if err := w.value(t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err := w.src.Token() // ]
		return err
	case reflect.String:
		s, ok := tok.(string)
		if !ok {
			return w.mismatch(tok, t, path)
		}
		if strings.IndexByte(s, 0) >= 0 {
			w.fail(path, "must not contain NUL characters")
		}
	case reflect.Bool:
		if _, ok := tok.(bool); !ok {
			return w.mismatch(tok, t, path)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := tok.(json.Number)
		if !ok {
			return w.mismatch(tok, t, path)
		}
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			if isInteger(n) {
				w.fail(path, "is out of range")
			} else {
				w.fail(path, "must be an integer")
			}
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := tok.(json.Number)
		if !ok {
			return w.mismatch(tok, t, path)
		}
		if _, err := strconv.ParseUint(string(n), 10, t.Bits()); err != nil {
			if isInteger(n) {
				w.fail(path, "is out of range")
			} else {
				w.fail(path, "must be a non-negative integer")
			}
		}
	case reflect.Float32, reflect.Float64:
		n, ok := tok.(json.Number)
		if !ok {
			return w.mismatch(tok, t, path)
		}
		if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			w.fail(path, "is out of range")
		}
	default:
		panic(fmt.Sprintf("jsonstrict: cannot check %s at %q", t, path))
	}
	return nil
}

// rawElements keeps the elements of an array of json.RawMessage after
// its '[' in raws, unread, and consumes the ']'. Their owner checks each
// of them on its own (the events of a batch).
func (w *walker) rawElements() error {
	for w.src.More() {
		start := w.src.pos
		w.src.skipValue()
		w.raws = append(w.raws, w.src.data[start:w.src.pos])
	}
	_, err := w.src.Token() // ]
	return err
}

func isInteger(n json.Number) bool {
	s := strings.TrimPrefix(string(n), "-")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// object checks the members of an object after its '{' against struct t.
func (w *walker) object(t reflect.Type, path string) error {
	fs := fieldsOf(t)
	seen := make(map[string]bool, len(fs.byName))
	for w.src.More() {
		tok, err := w.src.Token()
		if err != nil {
			return err
		}
		key := tok.(string) // the decoder guarantees a string key here
		p := joinPath(path, key)
		f, known := fs.byName[key]
		switch {
		case seen[key]:
			w.fail(p, "duplicated key %q", key)
			known = false
		case !known:
			w.fail(p, "%s", unknownField(key, fs.writable))
		}
		seen[key] = true
		if !known {
			if err := w.skipValue(); err != nil {
				return err
			}
			continue
		}
		tok, err = w.src.Token()
		if err != nil {
			return err
		}
		if tok == nil && f.required {
			w.fail(p, "is required")
			continue
		}
		if tok == nil && f.optional && !f.nullable {
			w.fail(p, "must not be null (it cannot be removed)")
			continue
		}
		if err := w.valueFrom(tok, f.typ, p); err != nil {
			return err
		}
	}
	for _, name := range fs.names {
		if fs.byName[name].required && !seen[name] {
			w.fail(joinPath(path, name), "is required")
		}
	}
	_, err := w.src.Token() // }
	return err
}

// mapping checks an object after its '{' against map type t.
func (w *walker) mapping(t reflect.Type, path string) error {
	if t.Key().Kind() != reflect.String {
		panic(fmt.Sprintf("jsonstrict: cannot check %s at %q", t, path))
	}
	seen := map[string]bool{}
	for w.src.More() {
		tok, err := w.src.Token()
		if err != nil {
			return err
		}
		key := tok.(string)
		p := MapPath(path, key)
		if strings.IndexByte(key, 0) >= 0 {
			w.fail(path, "keys must not contain NUL characters")
		}
		if seen[key] {
			w.fail(p, "duplicated key %q", key)
			if err := w.skipValue(); err != nil {
				return err
			}
			continue
		}
		seen[key] = true
		if err := w.value(t.Elem(), p); err != nil {
			return err
		}
	}
	_, err := w.src.Token() // }
	return err
}

func (w *walker) mismatch(tok json.Token, t reflect.Type, path string) error {
	w.fail(path, "must be %s, not %s", kindName(t), tokenKind(tok))
	return w.skip(tok)
}

// skipValue consumes the next value whole.
func (w *walker) skipValue() error {
	w.src.skipValue()
	return nil
}

// skip consumes the rest of the value that began with tok.
func (w *walker) skip(tok json.Token) error {
	if tok == json.Delim('{') || tok == json.Delim('[') {
		w.src.skipRest()
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// MapPath names the entry key of the map at path as field errors do:
// metadata.orderSource, or metadata["a b"] when the key is not a plain
// identifier.
func MapPath(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			plain = false
			break
		}
	}
	if plain {
		return joinPath(path, key)
	}
	return path + "[" + strconv.Quote(key) + "]"
}

func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Pointer && t.Implements(optionalType) {
		return kindName(reflect.Zero(t).Interface().(optionalField).optionalOf())
	}
	switch t.Kind() {
	case reflect.String:
		if t == timeType {
			return "an RFC 3339 timestamp string"
		}
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Struct:
		if t == timeType {
			return "an RFC 3339 timestamp string"
		}
		return "an object"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "an object of strings"
		}
		return "an object"
	}
	return t.Kind().String()
}

func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case nil:
		return "null"
	}
	if tok == json.Delim('[') {
		return "an array"
	}
	return "an object"
}

// structFields are the JSON members of a struct type.
type structFields struct {
	byName   map[string]field
	names    []string // sorted, for a stable error order
	writable []string // names that are not readOnly, for hints
}

type field struct {
	typ      reflect.Type
	required bool // tag required:"true"
	optional bool // an optional: absent, or a value
	nullable bool // tag nullable:"true" on an optional: null removes it
}

var fieldCache sync.Map // reflect.Type → structFields

// fieldsOf lists the JSON members of struct type t as encoding/json sees
// them: tag names (or Go names), embedded structs promoted, "-" and
// unexported fields left out.
func fieldsOf(t reflect.Type) structFields {
	if v, ok := fieldCache.Load(t); ok {
		return v.(structFields)
	}
	fs := structFields{byName: map[string]field{}}
	var collect func(t reflect.Type)
	collect = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct {
				collect(sf.Type)
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			fs.byName[name] = field{typ: sf.Type, required: sf.Tag.Get("required") == "true",
				optional: sf.Type.Kind() != reflect.Pointer && sf.Type.Implements(optionalType),
				nullable: sf.Tag.Get("nullable") == "true"}
		}
	}
	collect(t)
	for name := range fs.byName {
		fs.names = append(fs.names, name)
	}
	sort.Strings(fs.names)
	for _, name := range fs.names {
		if fs.byName[name].typ != readOnlyType {
			fs.writable = append(fs.writable, name)
		}
	}
	fieldCache.Store(t, fs)
	return fs
}

// unknownField words the error for an unknown key, with a hint when a
// known name is close: same letters in another case, snake_case or
// kebab-case for camelCase, or a small typo.
func unknownField(key string, names []string) string {
	if hint := Suggest(key, names); hint != "" {
		if strings.EqualFold(hint, key) {
			return fmt.Sprintf("is not a known field (names are case-sensitive); did you mean %q?", hint)
		}
		return fmt.Sprintf("is not a known field; did you mean %q?", hint)
	}
	if len(names) <= 12 {
		return "is not a known field; known fields: " + strings.Join(names, ", ")
	}
	return "is not a known field"
}

// Suggest returns the name among names that key was probably meant to
// be — the same letters in another case, snake_case or kebab-case for
// camelCase, or a small typo — or "" when none is close.
func Suggest(key string, names []string) string {
	fold := func(s string) string {
		return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
	}
	k := fold(key)
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
	}
	for _, n := range names {
		if fold(n) == k {
			return n
		}
	}
	best, bestDist := "", 3
	for _, n := range names {
		// Allow one edit in short names, two in longer ones.
		limit := 1
		if len(n) >= 6 {
			limit = 2
		}
		if d := editDistance(k, fold(n)); d <= limit && d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of adjacent letters.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	if len(x) > 64 || len(y) > 64 {
		return 1 << 10 // not worth comparing
	}
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
