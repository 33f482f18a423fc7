package apiserver

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// payload is shaped like the event request that a later issue decodes
// with decodeStrict: nested structs, slices, string maps, times.
type payload struct {
	Customer struct {
		Email     string `json:"email" required:"true"`
		FirstName string `json:"firstName"`
	} `json:"customer" required:"true"`
	Type          string            `json:"type"`
	SystemVersion string            `json:"systemVersion"`
	Products      []product         `json:"products"`
	Metadata      map[string]string `json:"metadata"`
	Count         int32             `json:"count"`
	Ratio         float64           `json:"ratio"`
	Date          *time.Time        `json:"date"`
	Patch         optional[string]  `json:"patch" nullable:"true"`
	Strict        optional[int]     `json:"strict"`
	ID            readOnly          `json:"id"`
	Ignored       string            `json:"-"`
	embedded
}

type embedded struct {
	Extra bool `json:"extra"`
}

type product struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	Tags []string
}

func TestDecodeStrictAccepts(t *testing.T) {
	t.Parallel()
	var p payload
	err := decodeStrict([]byte(` {"customer":{"email":"a@example.com"},"type":"checkout","systemVersion":"1.2",
		"products":[{"name":"n","url":"https://x","Tags":["a"]}],"metadata":{"k":"v","a b":"c"},
		"count":-5,"ratio":1.5e3,"date":"2026-11-22T06:00:00.000Z","patch":null,"extra":true} `+"\n"), &p)
	require.NoError(t, err)
	assert.Equal(t, "a@example.com", p.Customer.Email)
	assert.Equal(t, "https://x", p.Products[0].URL)
	assert.Equal(t, map[string]string{"k": "v", "a b": "c"}, p.Metadata)
	assert.Equal(t, int32(-5), p.Count)
	assert.True(t, p.Patch.Set && p.Patch.Null)
	assert.True(t, p.Extra)
	assert.Equal(t, 2026, p.Date.Year())

	// Null is "absent" for pointers, slices and maps.
	p = payload{}
	require.NoError(t, decodeStrict([]byte(`{"customer":{"email":"e"},"date":null,"products":null,"metadata":null}`), &p))
	assert.Nil(t, p.Date)
	assert.False(t, p.Patch.Set)
}

func TestDecodeStrictRejects(t *testing.T) {
	t.Parallel()
	const ok = `"customer":{"email":"e"}`
	cases := []struct {
		name, body string
		want       []fieldError // Message is a substring
	}{
		{"empty", "", []fieldError{{"", "the body is empty"}}},
		{"blank", " \n\t", []fieldError{{"", "the body is empty"}}},
		{"array", `[]`, []fieldError{{"", "must be a JSON object"}}},
		{"null", `null`, []fieldError{{"", "must be a JSON object"}}},
		{"malformed", `{"customer":}`, []fieldError{{"", "malformed JSON at byte"}}},
		{"truncated", `{"customer":{"email":"e"`, []fieldError{{"", "ends in the middle"}}},
		{"trailing object", `{` + ok + `}{}`, []fieldError{{"", "unexpected data after the JSON object"}}},
		{"trailing garbage", `{` + ok + `}x`, []fieldError{{"", "unexpected data after the JSON object"}}},
		{"invalid utf-8", "{\"type\":\"\xff\"}", []fieldError{{"", "not valid UTF-8"}}},
		{"snake case", `{` + ok + `,"system_version":"1"}`, []fieldError{{"system_version", `did you mean "systemVersion"?`}}},
		{"kebab case", `{` + ok + `,"system-version":"1"}`, []fieldError{{"system-version", `did you mean "systemVersion"?`}}},
		{"case mismatch", `{` + ok + `,"Type":"x"}`, []fieldError{{"Type", `case-sensitive); did you mean "type"?`}}},
		{"typo", `{` + ok + `,"prodcuts":[]}`, []fieldError{{"prodcuts", `did you mean "products"?`}}},
		{"nested unknown", `{"customer":{"email":"e","e_mail":"x"}}`, []fieldError{{"customer.e_mail", `did you mean "email"?`}}},
		{"unknown without hint", `{` + ok + `,"zzzzzz":1}`, []fieldError{{"zzzzzz", "is not a known field; known fields:"}}},
		{"ignored field", `{` + ok + `,"Ignored":"x"}`, []fieldError{{"Ignored", "is not a known field"}}},
		{"duplicate", `{` + ok + `,"type":"a","type":"b"}`, []fieldError{{"type", `duplicated key "type"`}}},
		{"duplicate nested", `{"customer":{"email":"e","email":"f"}}`, []fieldError{{"customer.email", "duplicated key"}}},
		{"duplicate map key", `{` + ok + `,"metadata":{"k":"1","k":"2"}}`, []fieldError{{"metadata.k", "duplicated key"}}},
		{"map value type", `{` + ok + `,"metadata":{"a b":1}}`, []fieldError{{`metadata["a b"]`, "must be a string, not a number"}}},
		{"string as number", `{` + ok + `,"type":5}`, []fieldError{{"type", "must be a string, not a number"}}},
		{"object as string", `{` + ok + `,"type":{"a":[1,{}]}}`, []fieldError{{"type", "must be a string, not an object"}}},
		{"int fraction", `{` + ok + `,"count":1.5}`, []fieldError{{"count", "must be an integer"}}},
		{"int overflow", `{` + ok + `,"count":4294967296}`, []fieldError{{"count", "out of range"}}},
		{"float overflow", `{` + ok + `,"ratio":1e999}`, []fieldError{{"ratio", "out of range"}}},
		{"bool as string", `{` + ok + `,"extra":"true"}`, []fieldError{{"extra", "must be a boolean, not a string"}}},
		{"indexed path", `{` + ok + `,"products":[{},{},{"url":7}]}`, []fieldError{{"products[2].url", "must be a string"}}},
		{"slice of strings", `{` + ok + `,"products":[{"Tags":["a",1]}]}`, []fieldError{{"products[0].Tags[1]", "must be a string"}}},
		{"array expected", `{` + ok + `,"products":{}}`, []fieldError{{"products", "must be an array, not an object"}}},
		{"time", `{` + ok + `,"date":"yesterday"}`, []fieldError{{"date", "RFC 3339"}}},
		{"null string", `{` + ok + `,"type":null}`, []fieldError{{"type", "must be a string, not null"}}},
		{"null optional", `{` + ok + `,"strict":null}`, []fieldError{{"strict", "must not be null"}}},
		{"optional type", `{` + ok + `,"strict":"1"}`, []fieldError{{"strict", "must be an integer, not a string"}}},
		{"nul byte", `{` + ok + `,"type":"a\u0000b"}`, []fieldError{{"type", "NUL"}}},
		{"read-only", `{` + ok + `,"id":"x"}`, []fieldError{{"id", "is read-only"}}},
		{"required missing", `{}`, []fieldError{{"customer", "is required"}}},
		{"required null", `{"customer":null}`, []fieldError{{"customer", "is required"}}},
		{"nested required", `{"customer":{}}`, []fieldError{{"customer.email", "is required"}}},
		{"all errors", `{"customer":{"email":1},"Type":"x","count":"1","products":[{"url":false}]}`, []fieldError{
			{"customer.email", "must be a string"}, {"Type", "did you mean"}, {"count", "must be an integer"}, {"products[0].url", "must be a string"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var p payload
			err := decodeStrict([]byte(tc.body), &p)
			var ae *apiError
			require.True(t, errors.As(err, &ae), "%v", err)
			assert.Equal(t, http.StatusBadRequest, ae.status)
			if len(tc.want) == 1 && tc.want[0].Field == "" { // about the whole body
				assert.Contains(t, ae.detail, tc.want[0].Message)
				assert.Empty(t, ae.fields)
				return
			}
			require.Len(t, ae.fields, len(tc.want), "%+v", ae.fields)
			for i, w := range tc.want {
				assert.Equal(t, w.Field, ae.fields[i].Field)
				assert.Contains(t, ae.fields[i].Message, w.Message)
			}
			assert.NotEmpty(t, ae.detail)
		})
	}
}

func TestDecodeStrictCapsErrors(t *testing.T) {
	t.Parallel()
	body := `{"customer":{"email":"e"}` + strings.Repeat(`,"x":1`, 500) + `}`
	var p payload
	var ae *apiError
	require.True(t, errors.As(decodeStrict([]byte(body), &p), &ae))
	assert.Len(t, ae.fields, maxFieldErrors)
	assert.Contains(t, ae.detail, "(and 49 more errors)")
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	names := []string{"active", "delay", "delayFrom", "medium", "minDaysBetweenInvites", "sendWindow"}
	for key, want := range map[string]string{
		"Delay":                    "delay",
		"delay_from":               "delayFrom",
		"DELAY-FROM":               "delayFrom",
		"send_window":              "sendWindow",
		"min_days_between_invites": "minDaysBetweenInvites",
		"medum":                    "medium",
		"actvie":                   "active",
		"sendWindw":                "sendWindow",
		"dealy":                    "delay",
		"x":                        "",
		"timeZone":                 "",
		"windows":                  "",
	} {
		assert.Equal(t, want, suggest(key, names), key)
	}
}
