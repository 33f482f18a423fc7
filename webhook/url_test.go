package webhook_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/webhook"
)

func TestValidateURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url          string
		allowPrivate bool
		want         string // "" means valid; else a part of the message
	}{
		{"https://hooks.example.com/touchpoint", false, ""},
		{"https://hooks.example.com:8443/touchpoint?shop=1", false, ""},
		{"https://HOOKS.Example.COM./x", false, ""},
		{"https://93.184.215.14/hooks", false, ""},
		{"https://[2606:4700:4700::1111]/hooks", false, ""},
		{"https://100.128.0.1/", false, ""}, // just past CGNAT
		{"https://localhost.example.com/", false, ""},

		{"http://hooks.example.com/", false, "must use https"},
		{"ftp://hooks.example.com/", false, "must use https, not ftp"},
		{"ftp://hooks.example.com/", true, "must use https, not ftp"},
		{"hooks.example.com/x", false, "absolute URL"},
		{"/hooks", false, "absolute URL"},
		{"", false, "absolute URL"},
		{"https:hooks.example.com", false, "absolute URL"},
		{"https://", false, "must have a host"},
		{"https:///path", false, "must have a host"},
		{"https://:443/", false, "must have a host"},
		{"https://user:pass@hooks.example.com/", false, "user name or password"},
		{"https://user@hooks.example.com/", false, "user name or password"},
		{"https://user@127.0.0.1/", true, "user name or password"},
		{"https://hooks.example.com:0/", false, "port between 1 and 65535"},
		{"https://hooks.example.com:65536/", false, "port between 1 and 65535"},
		{"https://hooks.example.com:/", false, "port after the colon"},
		{"https://hooks.example.com/\u202egpj.exe", false, "bidirectional overrides"},
		{"https://hooks.example.com/a b", false, "must not contain spaces"},
		{"https://hooks.example.com/\u200b", false, "invisible characters"},
		{"https://hooks.example.com:https/", false, "absolute URL"},
		{"https://hooks.example.com/#frag", false, "fragment"},
		{"https://hooks.example.com/#", false, "fragment"},
		{"https://hooks.example.com/" + strings.Repeat("a", 2048), false, "at most 2048"},
		{"https://hooks example.com/", false, "absolute URL"},

		{"https://127.0.0.1/", false, "127.0.0.1 is a loopback address"},
		{"https://127.1.2.3:8443/", false, "loopback"},
		{"https://[::1]/", false, "::1 is a loopback address"},
		{"https://10.0.0.1/", false, "private"},
		{"https://172.16.5.4/", false, "private"},
		{"https://192.168.1.1/", false, "private"},
		{"https://[fd00::1]/", false, "private"},
		{"https://169.254.169.254/latest/meta-data/", false, "link-local"},
		{"https://[fe80::1]/", false, "link-local"},
		{"https://[fe80::1%25eth0]/", false, "link-local"},
		{"https://100.64.0.1/", false, "CGNAT"},
		{"https://0.0.0.0/", false, "unspecified"},
		{"https://[::]/", false, "unspecified"},
		{"https://224.0.0.1/", false, "multicast"},
		{"https://[ff02::1]/", false, "multicast"},
		{"https://255.255.255.255/", false, "reserved"},
		{"https://[::ffff:127.0.0.1]/", false, "loopback"},
		{"https://[::ffff:169.254.169.254]/", false, "link-local"},
		{"https://[::ffff:10.0.0.1]/", false, "private"},
		{"https://[64:ff9b::a9fe:a9fe]/", false, "link-local (via NAT64)"},
		{"https://localhost/", false, "this machine"},
		{"https://LOCALHOST./", false, "this machine"},
		{"https://api.localhost:8080/", false, "this machine"},

		// allowPrivate (development, tests): http and any address.
		{"http://127.0.0.1:8080/hooks", true, ""},
		{"http://localhost:8080/hooks", true, ""},
		{"https://10.0.0.1/", true, ""},
		{"https://[::1]:9000/", true, ""},
		{"https://169.254.169.254/", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			err := webhook.ValidateURL(tt.url, tt.allowPrivate)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			if assert.Error(t, err) {
				assert.Contains(t, err.Error(), tt.want)
				assert.True(t, strings.HasPrefix(err.Error(), "must "), "reads after the field name: %q", err)
			}
		})
	}
}

// TestURLProblemKinds: each refusal names its kind, so that the console
// can say it in the person's language.
func TestURLProblemKinds(t *testing.T) {
	t.Parallel()
	for url, kind := range map[string]error{
		"hooks.example.com/x":                  webhook.ErrURLForm,
		"https://user:pw@hooks.example.com/x":  webhook.ErrURLForm,
		"https://hooks.example.com/x#frag":     webhook.ErrURLForm,
		"https://hooks.example.com:0/x":        webhook.ErrURLForm,
		"https://" + strings.Repeat("a", 2049): webhook.ErrURLForm,
		"http://hooks.example.com/x":           webhook.ErrURLNotHTTPS,
		"ftp://hooks.example.com/x":            webhook.ErrURLNotHTTPS,
		"https://10.0.0.7/x":                   webhook.ErrURLNotPublic,
		"https://localhost/x":                  webhook.ErrURLNotPublic,
	} {
		err := webhook.ValidateURL(url, false)
		assert.ErrorIs(t, err, kind, url)
	}
}
