package review

import "slices"

// MaxProducts is how many products of an event the feedback page asks
// about: the first ten, in the event's order.
const MaxProducts = 10

// KeyKind names a kind of product key: the keys that product reviews,
// product summaries and Google's product ratings find a product by.
type KeyKind string

// Key kinds, in the order aggregates are locked and listed.
const (
	SKU  KeyKind = "sku"
	GTIN KeyKind = "gtin"
	MPN  KeyKind = "mpn"
)

// KeyKinds lists the key kinds in order.
func KeyKinds() []KeyKind { return []KeyKind{SKU, GTIN, MPN} }

// Valid reports whether k is one of KeyKinds.
func (k KeyKind) Valid() bool { return slices.Contains(KeyKinds(), k) }

// ProductKey is one key of a product: its sku, gtin or mpn as the event
// gave it (compared exactly).
type ProductKey struct {
	Kind  KeyKind
	Value string
}

// Keys lists the keys a product review counts under in the product
// aggregates: each of sku, gtin and mpn that is not empty, in KeyKinds
// order. A product with none counts under no key; it is still reviewed.
func Keys(sku, gtin, mpn string) []ProductKey {
	var out []ProductKey
	for i, v := range []string{sku, gtin, mpn} {
		if v != "" {
			out = append(out, ProductKey{Kind: KeyKinds()[i], Value: v})
		}
	}
	return out
}

// CompareKeys orders keys by kind (in KeyKinds order), then value: the
// order in which their aggregate rows are locked, so that concurrent
// changes cannot deadlock.
func CompareKeys(a, b ProductKey) int {
	if c := slices.Index(KeyKinds(), a.Kind) - slices.Index(KeyKinds(), b.Kind); c != 0 {
		return c
	}
	switch {
	case a.Value < b.Value:
		return -1
	case a.Value > b.Value:
		return 1
	}
	return 0
}

// ValidGTIN reports whether s is a GTIN as GS1 defines it: 8, 12, 13 or
// 14 digits whose last is the check digit of the others. Events take any
// text for a product's gtin (it still finds the product's reviews), but
// every public output — the JSON, the JSON-LD, Google's feed and the
// proofs — names a GTIN only when it checks: search engines flag a
// product whose GTIN does not.
func ValidGTIN(s string) bool {
	switch len(s) {
	case 8, 12, 13, 14:
	default:
		return false
	}
	sum := 0
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i]) - '0'
		if d < 0 || d > 9 {
			return false
		}
		if i == len(s)-1 {
			continue // the check digit itself
		}
		if (len(s)-1-i)%2 == 1 {
			d *= 3 // from the right, every other digit next to the check digit
		}
		sum += d
	}
	return (10-sum%10)%10 == int(s[len(s)-1]-'0')
}

// PublicGTIN is gtin when it checks (ValidGTIN), else "": what a public
// output shows of a product's gtin.
func PublicGTIN(gtin string) string {
	if ValidGTIN(gtin) {
		return gtin
	}
	return ""
}
