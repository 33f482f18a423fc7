package mailevents

import (
	"crypto/subtle"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func utf8Valid(s string) bool { return utf8.ValidString(s) }

// equal compares secrets in constant time.
func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// unixSeconds reads a Unix time in seconds, with or without a fraction.
func unixSeconds(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f > 1e11 {
		return time.Time{}, false
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC(), true
}
