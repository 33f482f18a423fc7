package smtptest_test

import (
	"crypto/tls"
	"net/smtp"
	"net/textproto"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/smtptest"
)

const body = "Subject: hi\r\n\r\n.leading dot\r\nbye\r\n"

func TestSendAndScriptedFailures(t *testing.T) {
	t.Parallel()
	s := smtptest.Start(t, smtptest.Options{})
	require.NoError(t, smtp.SendMail(s.Addr(), nil, "a@example.com", []string{"b@example.com"}, []byte(body)))

	msgs := s.Messages()
	require.Len(t, msgs, 1)
	assert.Equal(t, "a@example.com", msgs[0].From)
	assert.Equal(t, []string{"b@example.com"}, msgs[0].To)
	m, err := msgs[0].Parse()
	require.NoError(t, err)
	assert.Equal(t, "hi", m.Header.Get("Subject"))
	assert.Contains(t, string(msgs[0].Data), "\r\n.leading dot\r\n", "dot-unstuffed")

	s.FailRCPT(1, 550)
	err = smtp.SendMail(s.Addr(), nil, "a@example.com", []string{"b@example.com"}, []byte(body))
	var tpe *textproto.Error
	require.ErrorAs(t, err, &tpe)
	assert.Equal(t, 550, tpe.Code)
	assert.Contains(t, tpe.Msg, "<b@example.com>")

	s.FailDATA(1, 451)
	err = smtp.SendMail(s.Addr(), nil, "a@example.com", []string{"b@example.com"}, []byte(body))
	require.ErrorAs(t, err, &tpe)
	assert.Equal(t, 451, tpe.Code)

	s.HangUpAfterDATA(1)
	assert.Error(t, smtp.SendMail(s.Addr(), nil, "a@example.com", []string{"b@example.com"}, []byte(body)))
	assert.Len(t, s.Messages(), 2, "a message the server hung up on may still have been taken")
}

func TestStopAndRestart(t *testing.T) {
	t.Parallel()
	s := smtptest.Start(t, smtptest.Options{})
	addr := s.Addr()
	s.Stop()
	assert.Error(t, smtp.SendMail(addr, nil, "a@example.com", []string{"b@example.com"}, []byte(body)), "refused while down")
	require.NoError(t, s.Restart())
	assert.Equal(t, addr, s.Addr())
	require.NoError(t, smtp.SendMail(addr, nil, "a@example.com", []string{"b@example.com"}, []byte(body)))
	assert.Len(t, s.Messages(), 1)
}

func TestStartTLSAndAuth(t *testing.T) {
	t.Parallel()
	cfg, roots := smtptest.SelfSigned(t)
	s := smtptest.Start(t, smtptest.Options{TLS: cfg, Username: "user", Password: "secret"})
	assert.Contains(t, s.URL(), "smtp://user:secret@127.0.0.1:")

	c, err := smtp.Dial(s.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.Error(t, c.Mail("a@example.com"), "auth is required")
	require.NoError(t, c.StartTLS(&tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}))
	require.NoError(t, c.Auth(smtp.PlainAuth("", "user", "secret", "127.0.0.1")))
	require.NoError(t, c.Mail("a@example.com"))
	require.NoError(t, c.Rcpt("b@example.com"))
	w, err := c.Data()
	require.NoError(t, err)
	_, err = w.Write([]byte(body))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, c.Quit())
	assert.Len(t, s.Messages(), 1)

	c, err = smtp.Dial(s.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.StartTLS(&tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}))
	assert.Error(t, c.Auth(smtp.PlainAuth("", "user", "wrong", "127.0.0.1")))
}

// The OnMessage hook runs when the message is stored and before the
// client hears the 250: while it blocks, the message is there and the
// client still waits.
func TestOnMessageRunsBeforeTheReply(t *testing.T) {
	t.Parallel()
	s := smtptest.Start(t, smtptest.Options{})
	got := make(chan smtptest.Message)
	release := make(chan struct{})
	s.OnMessage(func(m smtptest.Message) {
		got <- m
		<-release
	})

	sent := make(chan error, 1)
	go func() { sent <- smtp.SendMail(s.Addr(), nil, "a@example.com", []string{"b@example.com"}, []byte(body)) }()
	var m smtptest.Message
	select {
	case m = <-got:
	case err := <-sent:
		t.Fatalf("SendMail returned before the hook ran: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the hook was not called")
	}
	assert.Equal(t, "a@example.com", m.From)
	assert.Equal(t, []string{"b@example.com"}, m.To)
	assert.Contains(t, string(m.Data), "Subject: hi\r\n")
	assert.Len(t, s.Messages(), 1, "stored before the hook")
	select {
	case err := <-sent:
		t.Fatalf("the client was answered while the hook ran: %v", err)
	default: // the reply is written only after the hook returns
	}
	close(release)
	require.NoError(t, <-sent)

	// A hang-up also comes after the hook; a refused message is not
	// stored and does not call it.
	var calls atomic.Int32
	s.OnMessage(func(smtptest.Message) { calls.Add(1) })
	s.HangUpAfterDATA(1)
	assert.Error(t, smtp.SendMail(s.Addr(), nil, "a@example.com", []string{"b@example.com"}, []byte(body)))
	s.FailDATA(1, 554)
	assert.Error(t, smtp.SendMail(s.Addr(), nil, "a@example.com", []string{"b@example.com"}, []byte(body)))
	assert.EqualValues(t, 1, calls.Load())
	assert.Len(t, s.Messages(), 2)

	s.OnMessage(nil)
	require.NoError(t, smtp.SendMail(s.Addr(), nil, "a@example.com", []string{"b@example.com"}, []byte(body)))
	assert.EqualValues(t, 1, calls.Load(), "removed")
	assert.Len(t, s.Messages(), 3)
}
