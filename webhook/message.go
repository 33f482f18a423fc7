package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Event types a webhook endpoint can subscribe to; a message's "type".
const (
	InviteScheduled    = "invite.scheduled"
	InviteSent         = "invite.sent"
	InviteSkipped      = "invite.skipped"
	InviteFailed       = "invite.failed"
	InviteCancelled    = "invite.cancelled"
	ReminderSent       = "reminder.sent"
	ReviewCreated      = "review.created"
	ReviewUpdated      = "review.updated"
	SuppressionCreated = "suppression.created"
)

// EventTypes lists every event type in a stable order, for validating an
// endpoint's "events" and for documentation. The slice is the caller's.
func EventTypes() []string {
	return []string{
		InviteScheduled, InviteSent, InviteSkipped, InviteFailed, InviteCancelled,
		ReminderSent, ReviewCreated, ReviewUpdated, SuppressionCreated,
	}
}

// ValidEventType reports whether t is one of EventTypes (exact match).
func ValidEventType(t string) bool {
	return slices.Contains(EventTypes(), t)
}

// TimeLayout is how every time in a message is written: ISO 8601 in UTC
// with exactly three fractional digits, as everywhere in the API.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Message is the body of one webhook: {"type", "timestamp", "data"}.
// Marshal it once, store the bytes, and send those same bytes on every
// attempt: the signature covers them exactly.
type Message struct {
	// Type is one of the event type constants; it must suit Data.
	Type string
	// Timestamp is when the change happened (not when it is delivered).
	Timestamp time.Time
	// Data is one of InviteData, ReminderData, ReviewData or
	// SuppressionData. Only these types fit, so no payload can carry a
	// field the customer's contact details could be put in.
	Data Payload
}

// Payload is implemented only by this package's data types.
type Payload interface {
	// fits reports whether the payload belongs with the event type.
	fits(eventType string) bool
}

// MarshalJSON checks that the type is known and suits the data, and writes
// the timestamp in TimeLayout.
func (m Message) MarshalJSON() ([]byte, error) {
	switch {
	case !ValidEventType(m.Type):
		return nil, fmt.Errorf("webhook message: unknown type %q", m.Type)
	case m.Data == nil || isNilPointer(m.Data):
		return nil, fmt.Errorf("webhook message %s: no data", m.Type)
	case !m.Data.fits(m.Type):
		return nil, fmt.Errorf("webhook message %s: data of type %T does not fit", m.Type, m.Data)
	case m.Timestamp.IsZero():
		return nil, fmt.Errorf("webhook message %s: no timestamp", m.Type)
	}
	return json.Marshal(struct {
		Type      string  `json:"type"`
		Timestamp stamp   `json:"timestamp"`
		Data      Payload `json:"data"`
	}{m.Type, stamp(m.Timestamp), m.Data})
}

// InviteData is the payload of the invite.* types: the invite's state as
// GET /events/{id} shows it. Empty strings and zero times are written as
// null.
type InviteData struct {
	EventID     string
	EventTypeID string
	ChannelID   string
	// CustomerReference is the shop's own reference for the customer,
	// when the event had one.
	CustomerReference string
	Status            string // scheduled, sent, skipped, failed, cancelled
	Reason            string // why skipped or failed
	Medium            string // email or sms, once known
	ScheduledFor      time.Time
	SentAt            time.Time
}

func (InviteData) fits(t string) bool { return strings.HasPrefix(t, "invite.") }

// MarshalJSON writes camelCase names and nulls for absent values.
func (d InviteData) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		EventID           string  `json:"eventId"`
		EventTypeID       string  `json:"eventTypeId"`
		ChannelID         string  `json:"channelId"`
		CustomerReference *string `json:"customerReference"`
		Status            string  `json:"status"`
		Reason            *string `json:"reason"`
		Medium            *string `json:"medium"`
		ScheduledFor      *stamp  `json:"scheduledFor"`
		SentAt            *stamp  `json:"sentAt"`
	}{
		d.EventID, d.EventTypeID, d.ChannelID, optString(d.CustomerReference),
		d.Status, optString(d.Reason), optString(d.Medium), optTime(d.ScheduledFor), optTime(d.SentAt),
	})
}

// ReminderData is the payload of reminder.sent: the reminder of one
// event's invite. Empty strings and zero times are written as null.
type ReminderData struct {
	EventID           string
	EventTypeID       string
	ChannelID         string
	CustomerReference string
	Status            string // sent
	Medium            string
	ScheduledFor      time.Time
	SentAt            time.Time
}

func (ReminderData) fits(t string) bool { return strings.HasPrefix(t, "reminder.") }

// MarshalJSON writes camelCase names and nulls for absent values.
func (d ReminderData) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		EventID           string  `json:"eventId"`
		EventTypeID       string  `json:"eventTypeId"`
		ChannelID         string  `json:"channelId"`
		CustomerReference *string `json:"customerReference"`
		Status            string  `json:"status"`
		Medium            *string `json:"medium"`
		ScheduledFor      *stamp  `json:"scheduledFor"`
		SentAt            *stamp  `json:"sentAt"`
	}{
		d.EventID, d.EventTypeID, d.ChannelID, optString(d.CustomerReference),
		d.Status, optString(d.Medium), optTime(d.ScheduledFor), optTime(d.SentAt),
	})
}

// ReviewData is the payload of review.created and review.updated. The
// comment is the customer's free text, sent because it is the review.
type ReviewData struct {
	ReviewID          string
	EventID           string
	EventTypeID       string
	ChannelID         string
	CustomerReference string // null when empty
	Rating            int
	Comment           string // "" when none was given
	Locale            string
}

func (ReviewData) fits(t string) bool { return strings.HasPrefix(t, "review.") }

// MarshalJSON writes camelCase names; only the customer reference can be
// null.
func (d ReviewData) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ReviewID          string  `json:"reviewId"`
		EventID           string  `json:"eventId"`
		EventTypeID       string  `json:"eventTypeId"`
		ChannelID         string  `json:"channelId"`
		CustomerReference *string `json:"customerReference"`
		Rating            int     `json:"rating"`
		Comment           string  `json:"comment"`
		Locale            string  `json:"locale"`
	}{
		d.ReviewID, d.EventID, d.EventTypeID, d.ChannelID, optString(d.CustomerReference),
		d.Rating, d.Comment, d.Locale,
	})
}

// SuppressionData is the payload of suppression.created. The suppressed
// address itself is the customer's email or mobile and is never sent: the
// event ID and customer reference (when the suppression came from an
// event, e.g. an unsubscribe link) let the shop find the customer in its
// own records.
type SuppressionData struct {
	Medium            string // email or sms
	Reason            string // unsubscribed, bounced, complained, manual
	EventID           string // null when empty
	CustomerReference string // null when empty
}

func (SuppressionData) fits(t string) bool { return strings.HasPrefix(t, "suppression.") }

// MarshalJSON writes camelCase names and nulls for absent values.
func (d SuppressionData) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Medium            string  `json:"medium"`
		Reason            string  `json:"reason"`
		EventID           *string `json:"eventId"`
		CustomerReference *string `json:"customerReference"`
	}{d.Medium, d.Reason, optString(d.EventID), optString(d.CustomerReference)})
}

func isNilPointer(p Payload) bool {
	v := reflect.ValueOf(p)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// stamp is a time written in TimeLayout.
type stamp time.Time

func (t stamp) MarshalJSON() ([]byte, error) {
	tt := time.Time(t).UTC()
	if y := tt.Year(); y < 0 || y > 9999 {
		return nil, errors.New("webhook message: time outside years 0-9999")
	}
	return []byte(`"` + tt.Format(TimeLayout) + `"`), nil
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optTime(t time.Time) *stamp {
	if t.IsZero() {
		return nil
	}
	s := stamp(t)
	return &s
}
