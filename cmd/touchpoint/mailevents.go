package main

import (
	"context"
	"fmt"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/mailevents"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/store"
)

// mailEventVerifiers verify the reports of the mail providers configured
// in cfg; the API answers 404 to the others. SES fetches its signing
// certificates and confirms subscriptions with the package's own client:
// a 10 s timeout, no redirects, SNS hosts only.
func mailEventVerifiers(cfg config.MailEvents) ([]mailevents.Verifier, error) {
	var out []mailevents.Verifier
	if len(cfg.SESTopicARNs) > 0 {
		out = append(out, &mailevents.SESVerifier{Topics: cfg.SESTopicARNs})
	}
	if cfg.SendGridPublicKey != "" {
		v, err := mailevents.NewSendGridVerifier(cfg.SendGridPublicKey)
		if err != nil {
			return nil, fmt.Errorf("TOUCHPOINT_SENDGRID_WEBHOOK_PUBLIC_KEY: %w", err)
		}
		out = append(out, v)
	}
	if cfg.PostmarkUser != "" && cfg.PostmarkPassword != "" {
		out = append(out, mailevents.PostmarkVerifier{User: cfg.PostmarkUser, Password: cfg.PostmarkPassword})
	}
	if cfg.MailgunSigningKey != "" {
		out = append(out, mailevents.MailgunVerifier{SigningKey: cfg.MailgunSigningKey})
	}
	return out, nil
}

// mailLastDay is store.MailLastDay as the metrics read it.
func mailLastDay(st *store.Store) func(ctx context.Context) ([]metrics.AccountMail, error) {
	return func(ctx context.Context) ([]metrics.AccountMail, error) {
		accounts, err := st.MailLastDay(ctx)
		out := make([]metrics.AccountMail, len(accounts))
		for i, a := range accounts {
			out[i] = metrics.AccountMail{Account: a.AccountID, Sent: a.Sent, Complaints: a.Complaints}
		}
		return out, err
	}
}
