// Package smtptest is a real SMTP server for tests: it listens on
// 127.0.0.1, speaks enough ESMTP for a mail client (EHLO/HELO, STARTTLS,
// AUTH PLAIN, MAIL, RCPT, DATA, RSET, NOOP, QUIT), keeps what it accepts,
// and can be told to refuse recipients or messages, to hang up after a
// message, or to go away and come back (an outage). OnMessage lets a test
// act in the moment a message is taken but not yet acknowledged.
package smtptest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/touchpoint/touchpoint/internal/freeport"
)

// Options configures a Server; the zero value is plain SMTP without auth.
type Options struct {
	// TLS, when set, is offered with STARTTLS, or used from the first
	// byte with ImplicitTLS (smtps).
	TLS         *tls.Config
	ImplicitTLS bool
	// Username and Password, when set, are required (AUTH PLAIN) before MAIL.
	Username, Password string
}

// Message is one accepted message.
type Message struct {
	From string
	To   []string
	Data []byte // as received, dot-unstuffed, CRLF line ends
}

// Parse parses Data as an RFC 5322 message.
func (m Message) Parse() (*mail.Message, error) {
	return mail.ReadMessage(bytes.NewReader(m.Data))
}

// Server is a running SMTP server. Its methods are safe for concurrent use.
type Server struct {
	opts Options
	addr string

	mu        sync.Mutex
	ln        net.Listener
	conns     map[net.Conn]struct{}
	msgs      []Message
	rcptFails []int // answer the next RCPTs with these codes
	dataFails []int // answer the next DATA ends with these codes
	hangUps   int   // close the connection after the next message bodies, without a reply
	onMessage func(Message)
	wg        sync.WaitGroup
}

// Start starts a server on an ephemeral port and stops it when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s := &Server{opts: opts, conns: map[net.Conn]struct{}{}}
	if err := s.listen("127.0.0.1:0"); err != nil {
		tb.Fatalf("smtptest: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// Addr is host:port; it stays the same across Stop and Restart.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// URL is the server's TOUCHPOINT_SMTP_URL, with the credentials if any.
func (s *Server) URL() string {
	scheme := "smtp"
	if s.opts.ImplicitTLS {
		scheme = "smtps"
	}
	userinfo := ""
	if s.opts.Username != "" {
		userinfo = s.opts.Username + ":" + s.opts.Password + "@"
	}
	return scheme + "://" + userinfo + s.Addr()
}

// Messages returns a copy of the messages accepted so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// FailRCPT answers the next n RCPT commands with code (e.g. 451, 550).
func (s *Server) FailRCPT(n, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.rcptFails = append(s.rcptFails, code)
	}
}

// FailDATA answers the end of the next n message bodies with code.
func (s *Server) FailDATA(n, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.dataFails = append(s.dataFails, code)
	}
}

// HangUpAfterDATA closes the connection after the next n message bodies
// instead of answering: the client cannot know whether they were taken.
// The messages are kept, as a real server may have queued them.
func (s *Server) HangUpAfterDATA(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hangUps += n
}

// OnMessage sets f (nil: none) to be called with each message the server
// takes, after it is stored (Messages includes it) and before the client
// is answered — the 250 reply, or the hang-up of HangUpAfterDATA. The
// client waits for the reply meanwhile, so a test can kill the sender in
// the moment the mail is delivered but the sender has not heard so. f runs
// on the connection's goroutine, one call per message (concurrent for
// concurrent connections); it must not call Stop, which waits for it.
func (s *Server) OnMessage(f func(Message)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onMessage = f
}

// Stop closes the listener and every connection and waits for them: the
// server is down (connections are refused) until Restart. Its port is
// kept from anyone's ":0" bind meanwhile (freeport), so Restart can
// listen there again.
func (s *Server) Stop() {
	s.mu.Lock()
	stopped := s.ln != nil
	if stopped {
		s.ln.Close()
		s.ln = nil
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	if stopped {
		_ = freeport.Reserve(s.Addr()) // a failure shows at Restart
	}
}

// Restart listens again on the same address after Stop.
func (s *Server) Restart() error {
	s.mu.Lock()
	up := s.ln != nil
	s.mu.Unlock()
	if up {
		return errors.New("smtptest: already running")
	}
	return s.listen(s.Addr())
}

func (s *Server) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if s.opts.ImplicitTLS {
		ln = tls.NewListener(ln, s.opts.TLS)
	}
	s.mu.Lock()
	s.ln, s.addr = ln, ln.Addr().String()
	s.mu.Unlock()
	s.wg.Add(1)
	go s.accept(ln)
	return nil
}

func (s *Server) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.ln != ln { // stopped meanwhile
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close() // the raw connection: Stop closes it to cut a TLS session too
		}()
	}
}

// pop takes the next scripted answer, 0 when there is none.
func (s *Server) pop(q *[]int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(*q) == 0 {
		return 0
	}
	code := (*q)[0]
	*q = (*q)[1:]
	return code
}

func (s *Server) takeHangUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hangUps == 0 {
		return false
	}
	s.hangUps--
	return true
}

// session is one connection's state.
type session struct {
	conn    net.Conn
	r       *bufio.Reader
	tls     bool
	authed  bool
	from    string
	to      []string
	greeted bool
}

func (se *session) reply(format string, args ...any) error {
	se.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := fmt.Fprintf(se.conn, format+"\r\n", args...)
	return err
}

func (se *session) line() (string, error) {
	se.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	l, err := se.r.ReadString('\n')
	return strings.TrimRight(l, "\r\n"), err
}

func (s *Server) serve(c net.Conn) {
	se := &session{conn: c, r: bufio.NewReader(c), tls: s.opts.ImplicitTLS}
	if se.reply("220 smtptest ESMTP ready") != nil {
		return
	}
	for {
		l, err := se.line()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(l, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			se.greeted = true
			ext := []string{"smtptest", "8BITMIME", "ENHANCEDSTATUSCODES"}
			if s.opts.TLS != nil && !se.tls {
				ext = append(ext, "STARTTLS")
			}
			if s.opts.Username != "" {
				ext = append(ext, "AUTH PLAIN")
			}
			for i, e := range ext {
				sep := "-"
				if i == len(ext)-1 {
					sep = " "
				}
				err = se.reply("250%s%s", sep, e)
			}
		case "HELO":
			se.greeted = true
			err = se.reply("250 smtptest")
		case "STARTTLS":
			if s.opts.TLS == nil || se.tls {
				err = se.reply("502 5.5.1 STARTTLS not available")
				break
			}
			if err = se.reply("220 2.0.0 go ahead"); err != nil {
				return
			}
			tc := tls.Server(c, s.opts.TLS)
			tc.SetDeadline(time.Now().Add(10 * time.Second))
			if err := tc.Handshake(); err != nil {
				return
			}
			tc.SetDeadline(time.Time{})
			*se = session{conn: tc, r: bufio.NewReader(tc), tls: true} // RFC 3207: forget everything
		case "AUTH":
			err = s.auth(se, arg)
		case "MAIL":
			switch {
			case !se.greeted:
				err = se.reply("503 5.5.1 say EHLO first")
			case s.opts.Username != "" && !se.authed:
				err = se.reply("530 5.7.0 authentication required")
			default:
				se.from, se.to = path(arg), nil
				err = se.reply("250 2.1.0 ok")
			}
		case "RCPT":
			rcpt := path(arg)
			switch code := s.pop(&s.rcptFails); {
			case se.from == "":
				err = se.reply("503 5.5.1 MAIL first")
			case code != 0:
				err = se.reply("%d %s <%s>: %s", code, enhanced(code), rcpt, text(code))
			default:
				se.to = append(se.to, rcpt)
				err = se.reply("250 2.1.5 ok")
			}
		case "DATA":
			if len(se.to) == 0 {
				err = se.reply("503 5.5.1 RCPT first")
				break
			}
			if err = se.reply("354 end with <CRLF>.<CRLF>"); err != nil {
				return
			}
			var body bytes.Buffer
			for {
				l, err := se.line()
				if err != nil {
					return
				}
				if l == "." {
					break
				}
				body.WriteString(strings.TrimPrefix(l, ".") + "\r\n")
			}
			msg := Message{From: se.from, To: se.to, Data: body.Bytes()}
			se.from, se.to = "", nil
			if s.takeHangUp() {
				s.store(msg)
				return
			}
			if code := s.pop(&s.dataFails); code != 0 {
				err = se.reply("%d %s message refused: %s", code, enhanced(code), text(code))
				break
			}
			n := s.store(msg)
			err = se.reply("250 2.0.0 ok: queued as %d", n)
		case "RSET":
			se.from, se.to = "", nil
			err = se.reply("250 2.0.0 ok")
		case "NOOP":
			err = se.reply("250 2.0.0 ok")
		case "QUIT":
			se.reply("221 2.0.0 bye")
			return
		default:
			err = se.reply("502 5.5.2 command not recognised")
		}
		if err != nil {
			return
		}
	}
}

// store keeps a message the server takes and calls the OnMessage hook
// (outside the lock, so it may use the server); it returns the number of
// messages taken so far.
func (s *Server) store(msg Message) int {
	s.mu.Lock()
	s.msgs = append(s.msgs, msg)
	n, hook := len(s.msgs), s.onMessage
	s.mu.Unlock()
	if hook != nil {
		hook(Message{From: msg.From, To: append([]string(nil), msg.To...), Data: bytes.Clone(msg.Data)})
	}
	return n
}

func (s *Server) auth(se *session, arg string) error {
	mech, initial, _ := strings.Cut(arg, " ")
	if s.opts.Username == "" || !strings.EqualFold(mech, "PLAIN") {
		return se.reply("504 5.5.4 mechanism not supported")
	}
	if initial == "" {
		if err := se.reply("334 "); err != nil {
			return err
		}
		l, err := se.line()
		if err != nil {
			return err
		}
		initial = l
	}
	raw, err := base64.StdEncoding.DecodeString(initial)
	parts := strings.Split(string(raw), "\x00")
	if err != nil || len(parts) != 3 || parts[1] != s.opts.Username || parts[2] != s.opts.Password {
		return se.reply("535 5.7.8 authentication failed")
	}
	se.authed = true
	return se.reply("235 2.7.0 authenticated")
}

// path extracts the address of "FROM:<a@b> SIZE=1" or "TO:<a@b>".
func path(arg string) string {
	_, rest, _ := strings.Cut(arg, ":")
	rest = strings.TrimSpace(rest)
	if i := strings.IndexByte(rest, '>'); strings.HasPrefix(rest, "<") && i > 0 {
		return rest[1:i]
	}
	addr, _, _ := strings.Cut(rest, " ")
	return addr
}

func enhanced(code int) string {
	switch {
	case code >= 500:
		return "5.1.1"
	case code >= 400:
		return "4.3.0"
	}
	return "2.0.0"
}

func text(code int) string {
	if code >= 500 {
		return "mailbox unavailable"
	}
	return "try again later"
}
