package mailevents

import (
	"errors"
	"slices"

	"github.com/touchpoint/touchpoint/internal/settings"
	"github.com/touchpoint/touchpoint/mail"
)

// Provider is a mail provider whose reports Touchpoint takes, with
// everything that names it: its settings, its verifier and the header
// its reports name a message by. The configuration, the wiring, the API's
// routes and the documents all read this registry, so adding a provider
// is a file of this package (its verifier and its entry) and a line in
// providers.
type Provider struct {
	// Name is the provider as routes, metrics and webhooks spell it.
	Name string
	// Settings are the environment variables the provider's verifier
	// reads.
	Settings []settings.Var
	// Verifier reads the provider's settings through get: nil, and no
	// error, while they are unset (its reports are not taken); an error
	// naming the variable when they are set but wrong.
	Verifier func(get func(string) string) (Verifier, error)
	// Tag is the header every message carries so that the provider's
	// reports name it, in the form the provider hands back.
	Tag mail.Tag
	// Challenge is the WWW-Authenticate of a refused request, for a
	// provider whose credentials ride in the webhook's URL; "" for none.
	Challenge string
}

// providers is the registry, in the order of the documents.
var providers = []Provider{sesProvider, sendGridProvider, postmarkProvider, mailgunProvider}

// Providers lists every provider in a stable order.
func Providers() []Provider { return slices.Clone(providers) }

// Names lists every provider's name in the order of Providers.
func Names() []string {
	out := make([]string, len(providers))
	for i, p := range providers {
		out[i] = p.Name
	}
	return out
}

// Lookup finds a provider by its name.
func Lookup(name string) (Provider, bool) {
	i := slices.IndexFunc(providers, func(p Provider) bool { return p.Name == name })
	if i < 0 {
		return Provider{}, false
	}
	return providers[i], true
}

// Verifiers are the verifiers of the providers whose settings get finds
// set; an error names every variable set wrong.
func Verifiers(get func(string) string) ([]Verifier, error) {
	var out []Verifier
	var errs []error
	for _, p := range providers {
		v, err := p.Verifier(get)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out, errors.Join(errs...)
}

// Tags are the headers every message carries for the providers' reports.
func Tags() []mail.Tag {
	out := make([]mail.Tag, len(providers))
	for i, p := range providers {
		out[i] = p.Tag
	}
	return out
}

// Settings is what the providers hand the configuration: every
// provider's variables, checked by making its verifier.
func Settings() settings.Section {
	var vars []settings.Var
	for _, p := range providers {
		vars = append(vars, p.Settings...)
	}
	return settings.Section{Name: "mail_events", Vars: vars, Check: func(get func(string) string) error {
		_, err := Verifiers(get)
		return err
	}}
}
