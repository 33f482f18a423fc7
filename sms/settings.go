package sms

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/touchpoint/touchpoint/internal/settings"
)

// The variables of the SMS provider: Twilio, or another that speaks its
// Messages API.
const (
	varURL                 = "TOUCHPOINT_SMS_URL"
	varAccountSID          = "TOUCHPOINT_SMS_ACCOUNT_SID"
	varAuthToken           = "TOUCHPOINT_SMS_AUTH_TOKEN"
	varFrom                = "TOUCHPOINT_SMS_FROM"
	varMessagingServiceSID = "TOUCHPOINT_SMS_MESSAGING_SERVICE_SID"
	varStatusCallbackURL   = "TOUCHPOINT_SMS_STATUS_CALLBACK_URL"
)

// Settings is what the SMS provider hands the configuration: its
// variables, checked as LoadSetup reads them.
func Settings() settings.Section {
	return settings.Section{Name: "sms", Vars: []settings.Var{
		{Name: varURL}, {Name: varAccountSID}, {Name: varAuthToken, Secret: true}, {Name: varFrom},
		{Name: varMessagingServiceSID}, {Name: varStatusCallbackURL},
	}, Check: func(get func(string) string) error {
		_, _, err := LoadSetup(get, "")
		return err
	}}
}

// Setup is the SMS provider as the environment configures it: the
// sender's settings and the keys of its callbacks.
type Setup struct {
	Config    Config
	Callbacks CallbackKeys
}

// LoadSetup reads the provider's variables through get, its callbacks on
// baseURL (the API's public address) unless TOUCHPOINT_SMS_STATUS_CALLBACK_URL
// says otherwise. ok is false when no provider is configured. A half-made
// configuration is an error naming the variable: better told at start
// than found when the first SMS invite fails.
func LoadSetup(get func(string) string, baseURL string) (s Setup, ok bool, err error) {
	c := Config{BaseURL: get(varURL), AccountSID: get(varAccountSID), AuthToken: get(varAuthToken), From: get(varFrom),
		MessagingServiceSID: get(varMessagingServiceSID), StatusCallbackURL: get(varStatusCallbackURL)}
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	base := strings.TrimRight(baseURL, "/")
	if c.StatusCallbackURL == "" && base != "" {
		c.StatusCallbackURL = base + StatusPath
	}
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || u.RawQuery != "" {
		bad(varURL, "must be an absolute http(s) URL without credentials or query")
	}
	if c.StatusCallbackURL != "" && !isHTTPURL(c.StatusCallbackURL) {
		bad(varStatusCallbackURL, "%q must be an absolute http(s) URL", c.StatusCallbackURL)
	}
	if c.AccountSID == "" && c.AuthToken == "" && c.From == "" && c.MessagingServiceSID == "" {
		return Setup{}, false, errors.Join(errs...) // no provider
	}
	if c.AccountSID == "" {
		bad(varAccountSID, "is required when any TOUCHPOINT_SMS_* sender setting is set")
	}
	if c.AuthToken == "" {
		bad(varAuthToken, "is required when any TOUCHPOINT_SMS_* sender setting is set")
	}
	if c.From == "" && c.MessagingServiceSID == "" {
		bad(varFrom, "or TOUCHPOINT_SMS_MESSAGING_SERVICE_SID is required to send SMS")
	}
	if len(errs) > 0 {
		return Setup{}, false, errors.Join(errs...)
	}
	return Setup{Config: c, Callbacks: CallbackKeys{AuthToken: c.AuthToken, StatusURL: c.StatusCallbackURL,
		InboundURL: base + InboundPath}}, true, nil
}

func isHTTPURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
