package metrics_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/metrics"
)

func TestMailEventMetrics(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	var calls atomic.Int32
	m.WatchMailLastDay(func(context.Context) ([]metrics.AccountMail, error) {
		calls.Add(1)
		return []metrics.AccountMail{{Account: "acc-1", Sent: 1000, Complaints: 4}, {Account: "acc-2", Sent: 10}}, nil
	})
	m.MailReport("ses", "delivered")
	m.MailReport("ses", "delivered")
	m.MailReport("mailgun", "complained")
	m.MailReportUnknown("postmark")
	m.MailEventRefused("sendgrid", metrics.MailRefusedSignature)

	body := scrape(t, m)
	for _, line := range []string{
		`touchpoint_mail_reports_total{outcome="delivered",provider="ses"} 2`,
		`touchpoint_mail_reports_total{outcome="complained",provider="mailgun"} 1`,
		`touchpoint_mail_reports_unknown_total{provider="postmark"} 1`,
		`touchpoint_mail_event_refusals_total{provider="sendgrid",reason="signature"} 1`,
		`touchpoint_mail_sent_24h{account="acc-1"} 1000`,
		`touchpoint_mail_complaints_24h{account="acc-1"} 4`,
		`touchpoint_mail_sent_24h{account="acc-2"} 10`,
		`touchpoint_mail_complaints_24h{account="acc-2"} 0`,
	} {
		assert.Contains(t, body, line+"\n")
	}
	scrape(t, m)
	assert.EqualValues(t, 1, calls.Load(), "the day's mail is counted at most every MailReadEvery")

	var none *metrics.Set // records nothing
	none.MailReport("ses", "delivered")
	none.MailReportUnknown("ses")
	none.MailEventRefused("ses", metrics.MailRefusedTopic)
	none.WatchMailLastDay(nil)
}

func TestMailLastDayUnreadable(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	m.WatchMailLastDay(func(context.Context) ([]metrics.AccountMail, error) { return nil, context.DeadlineExceeded })
	body := scrape(t, m)
	assert.NotContains(t, body, "touchpoint_mail_sent_24h{")
	assert.Contains(t, body, "go_goroutines", "the scrape still serves the rest")
}
