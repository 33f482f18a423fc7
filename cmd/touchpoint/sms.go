package main

import (
	"fmt"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/templates"
)

// smsSender builds the worker's SMS provider and templates from
// TOUCHPOINT_SMS_*; both are nil without a provider (SMS invites then fail
// as no_provider, and the API refuses medium sms).
func smsSender(cfg config.Config) (activities.SMSSender, *templates.SMSSet, error) {
	if !cfg.SMSConfigured() {
		return nil, nil, nil
	}
	tw, err := sms.NewTwilio(sms.Config{BaseURL: cfg.SMS.URL, AccountSID: cfg.SMS.AccountSID, AuthToken: cfg.SMS.AuthToken,
		From: cfg.SMS.From, MessagingServiceSID: cfg.SMS.MessagingServiceSID, StatusCallbackURL: cfg.SMS.StatusCallbackURL})
	if err != nil {
		return nil, nil, fmt.Errorf("sms: %w", err)
	}
	sender, err := activities.NewTwilioSMS(tw, cfg.SMS.StatusCallbackURL)
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := templates.NewSMS()
	if err != nil {
		return nil, nil, fmt.Errorf("sms templates: %w", err)
	}
	return sender, tmpl, nil
}

// smsCallbacks is what the API needs of the SMS provider, nil without one.
func smsCallbacks(cfg config.Config) *sms.CallbackKeys {
	if !cfg.SMSConfigured() {
		return nil
	}
	return &sms.CallbackKeys{AuthToken: cfg.SMS.AuthToken, StatusURL: cfg.SMS.StatusCallbackURL, InboundURL: cfg.SMSInboundURL()}
}
