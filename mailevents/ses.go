package mailevents

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS signature version 1 is SHA1withRSA
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/touchpoint/touchpoint/internal/settings"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/mail"
)

// sesProvider is Amazon SES, whose notifications SNS delivers, as the
// registry knows it.
var sesProvider = Provider{
	Name:     SES,
	Settings: []settings.Var{{Name: "TOUCHPOINT_SES_TOPIC_ARNS"}},
	Verifier: func(get func(string) string) (Verifier, error) {
		var topics []string
		for _, arn := range strings.Split(get("TOUCHPOINT_SES_TOPIC_ARNS"), ",") {
			if arn = strings.TrimSpace(arn); arn == "" {
				continue
			}
			if !strings.HasPrefix(arn, "arn:aws:sns:") && !strings.HasPrefix(arn, "arn:aws-cn:sns:") &&
				!strings.HasPrefix(arn, "arn:aws-us-gov:sns:") {
				return nil, fmt.Errorf("TOUCHPOINT_SES_TOPIC_ARNS: %q is not an SNS topic ARN (arn:aws:sns:region:account:topic)", arn)
			}
			topics = append(topics, arn)
		}
		if len(topics) == 0 {
			return nil, nil
		}
		return &SESVerifier{Topics: topics}, nil
	},
	// SES's message tags, which its notifications carry under mail.tags.
	Tag: mail.Tag{Header: "X-SES-MESSAGE-TAGS", Value: func(id string) string { return MetadataKey + "=" + id }},
}

// ErrUnavailable: a verified SNS message needed a call to SNS (its
// certificate, the confirmation of a subscription) that failed; SNS
// retries.
var ErrUnavailable = errors.New("SNS unavailable")

// SESVerifier reads Amazon SES notifications delivered by SNS. Each SNS
// message is signed (signature version 1: SHA1withRSA, 2: SHA256withRSA)
// with the key of the certificate at its SigningCertURL, which must be
// https on an SNS host (sns.<region>.amazonaws.com); certificates are
// fetched once and kept. Only messages of the listed topics are taken,
// and a message of another topic is refused before anything is fetched. A
// SubscriptionConfirmation is confirmed by a GET of its SubscribeURL,
// under the same host rule.
type SESVerifier struct {
	// Topics are the topic ARNs accepted (TOUCHPOINT_SES_TOPIC_ARNS).
	Topics []string
	// Client fetches certificates and confirms subscriptions; nil: a
	// client with a 10 s timeout that follows no redirect.
	Client *http.Client
	// SNSHost decides whether a host may serve certificates and
	// subscriptions; nil: IsSNSHost. Tests put their own server here.
	SNSHost func(host string) bool

	mu    sync.Mutex
	certs map[string]*rsa.PublicKey
}

// Provider is "ses".
func (*SESVerifier) Provider() string { return SES }

var snsHost = regexp.MustCompile(`^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$`)

// IsSNSHost is the rule for the hosts of SigningCertURL and SubscribeURL:
// sns.<region>.amazonaws.com (.com.cn in China).
func IsSNSHost(host string) bool { return snsHost.MatchString(host) }

// maxCerts bounds the certificate cache; SNS signs with one certificate
// per region at a time.
const maxCerts = 64

// snsMessage is the envelope SNS posts.
type snsMessage struct {
	Type             string `json:"Type"`
	MessageID        string `json:"MessageId"`
	Token            string `json:"Token"`
	TopicArn         string `json:"TopicArn"`
	Subject          *string
	Message          string `json:"Message"`
	SubscribeURL     string `json:"SubscribeURL"`
	Timestamp        string `json:"Timestamp"`
	SignatureVersion string `json:"SignatureVersion"`
	Signature        string `json:"Signature"`
	SigningCertURL   string `json:"SigningCertURL"`
}

// stringToSign is the text SNS signs: the fields of the message type, in
// this order, each as "Name\nvalue\n".
func (m snsMessage) stringToSign() string {
	var b strings.Builder
	add := func(k, v string) { b.WriteString(k + "\n" + v + "\n") }
	add("Message", m.Message)
	add("MessageId", m.MessageID)
	if m.Type == "Notification" {
		if m.Subject != nil {
			add("Subject", *m.Subject)
		}
	} else {
		add("SubscribeURL", m.SubscribeURL)
	}
	add("Timestamp", m.Timestamp)
	if m.Type != "Notification" {
		add("Token", m.Token)
	}
	add("TopicArn", m.TopicArn)
	add("Type", m.Type)
	return b.String()
}

// Read verifies the SNS message and reads the SES notification in it,
// or confirms a subscription.
func (v *SESVerifier) Read(ctx context.Context, _ http.Header, body []byte) (Batch, error) {
	var m snsMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return Batch{}, fmt.Errorf("%w: the body is not an SNS message", ErrSignature)
	}
	switch m.Type {
	case "Notification", "SubscriptionConfirmation", "UnsubscribeConfirmation":
	default:
		return Batch{}, fmt.Errorf("%w: unknown SNS message type", ErrSignature)
	}
	// The topic first: a message of a topic not listed costs no fetch of
	// its certificate, whoever sent it.
	if !slices.Contains(v.Topics, m.TopicArn) {
		return Batch{}, fmt.Errorf("%w: %s", ErrTopic, m.TopicArn)
	}
	if err := v.verify(ctx, m); err != nil {
		return Batch{}, err
	}
	switch m.Type {
	case "SubscriptionConfirmation":
		if err := v.confirm(ctx, m.SubscribeURL); err != nil {
			return Batch{}, err
		}
		return Batch{Note: "subscription to " + m.TopicArn + " confirmed"}, nil
	case "UnsubscribeConfirmation":
		return Batch{Note: "unsubscribed from " + m.TopicArn}, nil
	}
	r, err := sesReport(m)
	if err != nil {
		return Batch{}, err
	}
	if r.Outcome == "" {
		return Batch{Ignored: 1}, nil
	}
	return Batch{Reports: []Report{r}}, nil
}

// verify checks the signature with the certificate at SigningCertURL.
func (v *SESVerifier) verify(ctx context.Context, m snsMessage) error {
	var h crypto.Hash
	switch m.SignatureVersion {
	case "1":
		h = crypto.SHA1
	case "2":
		h = crypto.SHA256
	default:
		return fmt.Errorf("%w: SignatureVersion must be 1 or 2", ErrSignature)
	}
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil || len(sig) == 0 {
		return fmt.Errorf("%w: the signature is not base64", ErrSignature)
	}
	u, err := v.snsURL(m.SigningCertURL)
	if err != nil || !strings.HasSuffix(u.Path, ".pem") {
		return fmt.Errorf("%w: SigningCertURL must be an https .pem URL on an SNS host", ErrSignature)
	}
	key, err := v.cert(ctx, u.String())
	if err != nil {
		return err
	}
	var digest []byte
	if h == crypto.SHA1 {
		d := sha1.Sum([]byte(m.stringToSign())) //nolint:gosec // version 1
		digest = d[:]
	} else {
		d := sha256.Sum256([]byte(m.stringToSign()))
		digest = d[:]
	}
	if err := rsa.VerifyPKCS1v15(key, h, digest, sig); err != nil {
		return fmt.Errorf("%w: the signature does not match", ErrSignature)
	}
	return nil
}

// snsURL parses raw and checks it against the host rule: https, an SNS
// host, the default port, no credentials.
func (v *SESVerifier) snsURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	allowed := v.SNSHost
	if allowed == nil {
		allowed = IsSNSHost
		if u.Port() != "" && u.Port() != "443" {
			return nil, errors.New("not the https port")
		}
	}
	if u.Scheme != "https" || u.User != nil || !allowed(u.Hostname()) {
		return nil, errors.New("not https on an SNS host")
	}
	return u, nil
}

func (v *SESVerifier) client() *http.Client {
	if v.Client != nil {
		return v.Client
	}
	return &http.Client{Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// cert returns the key of the certificate at u, fetched once.
func (v *SESVerifier) cert(ctx context.Context, u string) (*rsa.PublicKey, error) {
	v.mu.Lock()
	k, ok := v.certs[u]
	v.mu.Unlock()
	if ok {
		return k, nil
	}
	body, err := v.get(ctx, u, 64<<10)
	if err != nil {
		return nil, fmt.Errorf("%w: signing certificate: %w", ErrUnavailable, err)
	}
	block, _ := pem.Decode(body)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%w: the signing certificate is not PEM", ErrSignature)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: the signing certificate does not parse", ErrSignature)
	}
	k, ok = c.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: the signing certificate has no RSA key", ErrSignature)
	}
	v.mu.Lock()
	if v.certs == nil || len(v.certs) >= maxCerts {
		v.certs = map[string]*rsa.PublicKey{}
	}
	v.certs[u] = k
	v.mu.Unlock()
	return k, nil
}

// confirm GETs a subscription's SubscribeURL.
func (v *SESVerifier) confirm(ctx context.Context, raw string) error {
	u, err := v.snsURL(raw)
	if err != nil {
		return fmt.Errorf("%w: SubscribeURL must be https on an SNS host", ErrMalformed)
	}
	if _, err := v.get(ctx, u.String(), 64<<10); err != nil {
		return fmt.Errorf("%w: confirm subscription: %w", ErrUnavailable, err)
	}
	return nil
}

func (v *SESVerifier) get(ctx context.Context, u string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := v.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered %d", resp.StatusCode)
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}

// sesNotification is the SES notification in an SNS message: the
// notifications of an identity (notificationType) or of a configuration
// set's event publishing (eventType).
type sesNotification struct {
	NotificationType string `json:"notificationType"`
	EventType        string `json:"eventType"`
	Bounce           *struct {
		BounceType        string `json:"bounceType"`
		BounceSubType     string `json:"bounceSubType"`
		Timestamp         string `json:"timestamp"`
		BouncedRecipients []struct {
			Status         string `json:"status"`
			DiagnosticCode string `json:"diagnosticCode"`
		} `json:"bouncedRecipients"`
	} `json:"bounce"`
	Complaint *struct {
		Timestamp             string `json:"timestamp"`
		ComplaintFeedbackType string `json:"complaintFeedbackType"`
	} `json:"complaint"`
	Delivery *struct {
		Timestamp string `json:"timestamp"`
	} `json:"delivery"`
	DeliveryDelay *struct {
		Timestamp string `json:"timestamp"`
		DelayType string `json:"delayType"`
	} `json:"deliveryDelay"`
	Mail struct {
		Timestamp string `json:"timestamp"`
		Headers   []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"headers"`
		CommonHeaders struct {
			MessageID string `json:"messageId"`
		} `json:"commonHeaders"`
		Tags map[string][]string `json:"tags"`
	} `json:"mail"`
}

// sesReport maps an SES notification to a report; Outcome "" for the
// kinds that say nothing of delivery (sends, opens, clicks, …).
func sesReport(m snsMessage) (Report, error) {
	var n sesNotification
	if err := json.Unmarshal([]byte(m.Message), &n); err != nil {
		return Report{}, fmt.Errorf("%w: the SNS message holds no SES notification", ErrMalformed)
	}
	kind := n.NotificationType
	if kind == "" {
		kind = n.EventType
	}
	r := Report{Provider: SES, ID: m.MessageID}
	var at string
	switch {
	case kind == "Delivery" && n.Delivery != nil:
		r.Outcome, at = invite.MailDelivered, n.Delivery.Timestamp
	case kind == "Complaint" && n.Complaint != nil:
		r.Outcome, at = invite.MailComplained, n.Complaint.Timestamp
	case kind == "Bounce" && n.Bounce != nil:
		b := n.Bounce
		r.Outcome, at = invite.MailDeferred, b.Timestamp
		if b.BounceType == "Permanent" {
			r.Outcome = invite.MailBounced
		}
		parts := []string{b.BounceType + " " + b.BounceSubType}
		for _, rc := range b.BouncedRecipients {
			parts = append(parts, rc.Status, rc.DiagnosticCode)
		}
		r.Detail = detail(parts...)
	case kind == "DeliveryDelay" && n.DeliveryDelay != nil:
		r.Outcome, at = invite.MailDeferred, n.DeliveryDelay.Timestamp
		r.Detail = detail("delivery delay", n.DeliveryDelay.DelayType)
	case kind == "":
		return Report{}, fmt.Errorf("%w: the notification has no type", ErrMalformed)
	default:
		return Report{}, nil
	}
	if r.ID == "" {
		return Report{}, fmt.Errorf("%w: the SNS message has no MessageId", ErrMalformed)
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		if t, err = time.Parse(time.RFC3339Nano, m.Timestamp); err != nil {
			return Report{}, fmt.Errorf("%w: no time", ErrMalformed)
		}
	}
	r.At = t.UTC()
	refs := []string{}
	if tags := n.Mail.Tags[MetadataKey]; len(tags) > 0 {
		refs = append(refs, tags[0])
	}
	for _, h := range n.Mail.Headers {
		if strings.EqualFold(h.Name, "Message-ID") {
			refs = append(refs, h.Value)
		}
	}
	refs = append(refs, n.Mail.CommonHeaders.MessageID)
	target(&r, refs...)
	return r, nil
}
