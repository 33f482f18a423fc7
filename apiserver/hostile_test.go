package apiserver_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestHostileInput sends a catalogue of hostile requests to every
// endpoint: each must get a clear 4xx (or a success where the input is
// merely odd) — never a 500, never a hang.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	et := e.create(t, "/event-types", map[string]any{"name": "checkout"})
	ref := e.acceptEvent(t, e.minimalEvent("checkout"))
	list, _ := items(t, e.get(t, "/invite-settings"))
	ist := list[0]["id"].(string)

	deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	deepArray := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	manyKeys := func() string {
		var b strings.Builder
		b.WriteString(`{"metadata":{`)
		for i := range 10000 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":"v"`, i)
		}
		b.WriteString(`}}`)
		return b.String()
	}()
	bodies := map[string]string{
		"huge number":        `{"name":1e999999,"active":123456789012345678901234567890,"minDaysBetweenInvites":1e400}`,
		"negative zero":      `{"minDaysBetweenInvites":-0.0}`,
		"deep nesting":       deep,
		"deep array":         deepArray,
		"invalid UTF-8":      "{\"name\":\"\xff\xfe\xfd\"}",
		"NUL byte":           `{"name":"a\u0000b","type":"x\u0000"}`,
		"raw NUL":            "{\"name\":\"a\x00b\"}",
		"10000 metadata":     manyKeys,
		"not an object":      `[1,2,3]`,
		"string":             `"hello"`,
		"null":               `null`,
		"empty":              ``,
		"truncated":          `{"name":"`,
		"duplicate keys":     `{"name":"a","name":"b"}`,
		"proto pollution":    `{"__proto__":{"admin":true},"constructor":{}}`,
		"very long key":      `{"` + strings.Repeat("k", 100000) + `":1}`,
		"very long string":   `{"name":"` + strings.Repeat("x", 60000) + `"}`,
		"lone surrogate":     `{"name":"\ud800"}`,
		"sql in body":        `{"name":"'; DROP TABLE events; --","delay":"P1D'; --"}`,
		"html in body":       `{"name":"<script>alert(1)</script>"}`,
		"send window junk":   `{"sendWindow":{"start":"25:99","end":"-1","timeZone":"../../etc/passwd"}}`,
		"send window object": `{"sendWindow":{"start":{"$gt":""}}}`,
	}
	type target struct{ method, path string }
	targets := []target{
		{http.MethodPost, "/event-types"},
		{http.MethodPatch, "/event-types/" + et["id"].(string)},
		{http.MethodPost, "/channels"},
		{http.MethodPatch, "/invite-settings/" + ist},
		{http.MethodPost, "/events"},
		{http.MethodPost, "/events/" + ref + "/cancel"},
		{http.MethodPost, "/events/" + ref + "/retry"},
	}
	client := &http.Client{Timeout: 10 * time.Second} // a hang fails the request
	send := func(t *testing.T, method, path, body string) {
		req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
		if !assert.NoError(t, err) {
			return
		}
		req.Header.Set("Authorization", "Bearer "+e.token)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if !assert.NoError(t, err, "%s %s", method, path) {
			return
		}
		res.Body.Close()
		assert.Less(t, res.StatusCode, 500, "%s %s", method, path)
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			for _, tg := range targets {
				send(t, tg.method, tg.path, body)
			}
		})
	}

	hostileValues := []string{
		"' OR '1'='1", "1; DROP TABLE events", "%00", "\x00", "../../etc/passwd", "..%2f..%2f",
		strings.Repeat("9", 400), "-1", "1e99", "true; --", "<script>", "\xff\xfe", "{}", "[]", "null",
		strings.Repeat("a", 5000),
	}
	filters := map[string][]string{
		"/event-types":     {"name", "active", "limit", "cursor"},
		"/channels":        {"limit", "cursor"},
		"/invite-settings": {"channelId", "eventTypeId", "limit", "cursor"},
		"/events": {"type", "channelId", "status", "customerEmail", "transactionReference", "receivedFrom",
			"receivedTo", "limit", "cursor"},
	}
	t.Run("filters", func(t *testing.T) {
		for path, params := range filters {
			for _, p := range params {
				for _, v := range hostileValues {
					send(t, http.MethodGet, path+"?"+p+"="+url.QueryEscape(v), "")
				}
			}
			send(t, http.MethodGet, path+"?limit=1&limit=2&%zz=1", "")
		}
	})
	t.Run("ids in paths", func(t *testing.T) {
		for _, prefix := range []string{"/event-types/", "/channels/", "/invite-settings/", "/events/"} {
			for _, id := range []string{"..%2F..%2Fetc%2Fpasswd", "%00", "evt-' OR 1=1 --", strings.Repeat("x", 10000),
				"ety-00000000-0000-0000-0000-000000000000", "ETY-" + strings.ToUpper(et["id"].(string)[4:]), "%ff%fe"} {
				send(t, http.MethodGet, prefix+id, "")
				send(t, http.MethodGet, prefix+id+"/cancel", "")
			}
		}
	})
	t.Run("headers", func(t *testing.T) {
		for _, h := range [][2]string{
			{"Content-Type", "application/json; charset=latin1"},
			{"Content-Type", strings.Repeat("a", 10000)},
			{"Idempotency-Key", strings.Repeat("k", 10000)},
			{"Idempotency-Key", "é"},
			{"X-Request-Id", "../../../" + strings.Repeat("x", 5000)},
			{"Authorization", "Bearer " + strings.Repeat("a.", 20000)},
			{"Authorization", "Basic " + e.token},
		} {
			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/events", strings.NewReader(`{}`))
			req.Header.Set("Authorization", "Bearer "+e.token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(h[0], h[1])
			res, err := client.Do(req)
			if assert.NoError(t, err, h[0]) {
				res.Body.Close()
				assert.Less(t, res.StatusCode, 500, h[0])
			}
		}
	})
	assert.NotContains(t, e.logs.String(), `"level":"ERROR"`, "no request ended in an internal error")
}
