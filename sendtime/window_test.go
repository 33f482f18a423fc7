package sendtime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/sendtime"
)

func TestMerge(t *testing.T) {
	s := func(v string) *string { return &v }
	berlin := &sendtime.SendWindow{Start: "08:00", End: "20:00", TimeZone: "Europe/Berlin"}
	for _, tc := range []struct {
		name             string
		cur              *sendtime.SendWindow
		start, end, zone *string
		want             sendtime.SendWindow
		fields           []string
	}{
		{"a new window needs every member", nil, s("09:00"), nil, nil, sendtime.SendWindow{Start: "09:00"}, []string{"end", "timeZone"}},
		{"a new window", nil, s("09:00"), s("17:00"), s("UTC"), sendtime.SendWindow{Start: "09:00", End: "17:00", TimeZone: "UTC"}, nil},
		{"members kept", berlin, nil, s("18:00"), nil, sendtime.SendWindow{Start: "08:00", End: "18:00", TimeZone: "Europe/Berlin"}, nil},
		{"a bad member", berlin, s("25:00"), nil, s("Mars/Olympus"), sendtime.SendWindow{Start: "25:00", End: "20:00", TimeZone: "Mars/Olympus"},
			[]string{"start", "timeZone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, mistakes := sendtime.Merge(tc.cur, tc.start, tc.end, tc.zone)
			assert.Equal(t, tc.want, w)
			var fields []string
			for _, m := range mistakes {
				assert.NotEmpty(t, m.Message)
				fields = append(fields, m.Field)
			}
			assert.Equal(t, tc.fields, fields)
		})
	}
}
