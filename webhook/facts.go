package webhook

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// Messages builds the body of each webhook message from what a change
// wrote (webhookdb.Messages): the one place that decides what a message
// says of a change. The store writes the bytes.
type Messages struct{}

// Body is the message of type typ at at reporting fact, marshalled.
func (Messages) Body(typ string, at time.Time, fact webhookdb.Fact) ([]byte, error) {
	data, err := dataOf(fact)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Message{Type: typ, Timestamp: at, Data: data})
}

// dataOf is the payload of a fact.
func dataOf(fact webhookdb.Fact) (Payload, error) {
	switch f := fact.(type) {
	case webhookdb.SendFact:
		e := f.Event
		if f.Kind == invite.KindReminder {
			return ReminderData{EventID: e.EventID, EventTypeID: e.EventTypeID, ChannelID: e.ChannelID,
				CustomerReference: e.CustomerReference, Status: string(f.Status), Medium: string(e.InviteMedium),
				ScheduledFor: timeOf(e.ReminderScheduledFor), SentAt: timeOf(e.ReminderSentAt)}, nil
		}
		return InviteData{EventID: e.EventID, EventTypeID: e.EventTypeID, ChannelID: e.ChannelID,
			CustomerReference: e.CustomerReference, Status: string(e.InviteStatus), Reason: string(e.InviteReason),
			Medium: string(e.InviteMedium), ScheduledFor: timeOf(e.ScheduledFor), SentAt: timeOf(e.SentAt)}, nil
	case webhookdb.DeliveryFact:
		e := f.Event
		return DeliveryData{EventID: e.EventID, EventTypeID: e.EventTypeID, ChannelID: e.ChannelID,
			CustomerReference: e.CustomerReference, Message: string(f.Message), Status: string(f.Outcome),
			Provider: f.Provider, At: f.At}, nil
	case webhookdb.ReviewFact:
		products := make([]ProductRating, len(f.Products))
		for i, p := range f.Products {
			products[i] = ProductRating{ID: p.ID, SKU: p.SKU, GTIN: p.GTIN, MPN: p.MPN, Rating: p.Rating, Comment: p.Comment}
		}
		return ReviewData{ReviewID: f.ReviewID, EventID: f.EventID, EventTypeID: f.EventTypeID, ChannelID: f.ChannelID,
			CustomerReference: f.CustomerReference, Rating: f.Rating, Comment: f.Comment, Locale: f.Locale, Products: products}, nil
	case webhookdb.ModerationFact:
		return ModerationData{ReviewID: f.ReviewID, EventID: f.EventID, EventTypeID: f.EventTypeID, ChannelID: f.ChannelID,
			CustomerReference: f.CustomerReference, Status: string(f.Status), PreviousStatus: string(f.PreviousStatus),
			Public: f.Public, Action: f.Action, Reason: string(f.Reason), Note: f.Note, By: f.By}, nil
	case webhookdb.ReplyFact:
		return ReplyData{ReviewID: f.ReviewID, EventID: f.EventID, EventTypeID: f.EventTypeID, ChannelID: f.ChannelID,
			CustomerReference: f.CustomerReference, Text: f.Text, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt, By: f.By}, nil
	case webhookdb.SuppressionFact:
		return SuppressionData{Medium: string(f.Medium), Reason: string(f.Reason), EventID: f.EventID,
			CustomerReference: f.CustomerReference}, nil
	}
	return nil, fmt.Errorf("no webhook message for a fact of type %T", fact)
}

func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
