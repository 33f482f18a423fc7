package stats

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// GroupBy is what the counts of a period are grouped by.
type GroupBy string

// Groupings.
const (
	GroupDay       GroupBy = "day"
	GroupEventType GroupBy = "eventType"
	GroupChannel   GroupBy = "channel"
	GroupLocale    GroupBy = "locale"
	GroupMedium    GroupBy = "medium"
)

var groupings = []GroupBy{GroupDay, GroupEventType, GroupChannel, GroupLocale, GroupMedium}

// Groupings lists every grouping, in their documented order.
func Groupings() []GroupBy { return slices.Clone(groupings) }

// Valid reports whether g is a grouping.
func (g GroupBy) Valid() bool { return slices.Contains(groupings, g) }

// MaxDays is the longest period, in days, from and to included.
const MaxDays = 400

// earliest is the first day a period may start on: before it some time
// zones' offsets were not whole quarter hours.
var earliest = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Period is the days from From to To, both included, in a time zone: the
// events accepted from From's midnight until the midnight after To.
type Period struct {
	From, To time.Time // the first and the last day (midnight, in Location)
	Location *time.Location
}

// Start and End are the instants the period covers: [Start, End).
func (p Period) Start() time.Time { return p.From }

// End is the midnight after the last day.
func (p Period) End() time.Time { return p.To.AddDate(0, 0, 1) }

// TimeZone is the name of the period's time zone.
func (p Period) TimeZone() string { return p.Location.String() }

// Days lists the period's days as YYYY-MM-DD.
func (p Period) Days() []string {
	var out []string
	for d := p.From; !d.After(p.To); d = d.AddDate(0, 0, 1) {
		out = append(out, d.Format(time.DateOnly))
	}
	return out
}

// ParamError is a query parameter that is missing or wrong, with what
// it must be.
type ParamError struct {
	Param   string
	Message string
}

func (e ParamError) Error() string { return e.Param + ": " + e.Message }

// maxTimeZone is the longest time zone name taken (the IANA database's
// longest is 32).
const maxTimeZone = 64

// ParsePeriod reads a period from its parameters: from and to as
// YYYY-MM-DD (both required, from ≤ to, at most MaxDays days), and
// timeZone, an IANA time zone name ("" is UTC). Every problem is
// returned, one per parameter.
func ParsePeriod(from, to, timeZone string) (Period, []ParamError) {
	var errs []ParamError
	loc := time.UTC
	if timeZone != "" {
		var err error
		loc, err = loadLocation(timeZone)
		if err != nil {
			errs = append(errs, ParamError{"timeZone", "must be an IANA time zone name such as Europe/Berlin"})
			loc = nil
		}
	}
	day := func(name, v string) (time.Time, bool) {
		if v == "" {
			errs = append(errs, ParamError{name, "is required (a date, YYYY-MM-DD)"})
			return time.Time{}, false
		}
		t, err := time.Parse(time.DateOnly, v)
		if err != nil || t.Format(time.DateOnly) != v {
			errs = append(errs, ParamError{name, "must be a date, YYYY-MM-DD"})
			return time.Time{}, false
		}
		if t.Before(earliest) || t.Year() > 9000 {
			errs = append(errs, ParamError{name, "must be a date from 2000-01-01 on"})
			return time.Time{}, false
		}
		return t, true
	}
	f, okFrom := day("from", from)
	t, okTo := day("to", to)
	if okFrom && okTo {
		switch days := int(t.Sub(f).Hours()/24) + 1; {
		case days < 1:
			errs = append(errs, ParamError{"to", "must not be before from"})
		case days > MaxDays:
			errs = append(errs, ParamError{"to", fmt.Sprintf("must be at most %d days after from, both included", MaxDays-1)})
		}
	}
	if len(errs) > 0 || loc == nil {
		return Period{}, errs
	}
	p := Period{From: midnight(f, loc), To: midnight(t, loc), Location: loc}
	for _, at := range []time.Time{p.Start(), p.End()} {
		if !at.UTC().Truncate(Slot).Equal(at) {
			return Period{}, []ParamError{{"timeZone", "has an offset from UTC that is not whole quarter hours on these dates"}}
		}
	}
	return p, nil
}

// midnight is the start of the calendar day d in loc (the first instant
// of that day where a change of offset skips midnight).
func midnight(d time.Time, loc *time.Location) time.Time {
	t := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
	if t.Day() != d.Day() { // midnight did not exist: the day began later
		t = time.Date(d.Year(), d.Month(), d.Day(), 1, 0, 0, 0, loc)
	}
	return t
}

// loadLocation is time.LoadLocation for IANA names only: no "Local", no
// POSIX rules, no paths.
func loadLocation(name string) (*time.Location, error) {
	if len(name) > maxTimeZone || name == "Local" || strings.HasPrefix(name, "/") || strings.Contains(name, "..") ||
		strings.ContainsFunc(name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/_+-", r))
		}) {
		return nil, fmt.Errorf("time zone %q: not an IANA name", name)
	}
	return time.LoadLocation(name)
}
