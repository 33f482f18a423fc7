package apiserver

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/jsonstrict"
)

// decodeError answers what jsonstrict refuses with a 400: a problem about
// the text as a whole named as the caller knows it, or the field errors
// listed with the first one in the detail.
func TestDecodeErrorAnswers400(t *testing.T) {
	t.Parallel()
	type in struct {
		Name string `json:"name" required:"true"`
	}
	answer := func(t *testing.T, err error) *apiError {
		var ae *apiError
		require.True(t, errors.As(err, &ae), "%v", err)
		assert.Equal(t, http.StatusBadRequest, ae.status)
		return ae
	}

	ae := answer(t, decodeStrict([]byte(" "), &in{}))
	assert.Equal(t, "the body is empty; send a JSON object", ae.detail)
	assert.Empty(t, ae.fields)

	ae = answer(t, decodeError(jsonstrict.DecodeValid([]byte(`[1]`), &in{}), "the event"))
	assert.Equal(t, "the event must be a JSON object", ae.detail)

	ae = answer(t, decodeStrict([]byte(`{"nmae":"x","name":1}`), &in{}))
	assert.Equal(t, []fieldError{{"nmae", `is not a known field; did you mean "name"?`}, {"name", "must be a string, not a number"}}, ae.fields)
	assert.Equal(t, `nmae: is not a known field; did you mean "name"? (and 1 more error)`, ae.detail)

	body := `{"name":"n"` + strings.Repeat(`,"x":1`, 500) + `}`
	ae = answer(t, decodeStrict([]byte(body), &in{}))
	assert.Len(t, ae.fields, maxFieldErrors)
	assert.True(t, strings.HasSuffix(ae.detail, "(and 49 more errors)"), ae.detail)

	other := errors.New("not the decoder's")
	assert.Same(t, other, decodeError(other, "the body"))
}
