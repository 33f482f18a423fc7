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

// signedSeconds reads a signed Unix time: digits only, as the providers
// write it. The text is what the signature covers, so a value read from
// any other spelling ("1795887924e0", "1795887924.0", " 1795887924")
// would let the same signature stand for another text — with Mailgun's,
// which covers the timestamp followed by the token, a spent token
// becomes a new one.
func signedSeconds(s string) (time.Time, bool) {
	if len(s) == 0 || len(s) > 11 || strings.Trim(s, "0123456789") != "" {
		return time.Time{}, false
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil || sec <= 0 {
		return time.Time{}, false
	}
	return time.Unix(sec, 0).UTC(), true
}

// unixSeconds reads a Unix time in seconds, with or without a fraction:
// the time of an event, which no signature covers.
func unixSeconds(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f > 1e11 {
		return time.Time{}, false
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC(), true
}
