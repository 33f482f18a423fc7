package sendtime

import (
	"errors"
	"fmt"
	"time"
	_ "time/tzdata" // IANA names must resolve in a scratch container too
)

// SendWindow is the daily period in which invites may be sent, in a time
// zone. End is exclusive; an End before Start is an overnight window
// ("22:00"–"06:00"). Start equal to End is invalid: it would be either
// empty or the whole day, and the whole day is expressed by no window.
type SendWindow struct {
	Start    string `json:"start"`    // "HH:MM", inclusive
	End      string `json:"end"`      // "HH:MM", exclusive
	TimeZone string `json:"timeZone"` // IANA name, e.g. "Europe/Berlin"
}

// Window is a validated SendWindow in the form the send-time calculation
// works with.
type Window struct {
	Start, End int // minutes after local midnight, 0–1439
	Location   *time.Location
}

// FieldError names the invalid field of a SendWindow by its JSON name
// ("start", "end" or "timeZone"). Message is written for API clients;
// Kind is ErrTimeOfDay, ErrTimeZone or ErrWindowNoDuration.
type FieldError struct {
	Field, Message string
	Kind           error
}

func (e FieldError) Error() string { return e.Field + ": " + e.Message }
func (e FieldError) Unwrap() error { return e.Kind }

// Validate reports every invalid field as a FieldError, joined with
// errors.Join; nil means Parse succeeds.
func (w SendWindow) Validate() error {
	_, err := w.Parse()
	return err
}

// Parse validates the window and resolves its clock times and time zone.
// The error joins one FieldError per invalid field.
func (w SendWindow) Parse() (Window, error) {
	var errs []error
	start, err := parseClock(w.Start)
	if err != nil {
		errs = append(errs, FieldError{"start", err.Error(), ErrTimeOfDay})
	}
	end, err := parseClock(w.End)
	if err != nil {
		errs = append(errs, FieldError{"end", err.Error(), ErrTimeOfDay})
	}
	loc, err := LoadTimeZone(w.TimeZone)
	if err != nil {
		errs = append(errs, FieldError{"timeZone", err.Error(), ErrTimeZone})
	}
	if len(errs) == 0 && start == end {
		errs = append(errs, FieldError{"end", "must differ from start (a window of no time or of the whole day is not a window; " +
			"remove the window to allow any time)", ErrWindowNoDuration})
	}
	if len(errs) > 0 {
		return Window{}, errors.Join(errs...)
	}
	return Window{Start: start, End: end, Location: loc}, nil
}

// LoadTimeZone loads an IANA time zone by name. Unlike time.LoadLocation it
// rejects "" and "Local", whose meaning depends on the machine.
func LoadTimeZone(name string) (*time.Location, error) {
	switch name {
	case "":
		return nil, errors.New(`must be an IANA time zone name such as "Europe/Berlin"`)
	case "Local":
		return nil, errors.New(`"Local" depends on the server; use an IANA time zone name such as "Europe/Berlin"`)
	}
	if len(name) > 64 {
		return nil, errors.New("is too long for an IANA time zone name")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%q is not a known IANA time zone name (e.g. \"Europe/Berlin\", \"America/New_York\", \"UTC\")", name)
	}
	return loc, nil
}

// parseClock parses "HH:MM" (00:00–23:59) into minutes after midnight.
func parseClock(s string) (int, error) {
	digit := func(i int) int { return int(s[i] - '0') }
	if len(s) != 5 || s[2] != ':' || !isDigits(s[:2]) || !isDigits(s[3:]) {
		return 0, fmt.Errorf("%q must be a time of day written HH:MM, e.g. \"09:00\"", s)
	}
	h, m := digit(0)*10+digit(1), digit(3)*10+digit(4)
	if h > 23 || m > 59 {
		return 0, fmt.Errorf("%q is not a time of day between 00:00 and 23:59", s)
	}
	return h*60 + m, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Merge is the window that a change of some of its members (nil: kept)
// makes of cur (nil: no window yet, whose three members are then all
// required). Its mistakes are named after their member ("start", "end",
// "timeZone"), or "" for the window as a whole; none when the merged
// window is valid.
func Merge(cur *SendWindow, start, end, timeZone *string) (SendWindow, []FieldError) {
	var w SendWindow
	if cur != nil {
		w = *cur
	}
	var mistakes []FieldError
	for _, m := range []struct {
		name   string
		v, dst *string
	}{{"start", start, &w.Start}, {"end", end, &w.End}, {"timeZone", timeZone, &w.TimeZone}} {
		switch {
		case m.v != nil:
			*m.dst = *m.v
		case cur == nil:
			mistakes = append(mistakes, FieldError{Field: m.name, Message: "is required for a new send window"})
		}
	}
	if len(mistakes) > 0 { // a member missing: its values are not checked
		return w, mistakes
	}
	if err := w.Validate(); err != nil {
		for _, e := range unwrapAll(err) {
			var fe FieldError
			if !errors.As(e, &fe) {
				fe = FieldError{Message: e.Error()}
			}
			mistakes = append(mistakes, fe)
		}
	}
	return w, mistakes
}

func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
