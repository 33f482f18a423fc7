package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// Event types a webhook endpoint can subscribe to; a message's "type".
const (
	InviteScheduled    = "invite.scheduled"
	InviteSent         = "invite.sent"
	InviteSkipped      = "invite.skipped"
	InviteFailed       = "invite.failed"
	InviteCancelled    = "invite.cancelled"
	InviteDelivered    = webhookdb.InviteDelivered
	InviteBounced      = webhookdb.InviteBounced
	InviteComplained   = webhookdb.InviteComplained
	ReminderSent       = "reminder.sent"
	ReviewCreated      = webhookdb.ReviewCreated
	ReviewUpdated      = webhookdb.ReviewUpdated
	ReviewModerated    = webhookdb.ReviewModerated
	ReviewReplied      = webhookdb.ReviewReplied
	SuppressionCreated = webhookdb.SuppressionCreated
)

// EventTypes lists every event type in a stable order, for validating an
// endpoint's "events" and for documentation. The slice is the caller's.
func EventTypes() []string {
	return []string{
		InviteScheduled, InviteSent, InviteSkipped, InviteFailed, InviteCancelled,
		InviteDelivered, InviteBounced, InviteComplained, ReminderSent, ReviewCreated, ReviewUpdated, ReviewModerated, ReviewReplied, SuppressionCreated,
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
	// Data is one of InviteData, DeliveryData, ReminderData, ReviewData,
	// ModerationData, ReplyData or SuppressionData. Only these types fit, so no payload can carry a
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

func (InviteData) fits(t string) bool { return strings.HasPrefix(t, "invite.") && !isDeliveryType(t) }

// isDeliveryType reports whether t is one of the types of DeliveryData.
func isDeliveryType(t string) bool {
	return t == InviteDelivered || t == InviteBounced || t == InviteComplained
}

// DeliveryData is the payload of invite.delivered, invite.bounced and
// invite.complained: what the mail provider reported of the message of an
// invite, or of its reminder (Message "reminder"), after its relay took
// it. Empty strings are written as null.
type DeliveryData struct {
	EventID           string
	EventTypeID       string
	ChannelID         string
	CustomerReference string
	Message           string    // invite or reminder
	Status            string    // delivered, bounced or complained
	Provider          string    // ses, sendgrid, postmark or mailgun
	At                time.Time // when the provider says it happened
}

func (DeliveryData) fits(t string) bool { return isDeliveryType(t) }

// MarshalJSON writes camelCase names and nulls for absent values.
func (d DeliveryData) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		eventJSON
		Message  string `json:"message"`
		Status   string `json:"status"`
		Provider string `json:"provider"`
		At       *stamp `json:"at"`
	}{
		eventOf(d.EventID, d.EventTypeID, d.ChannelID, d.CustomerReference),
		d.Message, d.Status, d.Provider, optTime(d.At),
	})
}

// MarshalJSON writes camelCase names and nulls for absent values.
func (d InviteData) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		eventJSON
		Status       string  `json:"status"`
		Reason       *string `json:"reason"`
		Medium       *string `json:"medium"`
		ScheduledFor *stamp  `json:"scheduledFor"`
		SentAt       *stamp  `json:"sentAt"`
	}{
		eventOf(d.EventID, d.EventTypeID, d.ChannelID, d.CustomerReference),
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
		eventJSON
		Status       string  `json:"status"`
		Medium       *string `json:"medium"`
		ScheduledFor *stamp  `json:"scheduledFor"`
		SentAt       *stamp  `json:"sentAt"`
	}{
		eventOf(d.EventID, d.EventTypeID, d.ChannelID, d.CustomerReference),
		d.Status, optString(d.Medium), optTime(d.ScheduledFor), optTime(d.SentAt),
	})
}

// ReviewData is the payload of review.created and review.updated. The
// comments are the customer's free text, sent because they are the
// review.
type ReviewData struct {
	ReviewID          string
	EventID           string
	EventTypeID       string
	ChannelID         string
	CustomerReference string // null when empty
	Rating            int    // the shop rating; 0 (null) when only products were rated
	Comment           string // "" when none was given
	Locale            string
	Products          []ProductRating // [] when none
}

// ProductRating is a product review in ReviewData: the product's keys
// (each null when the event gave none), its rating and comment.
type ProductRating struct {
	ID      string // prv-…
	SKU     string
	GTIN    string
	MPN     string
	Rating  int
	Comment string
}

func (ReviewData) fits(t string) bool { return t == ReviewCreated || t == ReviewUpdated }

// MarshalJSON writes camelCase names; the customer reference, a missing
// shop rating and missing product keys are null.
func (d ReviewData) MarshalJSON() ([]byte, error) {
	products := make([]productRatingJSON, len(d.Products))
	for i, p := range d.Products {
		products[i] = productRatingJSON{p.ID, optString(p.SKU), optString(p.GTIN), optString(p.MPN), p.Rating, p.Comment}
	}
	return json.Marshal(struct {
		reviewJSON
		Rating   *int                `json:"rating"`
		Comment  string              `json:"comment"`
		Locale   string              `json:"locale"`
		Products []productRatingJSON `json:"products"`
	}{
		reviewOf(d.ReviewID, d.EventID, d.EventTypeID, d.ChannelID, d.CustomerReference),
		optInt(d.Rating), d.Comment, d.Locale, products,
	})
}

type productRatingJSON struct {
	ID      string  `json:"id"`
	SKU     *string `json:"sku"`
	GTIN    *string `json:"gtin"`
	MPN     *string `json:"mpn"`
	Rating  int     `json:"rating"`
	Comment string  `json:"comment"`
}

// ModerationData is the payload of review.moderated: a review's
// publication status changed, by the shop's report or the operator's
// decision. Its product reviews changed with it.
type ModerationData struct {
	ReviewID          string
	EventID           string
	EventTypeID       string
	ChannelID         string
	CustomerReference string // null when empty
	Status            string // published, reported or removed
	PreviousStatus    string
	// Public says whether the review is shown now: a report of
	// personal data hides it at once; other reports do not.
	Public bool
	Action string // reported, published or removed
	Reason string // the report's reason; null unless reported
	Note   string // the report's or the decision's note; null when none
	// By is the API client that reported it, or "operator".
	By string
}

func (ModerationData) fits(t string) bool { return t == ReviewModerated }

// MarshalJSON writes camelCase names and nulls for absent values.
func (d ModerationData) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		reviewJSON
		Status         string  `json:"status"`
		PreviousStatus string  `json:"previousStatus"`
		Public         bool    `json:"public"`
		Action         string  `json:"action"`
		Reason         *string `json:"reason"`
		Note           *string `json:"note"`
		By             string  `json:"by"`
	}{
		reviewOf(d.ReviewID, d.EventID, d.EventTypeID, d.ChannelID, d.CustomerReference),
		d.Status, d.PreviousStatus, d.Public, d.Action, optString(d.Reason), optString(d.Note), d.By,
	})
}

// ReplyData is the payload of review.replied: the shop's public reply to
// a review was set, changed, or deleted (Text "": "reply" is null).
type ReplyData struct {
	ReviewID          string
	EventID           string
	EventTypeID       string
	ChannelID         string
	CustomerReference string // null when empty
	Text              string
	CreatedAt         time.Time
	UpdatedAt         time.Time
	// By is the API client that wrote or deleted it.
	By string
}

func (ReplyData) fits(t string) bool { return t == ReviewReplied }

// MarshalJSON writes camelCase names; "reply" is null once deleted.
func (d ReplyData) MarshalJSON() ([]byte, error) {
	type reply struct {
		Text      string `json:"text"`
		CreatedAt stamp  `json:"createdAt"`
		UpdatedAt stamp  `json:"updatedAt"`
	}
	var r *reply
	if d.Text != "" {
		r = &reply{d.Text, stamp(d.CreatedAt), stamp(d.UpdatedAt)}
	}
	return json.Marshal(struct {
		reviewJSON
		Reply *reply `json:"reply"`
		By    string `json:"by"`
	}{reviewOf(d.ReviewID, d.EventID, d.EventTypeID, d.ChannelID, d.CustomerReference), r, d.By})
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

// eventJSON begins every payload about an event's invite: the event, its
// type and channel, and the shop's reference for the customer (null when
// the event had none).
type eventJSON struct {
	EventID           string  `json:"eventId"`
	EventTypeID       string  `json:"eventTypeId"`
	ChannelID         string  `json:"channelId"`
	CustomerReference *string `json:"customerReference"`
}

func eventOf(eventID, eventTypeID, channelID, customerReference string) eventJSON {
	return eventJSON{eventID, eventTypeID, channelID, optString(customerReference)}
}

// reviewJSON begins every payload about a review: the review, then the
// event it answered.
type reviewJSON struct {
	ReviewID string `json:"reviewId"`
	eventJSON
}

func reviewOf(reviewID, eventID, eventTypeID, channelID, customerReference string) reviewJSON {
	return reviewJSON{reviewID, eventOf(eventID, eventTypeID, channelID, customerReference)}
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

func optInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func optTime(t time.Time) *stamp {
	if t.IsZero() {
		return nil
	}
	s := stamp(t)
	return &s
}
