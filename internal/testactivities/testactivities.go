// Package testactivities wires the real invite activities as the tests
// that run them need: a fresh migrated database, a real SMTP server, the
// built-in templates and signed links.
package testactivities

import (
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/activities"
	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/mail"
	"github.com/touchpoint/touchpoint/signedlink"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/storeset"
	"github.com/touchpoint/touchpoint/templates"
)

// FeedbackURL and UnsubscribeURL are where the rig's signed links point.
const (
	FeedbackURL    = "https://touchpoint.example/feedback"
	UnsubscribeURL = "https://touchpoint.example/unsubscribe"
)

// Rig is the activities and the parts they were given.
type Rig struct {
	DB    *sqlx.DB
	Store *store.Store
	SMTP  *smtptest.Server
	// Feedback and Unsubscribe sign the links of the messages.
	Feedback, Unsubscribe *signedlink.Links
	Acts                  *activities.Activities
}

// New wires the activities to a fresh database and a real SMTP server
// that accepts everything. They send as invites@touchpoint.example, give
// up on the server after 5 s, log nowhere and send no SMS.
func New(tb testing.TB) *Rig {
	tb.Helper()
	r := &Rig{DB: testdb.New(tb), SMTP: smtptest.Start(tb, smtptest.Options{})}
	r.Store = storeset.New(r.DB, "P7D")
	mailer, err := mail.NewSMTP(r.SMTP.URL(), "Touchpoint <invites@touchpoint.example>", mail.SMTPOptions{Timeout: 5 * time.Second})
	require.NoError(tb, err)
	tpl, err := templates.New()
	require.NoError(tb, err)
	smsTpl, err := templates.NewSMS()
	require.NoError(tb, err)
	r.Feedback, err = signedlink.New(FeedbackURL, []byte("a feedback key of 32 bytes......"))
	require.NoError(tb, err)
	r.Unsubscribe, err = signedlink.New(UnsubscribeURL, []byte("an unsubscribe key of 32 bytes.."))
	require.NoError(tb, err)
	r.Acts = &activities.Activities{Invites: r.Store.Invites, TemplateStore: r.Store.Templates, Suppressions: r.Store.Suppressions, Accounts: r.Store.Accounts, Mailer: mailer, Templates: tpl, SMSTemplates: smsTpl,
		Feedback: r.Feedback, Unsubscribe: r.Unsubscribe}
	return r
}
