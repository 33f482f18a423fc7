package jsonstrict

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// payload is shaped like the event request of the API: nested structs,
// slices, string maps, times, merge-patch and read-only fields.
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
	Patch         Optional[string]  `json:"patch" nullable:"true"`
	Strict        Optional[int]     `json:"strict"`
	ID            ReadOnly          `json:"id"`
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

func TestDecodeAccepts(t *testing.T) {
	t.Parallel()
	var p payload
	err := Decode([]byte(` {"customer":{"email":"a@example.com"},"type":"checkout","systemVersion":"1.2",
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
	require.NoError(t, Decode([]byte(`{"customer":{"email":"e"},"date":null,"products":null,"metadata":null}`), &p))
	assert.Nil(t, p.Date)
	assert.False(t, p.Patch.Set)
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	const ok = `"customer":{"email":"e"}`
	cases := []struct {
		name, body string
		want       FieldErrors // Message is a substring
	}{
		{"empty", "", FieldErrors{{"", "the body is empty"}}},
		{"blank", " \n\t", FieldErrors{{"", "the body is empty"}}},
		{"array", `[]`, FieldErrors{{"", "must be a JSON object"}}},
		{"null", `null`, FieldErrors{{"", "must be a JSON object"}}},
		{"malformed", `{"customer":}`, FieldErrors{{"", "malformed JSON at byte"}}},
		{"truncated", `{"customer":{"email":"e"`, FieldErrors{{"", "ends in the middle"}}},
		{"trailing object", `{` + ok + `}{}`, FieldErrors{{"", "unexpected data after the JSON object"}}},
		{"trailing garbage", `{` + ok + `}x`, FieldErrors{{"", "unexpected data after the JSON object"}}},
		{"invalid utf-8", "{\"type\":\"\xff\"}", FieldErrors{{"", "not valid UTF-8"}}},
		{"snake case", `{` + ok + `,"system_version":"1"}`, FieldErrors{{"system_version", `did you mean "systemVersion"?`}}},
		{"kebab case", `{` + ok + `,"system-version":"1"}`, FieldErrors{{"system-version", `did you mean "systemVersion"?`}}},
		{"case mismatch", `{` + ok + `,"Type":"x"}`, FieldErrors{{"Type", `case-sensitive); did you mean "type"?`}}},
		{"typo", `{` + ok + `,"prodcuts":[]}`, FieldErrors{{"prodcuts", `did you mean "products"?`}}},
		{"nested unknown", `{"customer":{"email":"e","e_mail":"x"}}`, FieldErrors{{"customer.e_mail", `did you mean "email"?`}}},
		{"unknown without hint", `{` + ok + `,"zzzzzz":1}`, FieldErrors{{"zzzzzz", "is not a known field; known fields:"}}},
		{"ignored field", `{` + ok + `,"Ignored":"x"}`, FieldErrors{{"Ignored", "is not a known field"}}},
		{"duplicate", `{` + ok + `,"type":"a","type":"b"}`, FieldErrors{{"type", `duplicated key "type"`}}},
		{"duplicate nested", `{"customer":{"email":"e","email":"f"}}`, FieldErrors{{"customer.email", "duplicated key"}}},
		{"duplicate map key", `{` + ok + `,"metadata":{"k":"1","k":"2"}}`, FieldErrors{{"metadata.k", "duplicated key"}}},
		{"map value type", `{` + ok + `,"metadata":{"a b":1}}`, FieldErrors{{`metadata["a b"]`, "must be a string, not a number"}}},
		{"string as number", `{` + ok + `,"type":5}`, FieldErrors{{"type", "must be a string, not a number"}}},
		{"object as string", `{` + ok + `,"type":{"a":[1,{}]}}`, FieldErrors{{"type", "must be a string, not an object"}}},
		{"int fraction", `{` + ok + `,"count":1.5}`, FieldErrors{{"count", "must be an integer"}}},
		{"int overflow", `{` + ok + `,"count":4294967296}`, FieldErrors{{"count", "out of range"}}},
		{"float overflow", `{` + ok + `,"ratio":1e999}`, FieldErrors{{"ratio", "out of range"}}},
		{"bool as string", `{` + ok + `,"extra":"true"}`, FieldErrors{{"extra", "must be a boolean, not a string"}}},
		{"indexed path", `{` + ok + `,"products":[{},{},{"url":7}]}`, FieldErrors{{"products[2].url", "must be a string"}}},
		{"slice of strings", `{` + ok + `,"products":[{"Tags":["a",1]}]}`, FieldErrors{{"products[0].Tags[1]", "must be a string"}}},
		{"array expected", `{` + ok + `,"products":{}}`, FieldErrors{{"products", "must be an array, not an object"}}},
		{"time", `{` + ok + `,"date":"yesterday"}`, FieldErrors{{"date", "RFC 3339"}}},
		{"null string", `{` + ok + `,"type":null}`, FieldErrors{{"type", "must be a string, not null"}}},
		{"null optional", `{` + ok + `,"strict":null}`, FieldErrors{{"strict", "must not be null"}}},
		{"optional type", `{` + ok + `,"strict":"1"}`, FieldErrors{{"strict", "must be an integer, not a string"}}},
		{"nul byte", `{` + ok + `,"type":"a\u0000b"}`, FieldErrors{{"type", "NUL"}}},
		{"read-only", `{` + ok + `,"id":"x"}`, FieldErrors{{"id", "is read-only"}}},
		{"required missing", `{}`, FieldErrors{{"customer", "is required"}}},
		{"required null", `{"customer":null}`, FieldErrors{{"customer", "is required"}}},
		{"nested required", `{"customer":{}}`, FieldErrors{{"customer.email", "is required"}}},
		{"all errors", `{"customer":{"email":1},"Type":"x","count":"1","products":[{"url":false}]}`, FieldErrors{
			{"customer.email", "must be a string"}, {"Type", "did you mean"}, {"count", "must be an integer"}, {"products[0].url", "must be a string"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var p payload
			err := Decode([]byte(tc.body), &p)
			if len(tc.want) == 1 && tc.want[0].Field == "" { // about the whole text
				var se *SyntaxError
				require.True(t, errors.As(err, &se), "%v", err)
				assert.Contains(t, se.Message("the body"), tc.want[0].Message)
				return
			}
			var fe FieldErrors
			require.True(t, errors.As(err, &fe), "%v", err)
			require.Len(t, fe, len(tc.want), "%+v", fe)
			for i, w := range tc.want {
				assert.Equal(t, w.Field, fe[i].Field)
				assert.Contains(t, fe[i].Message, w.Message)
			}
		})
	}
}

func TestDecodeCapsErrors(t *testing.T) {
	t.Parallel()
	body := `{"customer":{"email":"e"}` + strings.Repeat(`,"x":1`, 500) + `}`
	var p payload
	var fe FieldErrors
	require.True(t, errors.As(Decode([]byte(body), &p), &fe))
	assert.Len(t, fe, MaxFieldErrors)
	assert.Contains(t, fe[0].Message, "is not a known field")
	assert.Contains(t, fe[1].Message, `duplicated key "x"`)
	assert.True(t, strings.HasPrefix(fe.Error(), "x: is not a known field"), fe.Error())
	assert.True(t, strings.HasSuffix(fe.Error(), "(and 49 more)"), fe.Error())
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
		assert.Equal(t, want, Suggest(key, names), key)
	}
}

// Scan checks the whole text as Decode does and hands back the elements
// of arrays of json.RawMessage unread, each one decodable on its own.
func TestScan(t *testing.T) {
	t.Parallel()
	type batch struct {
		Events []json.RawMessage `json:"events" required:"true"`
		Note   string            `json:"note"`
	}
	raws, err := Scan[batch]([]byte(`{"note":"n","events":[{"customer":{"email":"a"}}, {"x" : [1,"]"]} ,"s",null]}`))
	require.NoError(t, err)
	require.Len(t, raws, 4)
	assert.Equal(t, `{"customer":{"email":"a"}}`, string(raws[0]))
	assert.Equal(t, `{"x" : [1,"]"]}`, string(raws[1]))
	assert.Equal(t, `"s"`, string(raws[2]))
	assert.Equal(t, `null`, string(raws[3]))

	var p payload
	require.NoError(t, DecodeValid(raws[0], &p))
	assert.Equal(t, "a", p.Customer.Email)
	var se *SyntaxError
	require.ErrorAs(t, DecodeValid(raws[2], &p), &se)
	assert.Equal(t, "the event must be a JSON object", se.Message("the event"))
	assert.Equal(t, int64(-1), se.Offset)

	_, err = Scan[batch]([]byte(`{"events":[{}],"notes":1}`))
	var fe FieldErrors
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, FieldErrors{{Field: "notes", Message: `is not a known field; did you mean "note"?`}}, fe)

	_, err = Scan[batch]([]byte(`{"events":[{}]`))
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "malformed JSON: the batch ends in the middle of a value", se.Message("the batch"))
}

// A syntax error says where it was found, in its message and its Offset.
func TestSyntaxErrorOffset(t *testing.T) {
	t.Parallel()
	var p payload
	var se *SyntaxError
	require.ErrorAs(t, Decode([]byte(`{"type": x}`), &p), &se)
	assert.Positive(t, se.Offset)
	msg := fmt.Sprintf("malformed JSON at byte %d: invalid character 'x' looking for beginning of value", se.Offset)
	assert.Equal(t, msg, se.Message("the body"))
	assert.Equal(t, "jsonstrict: "+msg, se.Error())

	require.ErrorAs(t, Decode([]byte(`{}  {}`), &p), &se)
	assert.Equal(t, int64(2), se.Offset)
	assert.Equal(t, "unexpected data after the JSON object at byte 2", se.Message("the body"))
}
