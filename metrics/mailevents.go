package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/touchpoint/touchpoint/internal/memo"
)

// What the mail providers report of the messages their relays took
// (POST /mail-events/{provider}), counted by the API.

// Reasons of touchpoint_mail_event_refusals_total: why a request of a
// provider was refused.
const (
	MailRefusedUnconfigured = "unconfigured" // the provider is not configured (404)
	MailRefusedSignature    = "signature"    // no, or a bad, signature or credentials (401)
	MailRefusedReplay       = "replay"       // a once-signed value seen before (401)
	MailRefusedTopic        = "topic"        // an SNS topic not listed (403)
	MailRefusedMalformed    = "malformed"    // verified, but not what the provider sends (400)
	MailRefusedTooLarge     = "too_large"    // the body is too large (413)
	MailRefusedUnavailable  = "unavailable"  // SNS could not be reached to verify or confirm (503)
)

func newMailCounters() (reports, unknown, refusals *prometheus.CounterVec) {
	reports = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "touchpoint_mail_reports_total",
		Help: "Reports of the mail providers on Touchpoint's messages, by provider and outcome (delivered, bounced, complained, deferred); a report repeated by the provider counts again.",
	}, []string{"provider", "outcome"})
	unknown = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "touchpoint_mail_reports_unknown_total",
		Help: "Reports of the mail providers on messages Touchpoint does not know (not its own, or of an event deleted since), by provider; answered 200.",
	}, []string{"provider"})
	refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "touchpoint_mail_event_refusals_total",
		Help: "Requests to POST /mail-events/{provider} refused, by provider and reason (unconfigured, signature, replay, topic, malformed, too_large, unavailable).",
	}, []string{"provider", "reason"})
	return reports, unknown, refusals
}

// MailReport counts a provider's report on one of Touchpoint's messages.
func (s *Set) MailReport(provider, outcome string) {
	if s != nil {
		s.mailReports.WithLabelValues(provider, outcome).Inc()
	}
}

// MailReportUnknown counts a provider's report on a message Touchpoint
// does not know.
func (s *Set) MailReportUnknown(provider string) {
	if s != nil {
		s.mailUnknown.WithLabelValues(provider).Inc()
	}
}

// MailEventRefused counts a provider's request refused for reason (one
// of the MailRefused… reasons). provider must be one of the providers
// Touchpoint knows: it is a label.
func (s *Set) MailEventRefused(provider, reason string) {
	if s != nil {
		s.mailRefusals.WithLabelValues(provider, reason).Inc()
	}
}

// MailReadEvery is how often, at most, the mail of the last 24 hours is
// counted: a minute's delay is nothing to a day's rate.
const MailReadEvery = time.Minute

// AccountMail is an account's mail of the last 24 hours: the messages
// sent by email and the complaints received.
type AccountMail struct {
	Account          string
	Sent, Complaints int
}

// WatchMailLastDay exports, per account that sent or was complained
// about in the last 24 hours, touchpoint_mail_sent_24h and
// touchpoint_mail_complaints_24h, from which an alert computes the
// account's complaint rate. The label set is bounded by the accounts.
// lastDay, a count over a day of sends, is read at most every
// MailReadEvery; when it fails, no series is served (the scrape stays
// up, and TouchpointDatabaseUnreachable tells of the database).
func (s *Set) WatchMailLastDay(lastDay func(ctx context.Context) ([]AccountMail, error)) {
	if s == nil {
		return
	}
	s.reg.MustRegister(&mailCollector{read: memo.New(MailReadEvery, lastDay),
		sent: prometheus.NewDesc("touchpoint_mail_sent_24h",
			"Invites and reminders sent by email in the last 24 hours, by account.", []string{"account"}, nil),
		complaints: prometheus.NewDesc("touchpoint_mail_complaints_24h",
			"Spam complaints the mail providers reported in the last 24 hours, by account.", []string{"account"}, nil)})
}

type mailCollector struct {
	read             *memo.Func[[]AccountMail]
	sent, complaints *prometheus.Desc
}

func (c *mailCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.sent; ch <- c.complaints }

func (c *mailCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	accounts, err := c.read.Get(ctx)
	if err != nil {
		return
	}
	for _, a := range accounts {
		ch <- prometheus.MustNewConstMetric(c.sent, prometheus.GaugeValue, float64(a.Sent), a.Account)
		ch <- prometheus.MustNewConstMetric(c.complaints, prometheus.GaugeValue, float64(a.Complaints), a.Account)
	}
}
