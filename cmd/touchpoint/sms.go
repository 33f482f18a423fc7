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
	setup, ok, err := sms.LoadSetup(cfg.Settings.Get, cfg.BaseURL)
	if err != nil || !ok {
		return nil, nil, err
	}
	tw, err := sms.NewTwilio(setup.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("sms: %w", err)
	}
	sender, err := activities.NewTwilioSMS(tw, setup.Config.StatusCallbackURL)
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := templates.NewSMS()
	if err != nil {
		return nil, nil, fmt.Errorf("sms templates: %w", err)
	}
	return sender, tmpl, nil
}

// smsCallbacks is what the API needs of the SMS provider, nil without one
// (the settings were checked at start).
func smsCallbacks(cfg config.Config) *sms.CallbackKeys {
	setup, ok, err := sms.LoadSetup(cfg.Settings.Get, cfg.BaseURL)
	if err != nil || !ok {
		return nil
	}
	return &setup.Callbacks
}
