// Package sections lists the settings that packages hand the
// configuration — the Temporal client's, the SMS provider's, the mail
// providers' — for the wiring that checks them at start, and for the
// generator of config's copy of their variables (config does not import
// the packages that own them).
package sections

import (
	"errors"

	"github.com/touchpoint/touchpoint/internal/settings"
	"github.com/touchpoint/touchpoint/mailevents"
	"github.com/touchpoint/touchpoint/sms"
	"github.com/touchpoint/touchpoint/temporalclient"
)

//go:generate go run ./gen ../../config/sections_gen.go

// (ConfigFile is the generated file; a test fails when it is stale.)

// All are the sections, in the order of the logged configuration.
func All() []settings.Section {
	return []settings.Section{temporalclient.Settings(), sms.Settings(), mailevents.Settings()}
}

// Check checks the values a process read of every section, naming each
// variable set wrong.
func Check(values settings.Values) error {
	var errs []error
	for _, s := range All() {
		if s.Check != nil {
			errs = append(errs, s.Check(values.Get))
		}
	}
	return errors.Join(errs...)
}
