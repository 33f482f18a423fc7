package main

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/console"
	"github.com/touchpoint/touchpoint/console/signin"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/webhook"
)

// consoleProvider is the OpenID Connect provider people sign in to the
// console through: the shop's own (TOUCHPOINT_CONSOLE_OIDC_ISSUER), else
// the built-in issuer, reached where the API fetches its discovery
// document (TOUCHPOINT_OIDC_DISCOVERY_URL) with the console as its
// public client.
func consoleProvider(cfg config.Config) signin.Provider {
	if c := cfg.Console; c.Issuer != "" {
		return signin.Provider{Issuer: c.Issuer, ClientID: c.ClientID, ClientSecret: c.ClientSecret, MatchEmail: c.MatchEmail}
	}
	return signin.Provider{Issuer: cfg.AuthURL, DiscoveryURL: cfg.OIDCDiscoveryURL, ClientID: signin.ClientID, BuiltIn: true}
}

// consoleParts are what the console shares with the API of its process:
// the sample links of template previews, the webhook secrets' seal, the
// hooks that tell a workflow of a cancel and wake the starter after a
// retry (the API's own, set once it is built), and the read replica.
type consoleParts struct {
	fb, unsub *signedlink.Links
	secrets   *webhook.SecretBox
	cancelled func(eventID string)
	retried   func()
	reads     console.ReadRouter // nil: no read replica
}

// consoleHandler builds the console at {base_url}/console/ with its
// sign-in.
func consoleHandler(cfg config.Config, st *store.Store, logger *slog.Logger, parts consoleParts) (http.Handler, error) {
	logger = logger.With("component", "console")
	ps := storeset.People(st)
	auth, err := signin.New(signin.Options{BaseURL: cfg.BaseURL, Provider: consoleProvider(cfg), Store: ps,
		SecretKey: cfg.SecretKey, Logger: logger})
	if err != nil {
		return nil, err
	}
	lib, err := templates.Load()
	if err != nil {
		return nil, err
	}
	h, err := console.New(console.Options{BaseURL: cfg.BaseURL, SignedIn: auth.SignedIn, Allows: console.Allows,
		SignOutPath: signin.SignOutPath, Invites: st.Invites, Accounts: st.Accounts, Stats: st.Stats, Webhooks: st.Webhooks, Reviews: st.Reviews,
		Suppressions: st.Suppressions, TemplateStore: st.Templates, Reports: st.Reports, People: ps, Logger: logger,
		HSTS: strings.HasPrefix(cfg.BaseURL, "https://"), Templates: lib,
		SampleFeedbackURL: parts.fb.URL(templates.SampleEventID), SampleUnsubscribeURL: parts.unsub.URL(templates.SampleEventID),
		WebhookSecrets: parts.secrets, WebhookAllowPrivate: cfg.WebhookAllowPrivate,
		TemporalUIURL: cfg.TemporalUIURL, Namespace: cfg.TemporalNamespace,
		Cancelled: parts.cancelled, Retried: parts.retried, Reads: parts.reads,
		Clients: st.Auth, PeopleStore: ps, NewClientSecret: func() (string, []byte) {
			return authserver.NewClientSecret(secretkey.Derive(cfg.SecretKey, secretkey.ClientSecret))
		}})
	if err != nil {
		return nil, err
	}
	auth.Mount(h)
	return h, nil
}
