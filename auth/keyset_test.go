package auth

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFreshness(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	const minGap, refresh = 10 * time.Second, 5 * time.Minute
	for name, tc := range map[string]struct {
		header map[string]string
		want   time.Duration
	}{
		"no header: the period":               {nil, refresh},
		"max-age below the period":            {map[string]string{"Cache-Control": "public, max-age=60"}, time.Minute},
		"max-age above the period: capped":    {map[string]string{"Cache-Control": "max-age=86400"}, refresh},
		"max-age less its Age":                {map[string]string{"Cache-Control": "max-age=60", "Age": "45"}, 15 * time.Second},
		"Age beyond max-age: at least gap":    {map[string]string{"Cache-Control": "max-age=60", "Age": "600"}, minGap},
		"max-age=0: not before the gap":       {map[string]string{"Cache-Control": "max-age=0"}, minGap},
		"no-cache":                            {map[string]string{"Cache-Control": "no-cache"}, minGap},
		"no-store":                            {map[string]string{"Cache-Control": "private, no-store"}, minGap},
		"unreadable max-age: stale":           {map[string]string{"Cache-Control": "max-age=soon"}, minGap},
		"quoted max-age":                      {map[string]string{"Cache-Control": `max-age="120"`}, 2 * time.Minute},
		"Expires by the issuer's Date":        {map[string]string{"Expires": "Sun, 01 Mar 2026 11:02:00 GMT", "Date": "Sun, 01 Mar 2026 11:00:00 GMT"}, 2 * time.Minute},
		"Expires without Date: our clock":     {map[string]string{"Expires": "Sun, 01 Mar 2026 10:01:30 GMT"}, 90 * time.Second},
		"Expires in the past":                 {map[string]string{"Expires": "Sun, 01 Mar 2026 09:00:00 GMT"}, minGap},
		"invalid Expires":                     {map[string]string{"Expires": "0"}, minGap},
		"max-age wins over Expires":           {map[string]string{"Cache-Control": "max-age=30", "Expires": "Sun, 01 Mar 2026 10:04:00 GMT"}, 30 * time.Second},
		"other directives only: the period":   {map[string]string{"Cache-Control": "public, must-revalidate"}, refresh},
		"an s-maxage is not ours: the period": {map[string]string{"Cache-Control": "s-maxage=20"}, refresh},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			assert.Equal(t, tc.want, freshness(h, now, minGap, refresh))
		})
	}
}
