package main

import (
	"log/slog"
	"strings"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/store/authdb"
)

// verifierOptions are the API's token verifier's options from the
// process configuration: one Issuer per TOUCHPOINT_OIDC_ISSUER entry, with
// the audience and discovery URL given after it (config.OIDCIssuerOptions).
func verifierOptions(cfg config.Config, repo *authdb.Store, logger *slog.Logger) auth.Options {
	o := auth.Options{Store: repo, BuiltInIssuer: cfg.AuthURL, Audience: cfg.BaseURL,
		IdleTimeout: cfg.TokenIdleTimeout, FlushInterval: cfg.TokenUseFlushInterval,
		KeyRefresh: cfg.JWKSRefresh, MaxTokenLifetime: cfg.TokenMaxLifetime, Logger: logger}
	for _, u := range cfg.OIDCIssuers {
		set := cfg.OIDCIssuerOptions[u]
		// An external issuer is kept exactly as written: iss is compared
		// byte for byte, and some (Auth0) end it with a slash.
		is := auth.Issuer{URL: u, Audience: set.Audience, DiscoveryURL: set.DiscoveryURL, MaxLifetime: set.MaxLifetime}
		if strings.TrimRight(u, "/") == strings.TrimRight(cfg.AuthURL, "/") {
			is.URL = strings.TrimRight(cfg.AuthURL, "/")
			if is.DiscoveryURL == "" {
				is.DiscoveryURL = cfg.OIDCDiscoveryURL // "" when AuthURL is reachable as it is
			}
		}
		o.Issuers = append(o.Issuers, is)
	}
	return o
}

// issuerOptions are the built-in issuer's options from the process
// configuration.
func issuerOptions(cfg config.Config, repo *authdb.Store, logger *slog.Logger) authserver.Options {
	return authserver.Options{Store: repo, Issuer: cfg.AuthURL, Audience: cfg.BaseURL, SecretKey: cfg.SecretKey,
		TokenLifetime: cfg.TokenMaxLifetime, IdleTimeout: cfg.TokenIdleTimeout,
		KeyRotation: cfg.SigningKeyRotation, JWKSRefresh: cfg.JWKSRefresh, TrustedProxies: cfg.TrustedProxies, Logger: logger}
}
