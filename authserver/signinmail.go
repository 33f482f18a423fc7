package authserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/touchpoint/touchpoint/internal/opaque"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// signInMail is a request for a sign-in link, answered in the background.
type signInMail struct {
	email, locale string
	browserHash   []byte
	req           authzRequest
}

// mailWorkers send sign-in mails side by side, so one slow mail server
// answer does not hold the others up.
const mailWorkers = 2

// sendMails sends the queued sign-in mails until ctx ends.
func (s *Server) sendMails(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-s.people.queue:
			if err := s.sendLink(ctx, m); err != nil && ctx.Err() == nil {
				s.log.Warn("sign-in mail not sent", "to", mail.MaskEmail(m.email), "error", err)
			}
			s.people.pending.Add(-1)
		}
	}
}

// sendLink makes a link for the person of the address, if there is one
// who may sign in, and mails it. Nobody learns of an address that is
// nobody's: the asker got their answer already.
func (s *Server) sendLink(ctx context.Context, m signInMail) error {
	si := s.people
	p, err := si.store.PersonByEmail(ctx, m.email)
	switch {
	case errors.Is(err, pg.ErrNotFound):
		s.log.Info("sign-in link asked for an address of nobody", "to", mail.MaskEmail(m.email))
		return nil
	case err != nil:
		return err
	case !p.Active():
		s.log.Info("sign-in link asked for a disabled person", "person", p.ID)
		return nil
	}
	token := opaque.New()
	l, err := si.store.CreateSignInLink(ctx, persondb.SignInLink{TokenHash: opaque.Hash(token), BrowserHash: m.browserHash,
		PersonID: p.ID, ClientID: m.req.ClientID, RedirectURI: m.req.RedirectURI, State: m.req.State, Nonce: m.req.Nonce,
		CodeChallenge: m.req.CodeChallenge}, LinkLifetime, MailsPerHour)
	switch {
	case errors.Is(err, persondb.ErrMailCap):
		s.log.Info("sign-in link not sent: the person had their mails for the hour", "person", p.ID)
		return nil
	case errors.Is(err, persondb.ErrDisabled):
		return nil
	case err != nil:
		return err
	}
	msg, err := si.linkMail(p.Email, m.locale, s.opts.Issuer+SignInPath+"?"+url.Values{"token": {token}}.Encode())
	if err != nil {
		return err
	}
	msg.EventID = l.ID // the Message-ID and the .eml file: the link, never its token
	if err := si.mail.Send(ctx, msg); err != nil {
		return fmt.Errorf("send sign-in link %s: %w", l.ID, err)
	}
	s.log.Info("sign-in link sent", "person", p.ID, "link", l.ID)
	return nil
}

// linkMail is the mail that carries a sign-in link, in the asker's
// language.
func (si *signIn) linkMail(to, locale, link string) (mail.Message, error) {
	t := si.site.Texts()
	var (
		m   = mail.Message{To: to, Locale: t.Pick(locale)}
		err error
		txt = map[string]string{}
	)
	for _, key := range []string{"mail_subject", "mail_greeting", "mail_body", "mail_button", "mail_ignore"} {
		if txt[key], err = t.Text(locale, key, "email", to); err != nil {
			return m, err
		}
	}
	m.Subject = txt["mail_subject"]
	m.Text = strings.Join([]string{txt["mail_greeting"], txt["mail_body"], link, txt["mail_ignore"]}, "\n\n") + "\n"
	var html bytes.Buffer
	err = si.mailHTML.Execute(&html, struct{ Lang, Subject, Greeting, Body, Button, Ignore, Link string }{
		strings.ReplaceAll(m.Locale, "_", "-"), m.Subject, txt["mail_greeting"], txt["mail_body"], txt["mail_button"],
		txt["mail_ignore"], link})
	m.HTML = html.String()
	return m, err
}
