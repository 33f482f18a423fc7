package review

import "unicode/utf8"

// MaxText is the longest comment, reply or note, in characters (runes),
// counted as stored: cleaned as multi-line text (package text).
const MaxText = 2000

// TooLong reports whether a cleaned text is over MaxText characters.
func TooLong(s string) bool { return utf8.RuneCountInString(s) > MaxText }
