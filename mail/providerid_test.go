package mail_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/smtptest"
	"github.com/touchpoint/touchpoint/mail"
)

// TestProviderMetadata: every message carries its ID in each tag the
// sender was given (the mail providers' forms of it are mailevents'), and
// ParseID reads the event back from any of its spellings.
func TestProviderMetadata(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t, smtptest.Options{})
	tag := mail.Tag{Header: "X-Test-Tag", Value: func(id string) string { return `{"id":"` + id + `"}` }}
	s, err := mail.NewSMTP(srv.URL(), from, mail.SMTPOptions{Tags: []mail.Tag{tag}})
	require.NoError(t, err)
	m := message()
	m.Reminder = true
	require.NoError(t, s.Send(t.Context(), m))
	msgs := srv.Messages()
	require.Len(t, msgs, 1)
	parsed, err := msgs[0].Parse()
	require.NoError(t, err)
	id := m.EventID + ".reminder"
	var tagged map[string]string
	require.NoError(t, json.Unmarshal([]byte(parsed.Header.Get("X-Test-Tag")), &tagged))
	assert.Equal(t, map[string]string{"id": id}, tagged)

	for _, spelling := range []string{parsed.Header.Get("Message-Id"), id, " <" + id + "@touchpoint.example> ", id + "@touchpoint.example"} {
		ev, reminder, ok := mail.ParseID(spelling)
		assert.True(t, ok, spelling)
		assert.Equal(t, m.EventID, ev, spelling)
		assert.True(t, reminder, spelling)
	}
	ev, reminder, ok := mail.ParseID("<" + m.EventID + "@touchpoint.example>")
	assert.True(t, ok)
	assert.Equal(t, m.EventID, ev)
	assert.False(t, reminder)

	for _, bad := range []string{"", "<>", "@x", "a b@x", `evt"1@x`, "evt-1\n@x",
		"883953f4-6105-42a2-a16a-77a8eac79483.reminder.reminder@x", string(make([]byte, 101))} {
		_, _, ok := mail.ParseID(bad)
		assert.False(t, ok, "%q", bad)
	}
}
