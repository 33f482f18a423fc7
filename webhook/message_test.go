package webhook_test

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/webhook"
)

func TestEventTypes(t *testing.T) {
	t.Parallel()
	want := []string{
		"invite.scheduled", "invite.sent", "invite.skipped", "invite.failed", "invite.cancelled",
		"invite.delivered", "invite.bounced", "invite.complained", "reminder.sent", "review.created", "review.updated", "review.moderated", "review.replied", "suppression.created",
	}
	assert.Equal(t, want, webhook.EventTypes())
	for _, typ := range want {
		assert.True(t, webhook.ValidEventType(typ), typ)
	}
	for _, typ := range []string{"", "invite", "invite.*", "Invite.Sent", "invite.sent ", "review.deleted"} {
		assert.False(t, webhook.ValidEventType(typ), typ)
	}

	// The slice is a copy: changing it changes nothing for the next caller.
	types := webhook.EventTypes()
	types[0] = "changed"
	assert.True(t, webhook.ValidEventType("invite.scheduled"))
}

func TestMessageJSON(t *testing.T) {
	t.Parallel()
	berlin := time.FixedZone("CET", 3600)
	at := time.Date(2026, 11, 22, 7, 0, 0, 123_987_000, berlin) // 06:00:00.123987 UTC
	sched := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		msg  webhook.Message
		want string
	}{
		{
			name: "invite scheduled, absent values null",
			msg: webhook.Message{Type: webhook.InviteScheduled, Timestamp: at, Data: webhook.InviteData{
				EventID: "evt-1", EventTypeID: "ety-1", ChannelID: "chl-1", Status: "scheduled",
				Medium: "email", ScheduledFor: sched,
			}},
			want: `{"type":"invite.scheduled","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"eventId":"evt-1","eventTypeId":"ety-1","channelId":"chl-1","customerReference":null,
				"status":"scheduled","reason":null,"medium":"email",
				"scheduledFor":"2026-11-29T06:00:00.000Z","sentAt":null}}`,
		},
		{
			name: "a reminder bounced, as the provider reported it",
			msg: webhook.Message{Type: webhook.InviteBounced, Timestamp: at, Data: webhook.DeliveryData{
				EventID: "evt-1", EventTypeID: "ety-1", ChannelID: "chl-1", CustomerReference: "C-7",
				Message: "reminder", Status: "bounced", Provider: "postmark", At: sched,
			}},
			want: `{"type":"invite.bounced","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"eventId":"evt-1","eventTypeId":"ety-1","channelId":"chl-1","customerReference":"C-7",
				"message":"reminder","status":"bounced","provider":"postmark","at":"2026-11-29T06:00:00.000Z"}}`,
		},
		{
			name: "invite skipped with a reason",
			msg: webhook.Message{Type: webhook.InviteSkipped, Timestamp: at, Data: webhook.InviteData{
				EventID: "evt-1", EventTypeID: "ety-1", ChannelID: "chl-1", CustomerReference: "C-42",
				Status: "skipped", Reason: "suppressed",
			}},
			want: `{"type":"invite.skipped","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"eventId":"evt-1","eventTypeId":"ety-1","channelId":"chl-1","customerReference":"C-42",
				"status":"skipped","reason":"suppressed","medium":null,"scheduledFor":null,"sentAt":null}}`,
		},
		{
			name: "reminder sent",
			msg: webhook.Message{Type: webhook.ReminderSent, Timestamp: at, Data: webhook.ReminderData{
				EventID: "evt-1", EventTypeID: "ety-1", ChannelID: "chl-1", CustomerReference: "C-42",
				Status: "sent", Medium: "sms", ScheduledFor: sched, SentAt: sched.Add(1500 * time.Millisecond),
			}},
			want: `{"type":"reminder.sent","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"eventId":"evt-1","eventTypeId":"ety-1","channelId":"chl-1","customerReference":"C-42",
				"status":"sent","medium":"sms","scheduledFor":"2026-11-29T06:00:00.000Z",
				"sentAt":"2026-11-29T06:00:01.500Z"}}`,
		},
		{
			name: "review with an empty comment",
			msg: webhook.Message{Type: webhook.ReviewCreated, Timestamp: at, Data: webhook.ReviewData{
				ReviewID: "rev-1", EventID: "evt-1", EventTypeID: "ety-1", ChannelID: "chl-1",
				Rating: 5, Locale: "de_DE",
			}},
			want: `{"type":"review.created","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"reviewId":"rev-1","eventId":"evt-1","eventTypeId":"ety-1","channelId":"chl-1",
				"customerReference":null,"rating":5,"comment":"","locale":"de_DE","products":[]}}`,
		},
		{
			name: "review updated, comment kept byte for byte",
			msg: webhook.Message{Type: webhook.ReviewUpdated, Timestamp: at, Data: webhook.ReviewData{
				ReviewID: "rev-1", EventID: "evt-1", EventTypeID: "ety-1", ChannelID: "chl-1",
				CustomerReference: "C-42", Rating: 2, Comment: `Zu spät "geliefert"`, Locale: "de",
			}},
			want: `{"type":"review.updated","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"reviewId":"rev-1","eventId":"evt-1","eventTypeId":"ety-1","channelId":"chl-1",
				"customerReference":"C-42","rating":2,"comment":"Zu spät \"geliefert\"","locale":"de","products":[]}}`,
		},
		{
			name: "review of products only: no shop rating, absent keys null",
			msg: webhook.Message{Type: webhook.ReviewCreated, Timestamp: at, Data: webhook.ReviewData{
				ReviewID: "rev-1", EventID: "evt-1", EventTypeID: "ety-1", ChannelID: "chl-1", Locale: "en",
				Products: []webhook.ProductRating{
					{ID: "prv-1", SKU: "SKU-1", GTIN: "4006381333931", Rating: 4, Comment: "</script>&]]>"},
					{ID: "prv-2", MPN: "M-2", Rating: 1},
				},
			}},
			want: `{"type":"review.created","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"reviewId":"rev-1","eventId":"evt-1","eventTypeId":"ety-1","channelId":"chl-1",
				"customerReference":null,"rating":null,"comment":"","locale":"en","products":[
				{"id":"prv-1","sku":"SKU-1","gtin":"4006381333931","mpn":null,"rating":4,"comment":"</script>&]]>"},
				{"id":"prv-2","sku":null,"gtin":null,"mpn":"M-2","rating":1,"comment":""}]}}`,
		},
		{
			name: "review reported",
			msg: webhook.Message{Type: webhook.ReviewModerated, Timestamp: at, Data: webhook.ModerationData{
				ReviewID: "rev-1", EventID: "evt-1", EventTypeID: "ety-1", ChannelID: "chl-1", CustomerReference: "C-42",
				Status: "reported", PreviousStatus: "published", Public: true, Action: "reported", Reason: "spam", By: "cli-1",
			}},
			want: `{"type":"review.moderated","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"reviewId":"rev-1","eventId":"evt-1","eventTypeId":"ety-1","channelId":"chl-1","customerReference":"C-42",
				"status":"reported","previousStatus":"published","public":true,"action":"reported","reason":"spam","note":null,"by":"cli-1"}}`,
		},
		{
			name: "review removed by the operator",
			msg: webhook.Message{Type: webhook.ReviewModerated, Timestamp: at, Data: webhook.ModerationData{
				ReviewID: "rev-1", EventID: "evt-1", EventTypeID: "ety-1", ChannelID: "chl-1",
				Status: "removed", PreviousStatus: "reported", Action: "removed", Note: "advertising", By: "operator",
			}},
			want: `{"type":"review.moderated","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"reviewId":"rev-1","eventId":"evt-1","eventTypeId":"ety-1","channelId":"chl-1","customerReference":null,
				"status":"removed","previousStatus":"reported","public":false,"action":"removed","reason":null,"note":"advertising","by":"operator"}}`,
		},
		{
			name: "reply set",
			msg: webhook.Message{Type: webhook.ReviewReplied, Timestamp: at, Data: webhook.ReplyData{
				ReviewID: "rev-1", EventID: "evt-1", EventTypeID: "ety-1", ChannelID: "chl-1",
				Text: "Thank you!", CreatedAt: sched, UpdatedAt: sched.Add(time.Second), By: "cli-1",
			}},
			want: `{"type":"review.replied","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"reviewId":"rev-1","eventId":"evt-1","eventTypeId":"ety-1","channelId":"chl-1","customerReference":null,
				"reply":{"text":"Thank you!","createdAt":"2026-11-29T06:00:00.000Z","updatedAt":"2026-11-29T06:00:01.000Z"},"by":"cli-1"}}`,
		},
		{
			name: "reply deleted",
			msg: webhook.Message{Type: webhook.ReviewReplied, Timestamp: at, Data: webhook.ReplyData{
				ReviewID: "rev-1", EventID: "evt-1", EventTypeID: "ety-1", ChannelID: "chl-1", By: "cli-1",
			}},
			want: `{"type":"review.replied","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"reviewId":"rev-1","eventId":"evt-1","eventTypeId":"ety-1","channelId":"chl-1","customerReference":null,
				"reply":null,"by":"cli-1"}}`,
		},
		{
			name: "manual suppression: no event",
			msg: webhook.Message{Type: webhook.SuppressionCreated, Timestamp: at, Data: webhook.SuppressionData{
				Medium: "email", Reason: "manual",
			}},
			want: `{"type":"suppression.created","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"medium":"email","reason":"manual","eventId":null,"customerReference":null}}`,
		},
		{
			name: "unsubscribe: the event and the reference",
			msg: webhook.Message{Type: webhook.SuppressionCreated, Timestamp: at, Data: &webhook.SuppressionData{
				Medium: "email", Reason: "unsubscribed", EventID: "evt-1", CustomerReference: "C-42",
			}},
			want: `{"type":"suppression.created","timestamp":"2026-11-22T06:00:00.123Z","data":{
				"medium":"email","reason":"unsubscribed","eventId":"evt-1","customerReference":"C-42"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(tt.msg)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
			assert.NotContains(t, string(got), "\n", "compact: the stored body is what is signed")

			// A pointer marshals the same.
			byPointer, err := json.Marshal(&tt.msg)
			require.NoError(t, err)
			assert.Equal(t, string(got), string(byPointer))
		})
	}
}

func TestMessageJSONRejects(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	invite := webhook.InviteData{EventID: "evt-1", Status: "sent"}
	tests := []struct {
		name string
		msg  webhook.Message
		want string
	}{
		{"unknown type", webhook.Message{Type: "invite.opened", Timestamp: at, Data: invite}, "unknown type"},
		{"empty type", webhook.Message{Timestamp: at, Data: invite}, "unknown type"},
		{"no data", webhook.Message{Type: webhook.InviteSent, Timestamp: at}, "no data"},
		{"nil data pointer", webhook.Message{Type: webhook.InviteSent, Timestamp: at, Data: (*webhook.InviteData)(nil)}, "no data"},
		{"invite data for a review", webhook.Message{Type: webhook.ReviewCreated, Timestamp: at, Data: invite}, "does not fit"},
		{"review data for an invite", webhook.Message{Type: webhook.InviteSent, Timestamp: at, Data: webhook.ReviewData{}}, "does not fit"},
		{"review data for a moderation", webhook.Message{Type: webhook.ReviewModerated, Timestamp: at, Data: webhook.ReviewData{}}, "does not fit"},
		{"moderation data for a reply", webhook.Message{Type: webhook.ReviewReplied, Timestamp: at, Data: webhook.ModerationData{}}, "does not fit"},
		{"reply data for a new review", webhook.Message{Type: webhook.ReviewCreated, Timestamp: at, Data: webhook.ReplyData{}}, "does not fit"},
		{"invite data for a bounce", webhook.Message{Type: webhook.InviteBounced, Timestamp: at, Data: invite}, "does not fit"},
		{"delivery data for a sent invite", webhook.Message{Type: webhook.InviteSent, Timestamp: at, Data: webhook.DeliveryData{}}, "does not fit"},
		{"suppression data for a reminder", webhook.Message{Type: webhook.ReminderSent, Timestamp: at, Data: webhook.SuppressionData{}}, "does not fit"},
		{"no timestamp", webhook.Message{Type: webhook.InviteSent, Data: invite}, "no timestamp"},
		{"year out of range", webhook.Message{Type: webhook.InviteSent, Timestamp: at.AddDate(9000, 0, 0), Data: invite}, "outside years"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := json.Marshal(tt.msg)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

// The payload types are the only values a Message can carry, so keeping
// contact details out of webhooks comes down to their fields. This guard
// fails when one gains a field that looks like one.
func TestPayloadsHaveNoContactFields(t *testing.T) {
	t.Parallel()
	contact := regexp.MustCompile(`(?i)e-?mail|name|address|addr|mobile|phone|street|city|zip|postal`)
	at := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	for _, p := range []webhook.Payload{webhook.InviteData{}, webhook.DeliveryData{}, webhook.ReminderData{}, webhook.ReviewData{},
		webhook.ModerationData{}, webhook.ReplyData{}, webhook.SuppressionData{}} {
		typ := reflect.TypeOf(p)
		for i := range typ.NumField() {
			f := typ.Field(i)
			assert.False(t, contact.MatchString(f.Name), "%s.%s", typ.Name(), f.Name)
			assert.NotEqual(t, reflect.Map, f.Type.Kind(), "%s.%s: a map could hold anything", typ.Name(), f.Name)
			assert.NotEqual(t, reflect.Interface, f.Type.Kind(), "%s.%s: an interface could hold anything", typ.Name(), f.Name)
		}
		// The JSON names are checked too: they are written by hand.
		var typ0 string
		for _, et := range webhook.EventTypes() {
			if _, err := json.Marshal(webhook.Message{Type: et, Timestamp: at, Data: p}); err == nil {
				typ0 = et
				break
			}
		}
		require.NotEmpty(t, typ0, "%T fits no event type", p)
		body, err := json.Marshal(webhook.Message{Type: typ0, Timestamp: at, Data: p})
		require.NoError(t, err)
		var decoded struct{ Data map[string]any }
		require.NoError(t, json.Unmarshal(body, &decoded))
		for key := range decoded.Data {
			assert.False(t, contact.MatchString(key), "%T: JSON key %q", p, key)
			assert.Equal(t, strings.ToLower(key[:1]), key[:1], "%T: camelCase key %q", p, key)
		}
	}
}
