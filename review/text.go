package review

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxText is the longest comment, reply or note, in characters (runes),
// counted as stored: cleaned as multi-line text (package text).
const MaxText = 2000

// TooLong reports whether a cleaned text is over MaxText characters.
func TooLong(s string) bool { return utf8.RuneCountInString(s) > MaxText }

// What may be wrong with a shop's text; the API shows their text as the
// field's message.
var (
	ErrTextEmpty   = errors.New("must not be empty")
	ErrTextTooLong = fmt.Errorf("must be at most %d characters", MaxText)
)

// CheckText says what is wrong with a shop's cleaned text — a reply
// (required) or a report's note — or nil.
func CheckText(s string, required bool) error {
	switch {
	case required && s == "":
		return ErrTextEmpty
	case TooLong(s):
		return ErrTextTooLong
	}
	return nil
}
