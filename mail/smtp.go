package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/touchpoint/touchpoint/senderr"
	"github.com/touchpoint/touchpoint/text"
)

// SMTPOptions tunes an SMTP sender; zero values take the defaults.
type SMTPOptions struct {
	// Timeout bounds the connection and each command (default 30s).
	Timeout time.Duration
	// TLSConfig for STARTTLS and smtps (default: system roots, the URL's host).
	TLSConfig *tls.Config
	// HELO is the name to greet with (default: the machine's host name).
	HELO string
	// Tags are the headers each message carries for the mail providers'
	// reports.
	Tags []Tag
}

// SMTP sends over SMTP, one connection per message.
type SMTP struct {
	sender
	host string
	opts []gomail.Option
}

// NewSMTP parses smtp://[user:pass@]host[:port] (STARTTLS when the server
// offers it; port 25 by default) or smtps://[user:pass@]host[:port]
// (implicit TLS; port 465). With user info it authenticates, preferring
// mechanisms that keep the password off an unencrypted connection.
//
// smtp://…?starttls=required refuses to send in clear: a server that does
// not offer STARTTLS — or a man in the middle that strips the offer —
// gets no message (a transient error, for ops to fix). The default,
// starttls=opportunistic, upgrades when offered.
func NewSMTP(rawURL, from string, o SMTPOptions) (*SMTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
		return nil, errors.New("SMTP URL must look like smtp://user:pass@host:587 or smtps://host:465")
	}
	policy, err := startTLSPolicy(u)
	if err != nil {
		return nil, err
	}
	snd, err := newSender(from, o.Tags)
	if err != nil {
		return nil, err
	}
	port := 25
	if u.Scheme == "smtps" {
		port = 465
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("SMTP URL: bad port %q", p)
		}
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.TLSConfig != nil {
		tlsConfig = o.TLSConfig.Clone()
	}
	if tlsConfig.ServerName == "" {
		tlsConfig.ServerName = u.Hostname()
	}
	opts := []gomail.Option{gomail.WithPort(port), gomail.WithTimeout(o.Timeout), gomail.WithTLSConfig(tlsConfig)}
	if u.Scheme == "smtps" {
		opts = append(opts, gomail.WithSSL())
	} else {
		opts = append(opts, gomail.WithTLSPolicy(policy))
	}
	if user := u.User.Username(); user != "" {
		pass, _ := u.User.Password()
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(user), gomail.WithPassword(pass))
	}
	if o.HELO != "" {
		opts = append(opts, gomail.WithHELO(o.HELO))
	}
	return &SMTP{sender: snd, host: u.Hostname(), opts: opts}, nil
}

// startTLSPolicy reads the URL's starttls parameter, its only one.
func startTLSPolicy(u *url.URL) (gomail.TLSPolicy, error) {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return 0, errors.New("SMTP URL: malformed query")
	}
	policy := gomail.TLSOpportunistic
	for k, v := range q {
		switch {
		case k != "starttls":
			return 0, fmt.Errorf("SMTP URL: unknown parameter %q (only starttls=required|opportunistic)", k)
		case u.Scheme == "smtps":
			return 0, errors.New("SMTP URL: starttls applies to smtp://; smtps:// is encrypted from the start")
		case len(v) == 1 && v[0] == "required":
			policy = gomail.TLSMandatory
		case len(v) == 1 && v[0] == "opportunistic":
		default:
			return 0, errors.New("SMTP URL: starttls must be required or opportunistic")
		}
	}
	return policy, nil
}

// Send delivers m in one SMTP transaction.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := s.build(m)
	if err != nil {
		return err
	}
	c, err := gomail.NewClient(s.host, s.opts...)
	if err != nil {
		return &senderr.Error{Kind: senderr.Transient, Text: "smtp client: " + err.Error(), Err: err}
	}
	err = c.DialAndSendWithContext(ctx, msg)
	if err == nil || msg.IsDelivered() {
		return nil // a failed RSET or QUIT after the server took the message does not matter
	}
	return classify(err, m.To)
}

// classify turns a go-mail error into a *senderr.Error without the
// address.
func classify(err error, rcpt string) *senderr.Error {
	e := &senderr.Error{Kind: senderr.Transient, Err: err}
	var tpe *textproto.Error
	if errors.As(err, &tpe) {
		e.Code = tpe.Code
	}
	msg := err.Error()
	var se *gomail.SendError
	if errors.As(err, &se) {
		e.Code = se.ErrorCode()
		msg = se.Error()
		// go-mail appends the recipients and the message ID; drop them.
		if i := strings.Index(msg, ", affected recipient(s):"); i >= 0 {
			msg = msg[:i]
		} else if i := strings.Index(msg, ", affected message ID:"); i >= 0 {
			msg = msg[:i]
		}
		switch se.Reason {
		case gomail.ErrSMTPRcptTo, gomail.ErrSMTPData, gomail.ErrSMTPDataClose:
			if e.Code >= 500 {
				e.Kind = senderr.Permanent
				if se.Reason == gomail.ErrSMTPRcptTo {
					e.Recipient = senderr.RecipientRefused
				}
			}
		}
		if se.Reason == gomail.ErrSMTPDataClose && e.Code == 0 {
			// The whole message went out but no reply came back.
			e.Kind = senderr.Uncertain
		}
	}
	// The server's reply, one clean line (text.Diagnostic), its echo of
	// the address masked.
	e.Text = "smtp: " + text.Clean(text.Diagnostic, redact(msg, rcpt))
	return e
}
