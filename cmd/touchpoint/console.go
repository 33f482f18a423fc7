package main

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/console"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/templates"
)

// consoleProvider is the OpenID Connect provider people sign in to the
// console through: the shop's own (TOUCHPOINT_CONSOLE_OIDC_ISSUER), else
// the built-in issuer, reached where the API fetches its discovery
// document (TOUCHPOINT_OIDC_DISCOVERY_URL) with the console as its
// public client.
func consoleProvider(cfg config.Config) console.Provider {
	if c := cfg.Console; c.Issuer != "" {
		return console.Provider{Issuer: c.Issuer, ClientID: c.ClientID, ClientSecret: c.ClientSecret, MatchEmail: c.MatchEmail}
	}
	return console.Provider{Issuer: cfg.AuthURL, DiscoveryURL: cfg.OIDCDiscoveryURL, ClientID: console.ClientID, BuiltIn: true}
}

// consoleHandler builds the console at {base_url}/console/ with its
// sign-in.
func consoleHandler(cfg config.Config, st *store.Store, logger *slog.Logger) (http.Handler, error) {
	logger = logger.With("component", "console")
	ps := peopleOf(st)
	auth, err := console.NewAuth(console.AuthOptions{BaseURL: cfg.BaseURL, Provider: consoleProvider(cfg), Store: ps,
		SecretKey: cfg.SecretKey, Logger: logger})
	if err != nil {
		return nil, err
	}
	lib, err := templates.Load()
	if err != nil {
		return nil, err
	}
	h, err := console.New(console.Options{BaseURL: cfg.BaseURL, SignedIn: auth.SignedIn, Allows: console.Allows,
		SignOutPath: console.SignOutPath, Store: st, Accounts: st.Accounts, Stats: st.Stats, Templates: lib, People: ps, Logger: logger,
		HSTS: strings.HasPrefix(cfg.BaseURL, "https://")})
	if err != nil {
		return nil, err
	}
	if err := auth.Mount(h); err != nil {
		return nil, err
	}
	return h, nil
}
