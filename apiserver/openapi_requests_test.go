package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/pages"
)

// documentRefuses validates a request against openapi.yaml and returns
// the document's objection; nil when it admits the request.
func documentRefuses(t *testing.T, method, target, contentType string, body []byte) error {
	t.Helper()
	v := openAPIValidator(t)
	u, err := url.ParseRequestURI(target)
	require.NoError(t, err)
	route, params, offered := v.route(false, method, u.Path)
	require.True(t, offered, "openapi.yaml documents %s %s", method, u.Path)
	req, err := http.NewRequest(method, "http://api.touchpoint.test"+target, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: req,
		PathParams: params, Route: route, Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}})
}

// TestOpenAPIRequestSchemasSayWhatTheServerChecks: a request the server
// refuses for a field is one the document refuses too, so that a client
// generated from it, or a validating proxy, learns the rule before the
// server says it. (The other way round — what the server takes, the
// document admits — every test's exchanges check; see validated.)
func TestOpenAPIRequestSchemasSayWhatTheServerChecks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	without := func(m map[string]any, field string) map[string]any {
		out := maps.Clone(m)
		delete(out, field)
		return out
	}
	for _, tc := range []struct {
		name, path string
		body       map[string]any
		field      string
	}{
		{"an email template without subject", "/templates/invite/en", without(shopInvite, "subject"), "subject"},
		{"an email template without heading", "/templates/invite/en", without(shopInvite, "heading"), "heading"},
		{"an email template without body", "/templates/reminder/de", without(shopInvite, "body"), "body"},
		{"an email template without buttonLabel", "/templates/invite/en", without(shopInvite, "buttonLabel"), "buttonLabel"},
		{"an email template with an empty subject", "/templates/invite/en", map[string]any{"subject": "", "heading": "Hi",
			"body": "Text", "buttonLabel": "Go"}, "subject"},
		{"an SMS template without text", "/templates/sms_invite/en", map[string]any{}, "text"},
		{"an SMS template with an empty text", "/templates/sms_reminder/en", map[string]any{"text": ""}, "text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireProblem(t, e.do(t, http.MethodPut, tc.path, e.token, tc.body), http.StatusBadRequest, tc.field)
			raw, err := json.Marshal(tc.body)
			require.NoError(t, err)
			err = documentRefuses(t, http.MethodPut, tc.path, "application/json", raw)
			require.Error(t, err, "openapi.yaml admits what the server refuses")
			assert.Contains(t, err.Error(), tc.field)
		})
	}
	// And what the server takes, the document admits.
	for path, body := range map[string]map[string]any{"/templates/invite/en": shopInvite, "/templates/sms_invite/en": {"text": "Rate {{shopName}}: {{link}}"}} {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		assert.NoError(t, documentRefuses(t, http.MethodPut, path, "application/json", raw), path)
	}

	// The feedback form: every field the page reads is documented with the
	// bounds its parser holds it to.
	form := func(kv ...string) url.Values {
		v := url.Values{"event": {"evt-c8a2e4f6-0b1d-4e3f-9a5c-7d8e9f0a1b2c"}, "sig": {"s"}}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	long := strings.Repeat("x", pages.MaxComment+1)
	last := pages.MaxProducts - 1
	for _, tc := range []struct {
		name  string
		form  url.Values
		field string
	}{
		{"a shop rating of 6", form("rating", "6"), pages.FieldRating},
		{"a long comment", form("rating", "4", "comment", long), pages.FieldComment},
		{"a product rating of 0", form("product.0.rating", "0"), pages.ProductRatingField(0)},
		{"a product rating of 6, the last product", form("product."+strconv.Itoa(last)+".rating", "6"), pages.ProductRatingField(last)},
		{"a long product comment", form("product.1.rating", "5", "product.1.comment", long), pages.ProductCommentField(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.form.Encode()
			req, err := http.NewRequest(http.MethodPost, "/feedback", strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			_, fieldErrs, err := pages.ParseFeedback(req)
			require.NoError(t, err)
			var fields []string
			for _, fe := range fieldErrs {
				fields = append(fields, fe.Field)
			}
			require.Contains(t, fields, tc.field, "the server refuses it")
			err = documentRefuses(t, http.MethodPost, "/feedback", "application/x-www-form-urlencoded", []byte(body))
			require.Error(t, err, "openapi.yaml admits what the server refuses")
			assert.Contains(t, err.Error(), tc.field)
		})
	}
	fields := openAPIValidator(t).doc.Components.Schemas["FeedbackForm"].Value.Properties
	want := []string{"event", "sig", pages.FieldRating, pages.FieldComment, pages.FieldShowName}
	for i := range pages.MaxProducts {
		want = append(want, pages.ProductRatingField(i), pages.ProductCommentField(i))
	}
	assert.ElementsMatch(t, want, slices.Collect(maps.Keys(fields)), "FeedbackForm names every field the page reads, no other")
	taken := form("rating", "5", "comment", "Good", pages.FieldShowName, "1", "product.0.rating", "4", "product.0.comment", "Fine",
		"product."+strconv.Itoa(last)+".rating", "3")
	assert.NoError(t, documentRefuses(t, http.MethodPost, "/feedback", "application/x-www-form-urlencoded", []byte(taken.Encode())))
}
