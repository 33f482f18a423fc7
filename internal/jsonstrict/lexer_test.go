package jsonstrict

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The lexer reads every valid JSON text in valid UTF-8 (what
// Decode hands it) as json.Decoder.Token does.
func FuzzLexerMatchesDecoder(f *testing.F) {
	for _, seed := range []string{
		`{"a":[1,-2.5e+3,true,false,null,"x"],"b":{"c":{}},"d":[]}`,
		` [ "\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t" , "\ud800" ] `,
		`"just a string"`, `0`, `-0.0E-7`, `{"":""}`, "\t{\n}\r",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !utf8.Valid(data) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		lx := &lexer{data: data}
		for {
			want, wantErr := dec.Token()
			got, err := lx.Token()
			if wantErr == io.EOF {
				require.Equal(t, io.EOF, err, "after the last token")
				return
			}
			require.NoError(t, wantErr)
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
	})
}

// skipValue and skipRest pass over exactly one value, strings with
// brackets and escaped quotes included.
func TestLexerSkips(t *testing.T) {
	t.Parallel()
	data := []byte(`{"a": {"b": ["]", "\"}", {"c": [1, 2]}], "d": 3}, "e": -1.5e3, "f": "x", "g": [true], "h": null}`)
	lx := &lexer{data: data}
	tok, _ := lx.Token()
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for lx.More() {
		key, err := lx.Token()
		require.NoError(t, err)
		keys = append(keys, key.(string))
		lx.skipValue()
	}
	tok, _ = lx.Token()
	assert.Equal(t, json.Delim('}'), tok)
	assert.Equal(t, []string{"a", "e", "f", "g", "h"}, keys)
	_, err := lx.Token()
	assert.Equal(t, io.EOF, err)
}
