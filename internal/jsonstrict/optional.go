package jsonstrict

import (
	"encoding/json"
	"reflect"
)

// Optional is a field of a JSON merge patch (RFC 7396): absent (keep the
// value) or a value; with the tag nullable:"true" also null (remove it),
// as in "sendWindow": null. Decode rejects null on other Optionals.
type Optional[T any] struct {
	Set   bool // the key was present
	Null  bool // its value was null
	Value T
}

func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// Patch is the field as a merge patch for a store: nil when absent, a
// pointer to the zero value when null (remove it), else to the value.
func (o Optional[T]) Patch() *T {
	if !o.Set {
		return nil
	}
	v := o.Value
	if o.Null {
		var zero T
		v = zero
	}
	return &v
}

func (Optional[T]) optionalOf() reflect.Type { return reflect.TypeFor[T]() }

// optionalField is every Optional, whatever its T.
type optionalField interface{ optionalOf() reflect.Type }

// ReadOnly is a field of a resource that clients may not send (id,
// createdAt, …); naming it in the destination struct makes Decode reject
// it with "is read-only" instead of "is not a known field".
type ReadOnly struct{}

func (*ReadOnly) UnmarshalJSON([]byte) error { return nil }
