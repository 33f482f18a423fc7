// Package problem is an input rule's refusal of a kind: a reader that
// says the kind in its own words finds it with errors.Is, and the error's
// text is the rule's detail for API clients.
package problem

// Error is a refusal of kind Kind (a sentinel of the rule's package),
// in the words of Msg.
type Error struct {
	Kind error
	Msg  string
}

func (e Error) Error() string { return e.Msg }
func (e Error) Unwrap() error { return e.Kind }

// New is a refusal of kind in the words msg.
func New(kind error, msg string) error { return Error{Kind: kind, Msg: msg} }
