// Package feedschema checks a document against the structure of Google's
// Product Reviews Feed, version 2.3, for tests: no XSD validator runs
// here, so the schema is written down below as Go values and the check
// walks the parsed document against it.
//
// Where the structure comes from: Google's schema,
// http://www.google.com/shopping/reviews/schema/product/2.3/product_reviews.xsd,
// as Google describes it at https://developers.google.com/product-review-feeds/schema
// (every element's order, occurrence and type), its sample feed of version
// 2.3 at https://developers.google.com/product-review-feeds/sample (the
// asins of product_ids, collection_method, transaction_id), and the text
// of the published XSD of version 2.2, which 2.3 extends by asins: the
// element sequences with their minOccurs and maxOccurs, the attributes
// and their use, and the simple types — nonEmptyStringType (pattern
// \s*\S+[\s\S]*), httpUrlType (xs:anyURI, pattern (https?://)?\S+\.\S+),
// the gtin pattern [\d -xX]{7,}, collectionMethodType (unsolicited,
// post_fulfillment), the review_url type (singleton, group), ratingType
// (xs:decimal with the xs:integer attributes min and max, both
// required) — and the uniqueness of review_id within reviews and within
// deleted_reviews.
package feedschema

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Version is the version of the schema this package knows.
const Version = "2.3"

// kind is the type of an element's text, or of an attribute.
type kind int

const (
	complexContent kind = iota // child elements only
	nonEmpty                   // nonEmptyStringType
	httpURL                    // httpUrlType
	dateTime                   // xs:dateTime
	decimal                    // xs:decimal
	integer                    // xs:integer
	boolean                    // xs:boolean
	gtin                       // [\d -xX]{7,}
	fixedVersion               // xs:string fixed="2.3"
	enumeration                // one of values
)

type attr struct {
	name     string
	kind     kind
	required bool
	values   []string // enumeration
}

// elem is an element declaration: its occurrence in its parent's
// sequence, its text's kind, its attributes, and (complexContent) the
// sequence of its children.
type elem struct {
	name     string
	min, max int // max < 0: unbounded
	kind     kind
	values   []string // enumeration
	attrs    []attr
	children []elem
}

const unbounded = -1

func one(name string, k kind, children ...elem) elem {
	return elem{name: name, min: 1, max: 1, kind: k, children: children}
}

func optional(name string, k kind, children ...elem) elem {
	return elem{name: name, min: 0, max: 1, kind: k, children: children}
}

func many(name string, k kind, children ...elem) elem {
	return elem{name: name, min: 1, max: unbounded, kind: k, children: children}
}

func withAttrs(e elem, as ...attr) elem { e.attrs = as; return e }

func list(container, item string) elem {
	return optional(container, complexContent, many(item, nonEmpty))
}

// feed is the schema: <feed> and everything in it, in order.
var feed = one("feed", complexContent,
	one("version", fixedVersion),
	optional("aggregator", complexContent, one("name", nonEmpty)),
	one("publisher", complexContent, one("name", nonEmpty), optional("favicon", httpURL)),
	optional("reviews", complexContent, many("review", complexContent,
		optional("review_id", nonEmpty),
		one("reviewer", complexContent,
			withAttrs(one("name", nonEmpty), attr{name: "is_anonymous", kind: boolean}),
			optional("reviewer_id", nonEmpty)),
		one("review_timestamp", dateTime),
		optional("title", nonEmpty),
		one("content", nonEmpty),
		list("pros", "pro"),
		list("cons", "con"),
		withAttrs(one("review_url", httpURL), attr{name: "type", kind: enumeration, required: true, values: []string{"singleton", "group"}}),
		optional("reviewer_images", complexContent, many("reviewer_image", complexContent, one("url", httpURL))),
		one("ratings", complexContent,
			withAttrs(one("overall", decimal), attr{name: "min", kind: integer, required: true}, attr{name: "max", kind: integer, required: true})),
		one("products", complexContent, many("product", complexContent,
			optional("product_ids", complexContent,
				optional("gtins", complexContent, many("gtin", gtin)),
				list("mpns", "mpn"),
				list("skus", "sku"),
				list("brands", "brand"),
				list("asins", "asin")),
			optional("product_name", nonEmpty),
			one("product_url", httpURL))),
		optional("is_spam", boolean),
		elem{name: "collection_method", min: 0, max: 1, kind: enumeration, values: []string{"unsolicited", "post_fulfillment"}},
		optional("transaction_id", nonEmpty),
	)),
	optional("deleted_reviews", complexContent, many("review_id", nonEmpty)),
)

// lexical are the simple types' lexical spaces: a pattern and the type's
// name. XSD patterns match the whole value; \s is space, tab, newline and
// carriage return, \d any decimal digit. Types other than strings
// collapse white space before they are matched.
var lexical = map[kind]struct {
	re       *regexp.Regexp
	name     string
	collapse bool
}{
	nonEmpty: {regexp.MustCompile(`[^ \t\n\r]`), "nonEmptyStringType (white space only)", false},
	httpURL:  {regexp.MustCompile(`^(https?://)?[^ \t\n\r]+\.[^ \t\n\r]+$`), "httpUrlType", true},
	gtin:     {regexp.MustCompile(`^[\p{Nd} -xX]{7,}$`), "gtin pattern", false},
	dateTime: {regexp.MustCompile(`^-?\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?$`), "xs:dateTime", true},
	decimal:  {regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)$`), "xs:decimal", true},
	integer:  {regexp.MustCompile(`^[+-]?\d+$`), "xs:integer", true},
	boolean:  {regexp.MustCompile(`^(true|false|1|0)$`), "xs:boolean", true},
}

// node is a parsed element.
type node struct {
	name     xml.Name
	attrs    []xml.Attr
	text     strings.Builder
	children []*node
}

// Validate parses a feed and checks it against the schema; it returns
// every violation found, each with the path of its element.
func Validate(r io.Reader) error {
	root, err := parse(r)
	if err != nil {
		return err
	}
	v := &validator{}
	if root.name.Local != feed.name || root.name.Space != "" {
		v.fail("/", "the root is %q, not <feed> in no namespace", root.name.Local)
	} else {
		v.check(root, feed, "/feed")
		v.unique(root, "reviews", "review", "review_id")
		v.unique(root, "deleted_reviews", "review_id", "")
	}
	return errors.Join(v.errs...)
}

func parse(r io.Reader) (*node, error) {
	dec := xml.NewDecoder(r)
	var stack []*node
	var root *node
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if root == nil || len(stack) > 0 {
				return nil, errors.New("the document ends early")
			}
			return root, nil
		}
		if err != nil {
			return nil, fmt.Errorf("not well-formed XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{name: t.Name, attrs: t.Attr}
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, n)
			} else if root != nil {
				return nil, errors.New("more than one root element")
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			} else if strings.TrimSpace(string(t)) != "" {
				return nil, errors.New("text outside the root element")
			}
		}
	}
}

type validator struct{ errs []error }

func (v *validator) fail(path, format string, args ...any) {
	v.errs = append(v.errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
}

// check holds n to its declaration d.
func (v *validator) check(n *node, d elem, path string) {
	v.checkAttrs(n, d, path)
	text := n.text.String()
	if d.kind == complexContent {
		if strings.TrimSpace(text) != "" {
			v.fail(path, "holds text %q where only elements may be", text)
		}
		v.checkSequence(n, d, path)
		return
	}
	if len(n.children) > 0 {
		v.fail(path, "holds the element <%s> where only text may be", n.children[0].name.Local)
	}
	if msg := valid(d.kind, d.values, text); msg != "" {
		v.fail(path, "%s", msg)
	}
}

// checkSequence matches n's children against d's sequence: each in order,
// each as often as its minOccurs and maxOccurs allow, nothing else.
func (v *validator) checkSequence(n *node, d elem, path string) {
	i, count := 0, 0
	next := func() {
		if count < d.children[i].min {
			v.fail(path, "lacks <%s> (needs at least %d)", d.children[i].name, d.children[i].min)
		}
		i, count = i+1, 0
	}
	seen := map[string]int{}
	for _, c := range n.children {
		seen[c.name.Local]++
		cpath := fmt.Sprintf("%s/%s[%d]", path, c.name.Local, seen[c.name.Local])
		if c.name.Space != "" {
			v.fail(cpath, "is in namespace %q; the feed's elements are in none", c.name.Space)
		}
		j := i
		for j < len(d.children) && d.children[j].name != c.name.Local {
			j++
		}
		if j == len(d.children) {
			v.fail(cpath, "is not allowed here (unknown, or out of the order %s)", names(d.children))
			continue
		}
		for i < j {
			next()
		}
		count++
		if max := d.children[i].max; max >= 0 && count > max {
			v.fail(cpath, "occurs more than %d time(s)", max)
		}
		v.check(c, d.children[i], cpath)
	}
	for i < len(d.children) {
		next()
	}
}

func names(es []elem) string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.name
	}
	return strings.Join(out, ", ")
}

// checkAttrs holds n's attributes to d's: the declared ones valid, the
// required ones there, no others (namespace declarations and the
// XMLSchema-instance attributes aside).
func (v *validator) checkAttrs(n *node, d elem, path string) {
	got := map[string]string{}
	for _, a := range n.attrs {
		switch {
		case a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns",
			a.Name.Space == "http://www.w3.org/2001/XMLSchema-instance":
			continue
		case a.Name.Space != "":
			v.fail(path, "has the attribute %s:%s, which the schema does not declare", a.Name.Space, a.Name.Local)
			continue
		}
		got[a.Name.Local] = a.Value
	}
	for _, a := range d.attrs {
		val, ok := got[a.name]
		delete(got, a.name)
		if !ok {
			if a.required {
				v.fail(path, "lacks the required attribute %s", a.name)
			}
			continue
		}
		if msg := valid(a.kind, a.values, val); msg != "" {
			v.fail(path, "attribute %s: %s", a.name, msg)
		}
	}
	for name := range got {
		v.fail(path, "has the attribute %s, which the schema does not declare", name)
	}
}

// valid says what is wrong with s as a value of kind k ("" when nothing).
func valid(k kind, values []string, s string) string {
	collapsed := strings.Join(strings.Fields(s), " ")
	switch k {
	case fixedVersion:
		if s != Version {
			return fmt.Sprintf("is %q, fixed at %q", s, Version)
		}
	case enumeration:
		if !slices.Contains(values, collapsed) {
			return fmt.Sprintf("%q is not one of %v", s, values)
		}
	default:
		l := lexical[k]
		v := s
		if l.collapse {
			v = collapsed
		}
		if !l.re.MatchString(v) {
			return fmt.Sprintf("%q does not match the %s", s, l.name)
		}
	}
	return ""
}

// unique checks xs:unique: the text of field (or, "", of the item) is
// unique among root/container/item.
func (v *validator) unique(root *node, container, item, field string) {
	seen := map[string]bool{}
	for _, c := range root.children {
		if c.name.Local != container {
			continue
		}
		for _, it := range c.children {
			if it.name.Local != item {
				continue
			}
			key, ok := it.text.String(), true
			if field != "" {
				ok = false
				for _, f := range it.children {
					if f.name.Local == field {
						key, ok = f.text.String(), true
					}
				}
			}
			if !ok {
				continue
			}
			if seen[key] {
				v.fail("/feed/"+container, "%s %q occurs twice (xs:unique)", item, key)
			}
			seen[key] = true
		}
	}
}
