package sendtime_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/sendtime"
)

const day = 24 * time.Hour

func TestParseDuration(t *testing.T) {
	t.Parallel()
	valid := map[string]time.Duration{
		"P0D":            0,
		"PT0S":           0,
		"P0W":            0,
		"P7D":            7 * day,
		"P2W":            14 * day,
		"P25W":           175 * day,
		"PT10S":          10 * time.Second,
		"PT1M":           time.Minute, // minutes after T, not months
		"PT12H30M":       12*time.Hour + 30*time.Minute,
		"P1DT2H3M4S":     day + 2*time.Hour + 3*time.Minute + 4*time.Second,
		"P1DT4S":         day + 4*time.Second,
		"PT1.5S":         1500 * time.Millisecond,
		"PT0.000000001S": time.Nanosecond,
		"P007D":          7 * day,
		"P180D":          180 * day,
		"PT4320H":        180 * day,
		"P179DT24H":      180 * day,
		"PT15552000S":    180 * day,
	}
	for in, want := range valid {
		got, err := sendtime.ParseDuration(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}

	invalid := map[string]string{ // input → part of the message
		"":                        "must not be empty",
		"P":                       "no components",
		"PT":                      "T but no hours",
		"P1DT":                    "T but no hours",
		"-P1D":                    "signed",
		"+P1D":                    "signed",
		"p7d":                     "upper case",
		"P7d":                     "upper case",
		"7D":                      "must start with P",
		" P7D":                    "must start with P",
		"P1Y":                     "years and months",
		"P1M":                     "years and months",
		"P1W1D":                   "unexpected",
		"P1WT1H":                  "weeks cannot be combined",
		"P181D":                   "maximum of 180 days",
		"P26W":                    "maximum of 180 days",
		"P180DT1S":                "maximum of 180 days",
		"PT4320H0.1M":             "only allowed for seconds",
		"PT4320H0.1S":             "maximum of 180 days",
		"PT4320H0M0.1S":           "maximum of 180 days",
		"P99999999999999999D":     "too large",
		"P9999999999D":            "maximum of 180 days",
		"PT1S1M":                  "in the order H, M, S",
		"PT1H1H":                  "in the order H, M, S",
		"PT1D":                    "unknown designator",
		"P1H":                     "unknown designator",
		"P1.5D":                   "fractions",
		"PT1.5M":                  "fractions are only allowed for seconds",
		"PT1,5S":                  "'.'",
		"PT1.S":                   "digits after",
		"PT1.0000000001S":         "nine fractional digits",
		"PTS":                     "expected a number",
		"P7":                      "no designator",
		"PT5":                     "no designator",
		"P7D ":                    "unexpected",
		strings.Repeat("P1D", 30): "too long",
	}
	for in, want := range invalid {
		_, err := sendtime.ParseDuration(in)
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), want, in)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, seed := range []string{"P0D", "PT0S", "P7D", "P2W", "P1DT2H3M4S", "PT1.5S", "P180D", "P181D",
		"P", "PT", "-P1D", "p7d", "P1Y", "P1M", "PT1M", "P1W1D", "PT1S1M", "P99999999999999999999D", "PT1,5S"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := sendtime.ParseDuration(s)
		if err != nil {
			if d != 0 {
				t.Fatalf("ParseDuration(%q) = %v with error %v", s, d, err)
			}
			if err.Error() == "" {
				t.Fatalf("ParseDuration(%q): empty error message", s)
			}
			return
		}
		if d < 0 || d > sendtime.MaxDelay {
			t.Fatalf("ParseDuration(%q) = %v, outside 0…180 days", s, d)
		}
		if s[0] != 'P' || !strings.ContainsAny(s, "WDHMS") {
			t.Fatalf("ParseDuration(%q) accepted a string that is not a duration", s)
		}
		if strings.ContainsAny(s, "ymdhsw-+ ,") {
			t.Fatalf("ParseDuration(%q) accepted a forbidden character", s)
		}
	})
}

func TestSendWindow(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)

	w, err := sendtime.SendWindow{Start: "09:00", End: "20:30", TimeZone: "Europe/Berlin"}.Parse()
	require.NoError(t, err)
	assert.Equal(t, 9*60, w.Start)
	assert.Equal(t, 20*60+30, w.End)
	assert.Equal(t, berlin.String(), w.Location.String())

	valid := []sendtime.SendWindow{
		{Start: "22:00", End: "06:00", TimeZone: "America/New_York"}, // overnight
		{Start: "00:00", End: "23:59", TimeZone: "UTC"},
		{Start: "23:59", End: "00:00", TimeZone: "Asia/Kolkata"},
		{Start: "08:00", End: "09:00", TimeZone: "Etc/GMT+5"},
	}
	for _, w := range valid {
		assert.NoError(t, w.Validate(), "%+v", w)
	}

	invalid := []struct {
		w      sendtime.SendWindow
		fields []string
	}{
		{sendtime.SendWindow{Start: "09:00", End: "09:00", TimeZone: "UTC"}, []string{"end"}},
		{sendtime.SendWindow{Start: "24:00", End: "09:00", TimeZone: "UTC"}, []string{"start"}},
		{sendtime.SendWindow{Start: "9:00", End: "09:60", TimeZone: "UTC"}, []string{"start", "end"}},
		{sendtime.SendWindow{Start: "09:00:00", End: "1000", TimeZone: "UTC"}, []string{"start", "end"}},
		{sendtime.SendWindow{Start: "", End: "-1:00", TimeZone: "UTC"}, []string{"start", "end"}},
		{sendtime.SendWindow{Start: "09:00", End: "10:00", TimeZone: ""}, []string{"timeZone"}},
		{sendtime.SendWindow{Start: "09:00", End: "10:00", TimeZone: "Local"}, []string{"timeZone"}},
		{sendtime.SendWindow{Start: "09:00", End: "10:00", TimeZone: "Mars/Olympus_Mons"}, []string{"timeZone"}},
		{sendtime.SendWindow{Start: "09:00", End: "10:00", TimeZone: "../../etc/passwd"}, []string{"timeZone"}},
		{sendtime.SendWindow{Start: "09:00", End: "10:00", TimeZone: "/etc/localtime"}, []string{"timeZone"}},
		{sendtime.SendWindow{Start: "x", End: "y", TimeZone: "z"}, []string{"start", "end", "timeZone"}},
	}
	for _, tc := range invalid {
		err := tc.w.Validate()
		require.Error(t, err, "%+v", tc.w)
		var fields []string
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			var fe sendtime.FieldError
			require.True(t, errors.As(e, &fe))
			assert.NotEmpty(t, fe.Message)
			fields = append(fields, fe.Field)
		}
		assert.Equal(t, tc.fields, fields, "%+v", tc.w)
	}
}

// TestProblemKinds: each refusal names its kind (errors.Is), so that a
// reader can say it in its own words, and keeps its detail for the API.
func TestProblemKinds(t *testing.T) {
	for _, c := range []struct {
		err    error
		kind   error
		detail string
	}{
		{func() error { _, err := sendtime.ParseDuration(""); return err }(), sendtime.ErrDuration, "must not be empty"},
		{func() error { _, err := sendtime.ParseDuration("P1Y"); return err }(), sendtime.ErrDuration, "years and months"},
		{func() error { _, err := sendtime.ParseDuration("3D"); return err }(), sendtime.ErrDuration, "must start with P"},
		{func() error { _, err := sendtime.ParseDuration("P181D"); return err }(), sendtime.ErrDelayTooLong, "P180D"},
		{func() error { _, err := sendtime.ParseReminderDelay("P31D"); return err }(), sendtime.ErrReminderTooLong, "P30D"},
		{sendtime.SendWindow{Start: "9:00", End: "17:00", TimeZone: "UTC"}.Validate(), sendtime.ErrTimeOfDay, "start: "},
		{sendtime.SendWindow{Start: "09:00", End: "24:00", TimeZone: "UTC"}.Validate(), sendtime.ErrTimeOfDay, "end: "},
		{sendtime.SendWindow{Start: "09:00", End: "17:00", TimeZone: "Mars/Olympus"}.Validate(), sendtime.ErrTimeZone, "timeZone: "},
		{sendtime.SendWindow{Start: "09:00", End: "09:00", TimeZone: "UTC"}.Validate(), sendtime.ErrWindowNoDuration, "must differ"},
	} {
		require.Error(t, c.err)
		assert.ErrorIs(t, c.err, c.kind, c.err.Error())
		assert.Contains(t, c.err.Error(), c.detail)
	}
	_, err := sendtime.ParseDuration("P3D")
	assert.NoError(t, err)
}
