package mail_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net"
	netmail "net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/senderr"
)

const from = "Touchpoint <invites@touchpoint.example>"

func message() mail.Message {
	return mail.Message{
		EventID: "evt-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b",
		To:      "Jane.Doe@Example.com",
		ToName:  "Jane Doe",
		Locale:  "de_AT",
		Subject: "Wie war Ihre Erfahrung?",
		Text:    "Hallo Jane,\n\nbitte bewerten Sie uns.\n",
		HTML:    "<p>Hallo Jane,</p>",
	}
}

func TestSMTPSend(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	s, err := mail.NewSMTP(srv.URL(), from, mail.SMTPOptions{})
	require.NoError(t, err)
	require.NoError(t, s.Send(t.Context(), message()))

	msgs := srv.Messages()
	require.Len(t, msgs, 1)
	assert.Equal(t, "invites@touchpoint.example", msgs[0].From)
	assert.Equal(t, []string{"Jane.Doe@Example.com"}, msgs[0].To)
	m, err := msgs[0].Parse()
	require.NoError(t, err)
	assert.Equal(t, "<evt-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b@touchpoint.example>", m.Header.Get("Message-Id"))
	assert.Equal(t, "de-AT", m.Header.Get("Content-Language"))
	assert.Equal(t, "auto-generated", m.Header.Get("Auto-Submitted"))
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	require.NoError(t, err)
	assert.Equal(t, "Wie war Ihre Erfahrung?", subject)
	assert.Contains(t, m.Header.Get("To"), "Jane Doe")

	mediaType, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	require.NoError(t, err)
	assert.Equal(t, "multipart/alternative", mediaType)
	parts := multipart.NewReader(m.Body, params["boundary"])
	var types []string
	for {
		p, err := parts.NextPart() // decodes quoted-printable
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		body, err := io.ReadAll(p)
		require.NoError(t, err)
		types = append(types, strings.Split(p.Header.Get("Content-Type"), ";")[0])
		assert.Contains(t, string(body), "Hallo Jane")
	}
	assert.Equal(t, []string{"text/plain", "text/html"}, types)
}

func TestSMTPErrorKinds(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	s, err := mail.NewSMTP(srv.URL(), from, mail.SMTPOptions{})
	require.NoError(t, err)

	tests := []struct {
		name    string
		script  func()
		kind    senderr.Kind
		code    int
		refused bool // the address itself
	}{
		{"recipient refused for good", func() { srv.FailRCPT(1, 550) }, senderr.Permanent, 550, true},
		{"recipient refused for now", func() { srv.FailRCPT(1, 451) }, senderr.Transient, 451, false},
		{"message refused for good", func() { srv.FailDATA(1, 554) }, senderr.Permanent, 554, false},
		{"message refused for now", func() { srv.FailDATA(1, 452) }, senderr.Transient, 452, false},
		{"hung up after the message", func() { srv.HangUpAfterDATA(1) }, senderr.Uncertain, 0, false},
	}
	for _, tc := range tests { // sequential: they share the server's script
		tc.script()
		err := s.Send(t.Context(), message())
		require.Error(t, err, tc.name)
		assert.Equal(t, tc.kind, senderr.KindOf(err), "%s: %v", tc.name, err)
		var me *senderr.Error
		require.ErrorAs(t, err, &me, tc.name)
		assert.Equal(t, tc.code, me.Code, tc.name)
		assert.Equal(t, tc.refused, senderr.RecipientOf(err) == senderr.RecipientRefused, tc.name)
		assert.NotContains(t, strings.ToLower(err.Error()), "jane.doe@example.com", "%s: the address never leaks into an error", tc.name)
	}
	// The 550 reply echoes the address; the error shows it masked.
	srv.FailRCPT(1, 550)
	err = s.Send(t.Context(), message())
	assert.Contains(t, err.Error(), "J***@Example.com")

	srv.Stop()
	err = s.Send(t.Context(), message())
	require.Error(t, err)
	assert.Equal(t, senderr.Transient, senderr.KindOf(err), "connection refused: %v", err)
}

func TestSMTPTimeout(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() { // accepts and never says a word
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	s, err := mail.NewSMTP("smtp://"+ln.Addr().String(), from, mail.SMTPOptions{Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	start := time.Now()
	err = s.Send(t.Context(), message())
	require.Error(t, err)
	assert.Equal(t, senderr.Transient, senderr.KindOf(err))
	assert.Less(t, time.Since(start), 10*time.Second)
}

func TestSMTPStartTLSAndAuth(t *testing.T) {
	t.Parallel()
	cfg, roots := smtptest.SelfSigned(t)
	srv := smtptest.Start(t, smtptest.Options{TLS: cfg, Username: "mailer", Password: "s3cret"})
	s, err := mail.NewSMTP(srv.URL(), from, mail.SMTPOptions{TLSConfig: &tls.Config{RootCAs: roots}})
	require.NoError(t, err)
	require.NoError(t, s.Send(t.Context(), message()))
	assert.Len(t, srv.Messages(), 1)

	bad, err := mail.NewSMTP(strings.Replace(srv.URL(), "s3cret", "wrong", 1), from, mail.SMTPOptions{TLSConfig: &tls.Config{RootCAs: roots}})
	require.NoError(t, err)
	err = bad.Send(t.Context(), message())
	require.Error(t, err)
	assert.Equal(t, senderr.Transient, senderr.KindOf(err), "bad credentials are for ops to fix, then the retry succeeds")
	assert.NotContains(t, err.Error(), "wrong")
}

func TestSMTPNoPasswordInTheClear(t *testing.T) {
	t.Parallel()
	// A server that wants a password but offers no TLS gets none.
	srv := smtptest.Start(t, smtptest.Options{Username: "mailer", Password: "s3cret"})
	s, err := mail.NewSMTP(srv.URL(), from, mail.SMTPOptions{})
	require.NoError(t, err)
	err = s.Send(t.Context(), message())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not able to detect a supported authentication mechanism")
	assert.Empty(t, srv.Messages())
}

func TestSMTPImplicitTLS(t *testing.T) {
	t.Parallel()
	cfg, roots := smtptest.SelfSigned(t)
	srv := smtptest.Start(t, smtptest.Options{TLS: cfg, ImplicitTLS: true})
	require.True(t, strings.HasPrefix(srv.URL(), "smtps://"))
	s, err := mail.NewSMTP(srv.URL(), from, mail.SMTPOptions{TLSConfig: &tls.Config{RootCAs: roots}})
	require.NoError(t, err)
	require.NoError(t, s.Send(t.Context(), message()))
	assert.Len(t, srv.Messages(), 1)

	untrusting, err := mail.NewSMTP(srv.URL(), from, mail.SMTPOptions{})
	require.NoError(t, err)
	assert.Error(t, untrusting.Send(t.Context(), message()), "an unknown certificate is refused")
}

func TestNewSMTPRejectsBadURLs(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "http://host", "smtp://", "smtp://host:port", "127.0.0.1:25"} {
		_, err := mail.NewSMTP(u, from, mail.SMTPOptions{})
		assert.Error(t, err, u)
	}
	_, err := mail.NewSMTP("smtp://127.0.0.1:25", "not an address", mail.SMTPOptions{})
	assert.Error(t, err)
}

func TestInvalidRecipientIsPermanent(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	s, err := mail.NewSMTP(srv.URL(), from, mail.SMTPOptions{})
	require.NoError(t, err)
	m := message()
	m.To = "not-an-address"
	err = s.Send(t.Context(), m)
	assert.Equal(t, senderr.Permanent, senderr.KindOf(err))
	assert.True(t, senderr.RecipientOf(err) == senderr.RecipientRefused, "no server can take it")
	assert.Empty(t, srv.Messages())
}

func TestDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "outbox")
	var logs bytes.Buffer
	d, err := mail.NewDir(dir, from, slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	m := message()
	require.NoError(t, d.Send(context.Background(), m))
	m.Subject = "second try"
	require.NoError(t, d.Send(context.Background(), m))

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "a retry overwrites, no temporary files are left")
	assert.Equal(t, m.EventID+".eml", entries[0].Name())
	raw, err := os.ReadFile(d.Path(m.EventID))
	require.NoError(t, err)
	parsed, err := netmail.ReadMessage(bytes.NewReader(raw))
	require.NoError(t, err)
	assert.Equal(t, "second try", parsed.Header.Get("Subject"))
	assert.Equal(t, "<"+m.EventID+"@touchpoint.example>", parsed.Header.Get("Message-Id"))

	assert.Contains(t, logs.String(), `"to":"J***@Example.com"`)
	assert.NotContains(t, strings.ToLower(logs.String()), "jane.doe@example.com")

	assert.Equal(t, filepath.Join(dir, "_.._etc_passwd.eml"), d.Path("/../etc/passwd"))
}

func TestMaskEmail(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"jane@example.com": "j***@example.com",
		"Ärger@example.de": "Ä***@example.de",
		"@example.com":     "***@example.com",
		"nonsense":         "***",
		"":                 "***",
	} {
		assert.Equal(t, want, mail.MaskEmail(in), in)
	}
}

func TestSMTPStartTLSRequired(t *testing.T) {
	t.Parallel()
	cfg, roots := smtptest.SelfSigned(t)
	trusting := mail.SMTPOptions{TLSConfig: &tls.Config{RootCAs: roots}}

	// A server without STARTTLS (or one whose offer was stripped on the
	// way) gets nothing when TLS is required.
	plain := smtptest.Start(t, smtptest.Options{})
	s, err := mail.NewSMTP(plain.URL()+"?starttls=required", from, trusting)
	require.NoError(t, err)
	err = s.Send(t.Context(), message())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "STARTTLS")
	assert.Equal(t, senderr.Transient, senderr.KindOf(err), "ops fix the server, then a retry succeeds")
	assert.NotContains(t, err.Error(), message().To)
	assert.Empty(t, plain.Messages(), "nothing was sent in clear")
	// Opportunistic (the default) would have sent it.
	s, err = mail.NewSMTP(plain.URL()+"?starttls=opportunistic", from, trusting)
	require.NoError(t, err)
	require.NoError(t, s.Send(t.Context(), message()))
	assert.Len(t, plain.Messages(), 1)

	// A server that offers STARTTLS is used encrypted.
	tlsSrv := smtptest.Start(t, smtptest.Options{TLS: cfg, Username: "mailer", Password: "s3cret"})
	s, err = mail.NewSMTP(tlsSrv.URL()+"?starttls=required", from, trusting)
	require.NoError(t, err)
	require.NoError(t, s.Send(t.Context(), message()))
	assert.Len(t, tlsSrv.Messages(), 1)
	// … but not with a certificate nobody vouches for.
	s, err = mail.NewSMTP(tlsSrv.URL()+"?starttls=required", from, mail.SMTPOptions{})
	require.NoError(t, err)
	assert.Error(t, s.Send(t.Context(), message()))
	assert.Len(t, tlsSrv.Messages(), 1)

	// smtps:// is TLS from the first byte.
	implicit := smtptest.Start(t, smtptest.Options{TLS: cfg, ImplicitTLS: true})
	s, err = mail.NewSMTP(implicit.URL(), from, trusting)
	require.NoError(t, err)
	require.NoError(t, s.Send(t.Context(), message()))
	assert.Len(t, implicit.Messages(), 1)

	for _, bad := range []string{"?starttls=maybe", "?tls=on", "?starttls=required&starttls=opportunistic"} {
		_, err := mail.NewSMTP(plain.URL()+bad, from, trusting)
		assert.Error(t, err, bad)
	}
	_, err = mail.NewSMTP(implicit.URL()+"?starttls=required", from, trusting)
	assert.Error(t, err, "starttls on smtps")
}

// TestHeadersAreEncodedNotCleaned: a subject holding a line break, or a
// name holding quotes, markup and a comma, cannot add a header or a
// recipient: the MIME encoding escapes it, and a reader decodes the same
// text back.
func TestHeadersAreEncodedNotCleaned(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	s, err := mail.NewSMTP(srv.URL(), from, mail.SMTPOptions{})
	require.NoError(t, err)
	m := message()
	m.Subject = "Hi <b>&</b>\r\nBcc: victim@example.com"
	m.ToName = `Jane "JD" <Doe>" <victim@example.com>, "x`
	m.FromName = "Shop & Co <i>\u200f"
	require.NoError(t, s.Send(t.Context(), m))
	msgs := srv.Messages()
	require.Len(t, msgs, 1)
	assert.Equal(t, []string{"Jane.Doe@Example.com"}, msgs[0].To, "no recipient added")
	parsed, err := msgs[0].Parse()
	require.NoError(t, err)
	assert.Empty(t, parsed.Header.Get("Bcc"))
	dec := new(mime.WordDecoder)
	subject, err := dec.DecodeHeader(parsed.Header.Get("Subject"))
	require.NoError(t, err)
	assert.Equal(t, m.Subject, subject, "the same text, encoded")
	to, err := (&netmail.AddressParser{WordDecoder: dec}).Parse(parsed.Header.Get("To"))
	require.NoError(t, err)
	assert.Equal(t, m.ToName, to.Name)
	fromAddr, err := (&netmail.AddressParser{WordDecoder: dec}).Parse(parsed.Header.Get("From"))
	require.NoError(t, err)
	assert.Equal(t, m.FromName, fromAddr.Name)
}
