package sms_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/sms"
)

// The example of Twilio's request-validation documentation (the PHP
// library's guide, repeated in its Go library's tests).
const (
	docToken = "12345"
	docURL   = "https://mycompany.com/myapp.php?foo=1&bar=2"
	docSig   = "RSOYDt4T1cUTdK1PDd93/VVr8B8="
)

func docForm() url.Values {
	return url.Values{
		"CallSid": {"CA1234567890ABCDE"},
		"Caller":  {"+14158675309"},
		"Digits":  {"1234"},
		"From":    {"+14158675309"},
		"To":      {"+18005551212"},
	}
}

func TestSignatureDocumentedExample(t *testing.T) {
	t.Parallel()
	assert.Equal(t, docSig, sms.Signature(docToken, docURL, docForm()))
	assert.True(t, sms.ValidateSignature(docToken, docURL, docForm(), docSig))
}

func TestValidateSignature(t *testing.T) {
	t.Parallel()
	changed := func(name, value string) url.Values {
		f := docForm()
		f.Set(name, value)
		return f
	}
	added := docForm()
	added.Set("Extra", "")
	tests := []struct {
		name      string
		token     string
		url       string
		form      url.Values
		signature string
		want      bool
	}{
		{"documented", docToken, docURL, docForm(), docSig, true},
		{"another token", "54321", docURL, docForm(), docSig, false},
		{"no token", "", docURL, docForm(), docSig, false},
		{"no signature", docToken, docURL, docForm(), "", false},
		{"a changed value", docToken, docURL, changed("Digits", "1235"), docSig, false},
		{"an added parameter", docToken, docURL, added, docSig, false},
		{"another URL", docToken, "https://mycompany.com/myapp.php?foo=1&bar=3", docForm(), docSig, false},
		{"http for https", docToken, "http://mycompany.com/myapp.php?foo=1&bar=2", docForm(), docSig, false},
		{"truncated signature", docToken, docURL, docForm(), docSig[:10], false},
		// The provider may sign with or without the port; Twilio's Go
		// library carries these signatures of the same request.
		{"signed without the port, called with one", docToken, "https://mycompany.com:1234/myapp.php?foo=1&bar=2", docForm(), docSig, true},
		{"signed with the default port", docToken, docURL, docForm(), "kvajT1Ptam85bY51eRf/AJRuM3w=", true},
		{"http signed with the default port", docToken, "http://mycompany.com/myapp.php?foo=1&bar=2", docForm(), "0ZXoZLH/DfblKGATFgpif+LLRf4=", true},
		{"http signed with its port", docToken, "http://mycompany.com:1234/myapp.php?foo=1&bar=2", docForm(), "Zmvh+3yNM1Phv2jhDCwEM3q5ebU=", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, sms.ValidateSignature(tt.token, tt.url, tt.form, tt.signature))
		})
	}
}

func TestSignatureRoundTrip(t *testing.T) {
	t.Parallel()
	const token = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	callback := "https://touchpoint.example/sms/status?event=evt-3f1c2a9e"
	form := url.Values{
		"MessageSid":    {"SM1a2b3c4d5e6f708192a3b4c5d6e7f809"},
		"MessageStatus": {"delivered"},
		"To":            {"+4915112345678"},
		"Body":          {"Grüße & 100% = ok?"},
		"Multi":         {"b", "a"},
	}
	sig := sms.Signature(token, callback, form)
	assert.True(t, sms.ValidateSignature(token, callback, form, sig))
	// The order values arrive in does not matter.
	reordered := url.Values{}
	for k, v := range form {
		reordered[k] = v
	}
	reordered["Multi"] = []string{"a", "b"}
	assert.True(t, sms.ValidateSignature(token, callback, reordered, sig))
	// The query belongs to what is signed.
	assert.False(t, sms.ValidateSignature(token, "https://touchpoint.example/sms/status?event=evt-other", form, sig))
	// A parameter moved from the form into the URL is another request.
	assert.False(t, sms.ValidateSignature(token, callback+"&MessageStatus=delivered", url.Values{
		"MessageSid": form["MessageSid"], "To": form["To"], "Body": form["Body"], "Multi": form["Multi"],
	}, sig))
}

func BenchmarkValidateSignature(b *testing.B) {
	form := docForm()
	for b.Loop() {
		sms.ValidateSignature(docToken, docURL, form, docSig)
	}
}
