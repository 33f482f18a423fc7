// Package sendtime holds the pure scheduling rules of invite settings:
// ISO 8601 delays and daily send windows. It does no I/O.
package sendtime

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/internal/problem"
)

// MaxDelay is the longest delay an invite setting may have.
const MaxDelay = 180 * 24 * time.Hour

// The kinds of problem of a duration or a send window, for a reader that
// says them in its own words (errors.Is); each error's text is the
// detail written for API clients.
var (
	ErrDuration         = errors.New("not an ISO 8601 duration of days, weeks, hours, minutes or seconds")
	ErrDelayTooLong     = errors.New("longer than the maximum of 180 days")
	ErrReminderTooLong  = errors.New("longer than the maximum of 30 days")
	ErrTimeOfDay        = errors.New("not a time of day written HH:MM")
	ErrTimeZone         = errors.New("not an IANA time zone name")
	ErrWindowNoDuration = errors.New("a window from a time to the same time")
)

// ParseDuration parses an ISO 8601 duration of the two forms Touchpoint
// accepts: PnW, or PnDTnHnMnS with every part optional but at least one
// present (seconds may carry up to nine fractional digits after a '.').
// Years and months are rejected because their length depends on the
// calendar. The result lies in 0 … MaxDelay. Error messages are written
// for API clients and carry no prefix.
func ParseDuration(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	if err != nil {
		return 0, problem.New(ErrDuration, err.Error())
	}
	if d > MaxDelay {
		return 0, problem.New(ErrDelayTooLong, fmt.Sprintf("%q is longer than the maximum of 180 days (P180D)", s))
	}
	return d, nil
}

const errHint = "use an ISO 8601 duration such as P7D, P2W or PT12H30M"

func parseDuration(s string) (time.Duration, error) {
	switch {
	case s == "":
		return 0, errors.New("must not be empty; " + errHint)
	case len(s) > 64:
		return 0, errors.New("is too long; " + errHint)
	case s[0] == '-' || s[0] == '+':
		return 0, fmt.Errorf("%q: signed durations are not allowed; %s", s, errHint)
	case s != strings.ToUpper(s):
		return 0, fmt.Errorf("%q: designators must be upper case (P, W, D, T, H, M, S)", s)
	case s[0] != 'P':
		return 0, fmt.Errorf("%q must start with P; %s", s, errHint)
	}
	rest := s[1:]
	if rest == "" {
		return 0, fmt.Errorf("%q has no components; %s", s, errHint)
	}
	datePart, timePart, hasT := strings.Cut(rest, "T")
	if hasT && timePart == "" {
		return 0, fmt.Errorf("%q has a T but no hours, minutes or seconds after it", s)
	}

	var total time.Duration
	add := func(n, fracNanos int64, unit time.Duration) error {
		// Every component alone must stay far below the 180-day limit's
		// overflow range; anything larger is rejected outright.
		if n > int64(10*MaxDelay/unit) {
			return fmt.Errorf("%q is longer than the maximum of 180 days (P180D)", s)
		}
		total += time.Duration(n)*unit + time.Duration(fracNanos)
		return nil
	}

	// Date part: nW alone, or nD.
	if datePart != "" {
		n, _, designator, tail, err := component(datePart, false)
		if err != nil {
			return 0, fmt.Errorf("%q: %v", s, err)
		}
		if tail != "" {
			return 0, fmt.Errorf("%q: unexpected %q after %c; %s", s, tail, designator, errHint)
		}
		switch designator {
		case 'W':
			if hasT {
				return 0, fmt.Errorf("%q: weeks cannot be combined with other components (use days, e.g. P9DT12H)", s)
			}
			if err := add(n, 0, 7*24*time.Hour); err != nil {
				return 0, err
			}
		case 'D':
			if err := add(n, 0, 24*time.Hour); err != nil {
				return 0, err
			}
		case 'Y', 'M':
			return 0, fmt.Errorf("%q: years and months are not supported because their length varies; use days or weeks", s)
		default:
			return 0, fmt.Errorf("%q: unknown designator %q before T; %s", s, designator, errHint)
		}
	}

	// Time part: H, M, S in this order, each at most once.
	order := "HMS"
	units := map[byte]time.Duration{'H': time.Hour, 'M': time.Minute, 'S': time.Second}
	for timePart != "" {
		n, frac, designator, tail, err := component(timePart, true)
		if err != nil {
			return 0, fmt.Errorf("%q: %v", s, err)
		}
		i := strings.IndexByte(order, designator)
		if i < 0 {
			if strings.IndexByte("HMS", designator) >= 0 {
				return 0, fmt.Errorf("%q: hours, minutes and seconds must each appear at most once, in the order H, M, S", s)
			}
			return 0, fmt.Errorf("%q: unknown designator %q after T; %s", s, designator, errHint)
		}
		if frac != 0 && designator != 'S' {
			return 0, fmt.Errorf("%q: only seconds may have a fraction", s)
		}
		order = order[i+1:] // later components must come after this one
		if err := add(n, frac, units[designator]); err != nil {
			return 0, err
		}
		timePart = tail
	}
	return total, nil
}

// component reads "<digits>[.<digits>]<designator>" from the start of s and
// returns the integer, the fraction in nanoseconds (seconds only), the
// designator and the rest of s.
func component(s string, allowFrac bool) (n, fracNanos int64, designator byte, tail string, err error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if n > 1e15 { // far beyond 180 days in any unit; stop before overflow
			return 0, 0, 0, "", errors.New("number is too large")
		}
		n = n*10 + int64(s[i]-'0')
		i++
	}
	if i == 0 {
		return 0, 0, 0, "", fmt.Errorf("expected a number at %q; %s", s, errHint)
	}
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		if !allowFrac || s[i] == ',' {
			return 0, 0, 0, "", errors.New("fractions are only allowed for seconds, written with a '.'")
		}
		i++
		start, scale := i, int64(1e8)
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if i-start >= 9 {
				return 0, 0, 0, "", errors.New("at most nine fractional digits are allowed")
			}
			fracNanos += int64(s[i]-'0') * scale
			scale /= 10
			i++
		}
		if i == start {
			return 0, 0, 0, "", errors.New("expected digits after '.'")
		}
		if i >= len(s) || s[i] != 'S' {
			return 0, 0, 0, "", errors.New("fractions are only allowed for seconds")
		}
	}
	if i >= len(s) {
		return 0, 0, 0, "", fmt.Errorf("number %q has no designator; %s", s, errHint)
	}
	return n, fracNanos, s[i], s[i+1:], nil
}

// MaxReminderDelay is the longest wait from an invite to its reminder.
const MaxReminderDelay = 30 * 24 * time.Hour

// ParseReminderDelay parses a reminder's delay: a duration ParseDuration
// accepts of at most MaxReminderDelay.
func ParseReminderDelay(s string) (time.Duration, error) {
	d, err := ParseDuration(s)
	if err == nil && d > MaxReminderDelay {
		err = problem.New(ErrReminderTooLong, fmt.Sprintf("%q is longer than the maximum of 30 days (P30D)", s))
	}
	return d, err
}
