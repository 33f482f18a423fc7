package apiserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/touchpoint/touchpoint/account/accountapi"
	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/eventdb"
	"github.com/touchpoint/touchpoint/store/invitedb"
	"github.com/touchpoint/touchpoint/text"
)

// eventAPI is the routes of the events: accepting them one by one and in batches, the list, cancel and retry.
type eventAPI struct{ *server }

// Limits of an event; the body limit is Options.MaxBodyBytes.
const (
	maxProducts     = 50
	maxCategories   = 50
	maxMetadataKeys = 50
	maxMetadataKey  = 64
	maxText         = 1024 // any string field, in bytes
	maxEmail        = 254
	maxIdemKey      = 255
)

// eventIn is POST /events as documented, plus the fields existing
// integrations send. Normalised (transaction.date in UTC
// milliseconds) it is also the stored payload, so a stored event is
// returned with exactly the fields that were sent.
type eventIn struct {
	Customer              *eventCustomer    `json:"customer" required:"true"`
	Type                  string            `json:"type" required:"true"`
	Channel               *eventChannel     `json:"channel" required:"true"`
	Transaction           *eventTransaction `json:"transaction" required:"true"`
	System                string            `json:"system" required:"true"`
	SystemVersion         string            `json:"systemVersion" required:"true"`
	DefaultLocale         string            `json:"defaultLocale,omitempty"`
	EstimatedDeliveryDate string            `json:"estimatedDeliveryDate,omitempty"`
	Products              []eventProduct    `json:"products,omitempty"`
	Metadata              map[string]string `json:"metadata,omitempty"`
}

type eventCustomer struct {
	// Email is required in a request; a stored event whose customer was
	// erased has none.
	Email     string `json:"email,omitempty" required:"true"`
	FirstName string `json:"firstName,omitempty"`
	LastName  string `json:"lastName,omitempty"`
	Address   string `json:"address,omitempty"`
	Mobile    string `json:"mobile,omitempty"`
	Reference string `json:"reference,omitempty"`
}

type eventChannel struct {
	ID   string `json:"id" required:"true"`
	Type string `json:"type,omitempty"`
}

type eventTransaction struct {
	Reference string    `json:"reference" required:"true"`
	Date      time.Time `json:"date" required:"true"`
}

// MarshalJSON writes the date as every timestamp is returned.
func (t eventTransaction) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Reference string            `json:"reference"`
		Date      apiwire.Timestamp `json:"date"`
	}{t.Reference, apiwire.Timestamp(t.Date)})
}

type eventProduct struct {
	Name          string              `json:"name,omitempty"`
	SKU           string              `json:"sku,omitempty"`
	URL           string              `json:"url,omitempty"`
	GTIN          string              `json:"gtin,omitempty"`
	ImageURL      string              `json:"imageUrl,omitempty"`
	MPN           string              `json:"mpn,omitempty"`
	Brand         string              `json:"brand,omitempty"`
	ParentProduct *eventParentProduct `json:"parentProduct,omitempty"`
	Categories    []string            `json:"categories,omitempty"`
}

type eventParentProduct struct {
	Name string `json:"name,omitempty"`
	SKU  string `json:"sku,omitempty"`
}

var localePattern = regexp.MustCompile(`^[a-z]{2,3}(_[A-Z]{2})?$`)

// typed is a value of an event with the kind of field it is.
type typed struct {
	v string
	k text.Kind
}

// validate checks what the decoder cannot: required values, formats,
// limits and what each field may hold, each error with its field path.
// It cleans the multi-line values (the postal address, the metadata) in
// place, as they are stored.
func (in *eventIn) validate() apiwire.Invalid {
	var errs apiwire.Invalid
	limit := func(field, v string, max int, required bool) {
		switch {
		case v == "" && required:
			errs.Check(field, "is required")
		case len(v) > max:
			errs.Check(field, fmt.Sprintf("must be at most %d bytes", max))
		}
	}
	c := in.Customer
	// What each field may hold (package text): names and identifiers are
	// refused with a control or bidirectional character, the postal
	// address and the metadata are cleaned, URLs must be http(s).
	kind := func(field, v string, k text.Kind) {
		if err := text.Check(k, v); err != nil {
			errs.Check(field, err.Error())
		}
	}
	for field, v := range map[string]string{
		"customer.email": c.Email, "customer.mobile": c.Mobile, "customer.reference": c.Reference,
		"transaction.reference": in.Transaction.Reference,
	} {
		kind(field, v, text.Identifier)
	}
	for field, v := range map[string]string{
		"customer.firstName": c.FirstName, "customer.lastName": c.LastName, "type": in.Type,
		"channel.type": in.Channel.Type, "system": in.System, "systemVersion": in.SystemVersion,
	} {
		kind(field, v, text.Name)
	}
	c.Address = text.Clean(text.Multiline, c.Address)
	limit("customer.email", c.Email, maxEmail, true)
	if c.Email != "" && len(c.Email) <= maxEmail && text.Check(text.Identifier, c.Email) == nil {
		if a, err := mail.ParseAddress(c.Email); err != nil || a.Address != c.Email {
			errs.Check("customer.email", "must be an email address such as ann@example.com")
		}
	}
	for field, v := range map[string]string{
		"customer.firstName": c.FirstName, "customer.lastName": c.LastName, "customer.address": c.Address,
		"customer.mobile": c.Mobile, "customer.reference": c.Reference,
	} {
		limit(field, v, maxText, false)
	}
	if in.Type == "" {
		errs.Check("type", "is required")
	} else if utf8.RuneCountInString(in.Type) > accountapi.MaxNameLen { // as event type names are counted
		errs.Check("type", fmt.Sprintf("must be at most %d characters", accountapi.MaxNameLen))
	}
	if in.Channel.ID == "" {
		errs.Check("channel.id", "is required")
	} else if !store.ValidID("chl", in.Channel.ID) {
		errs.Check("channel.id", "must be a channel id of the form chl-<uuid>")
	}
	limit("channel.type", in.Channel.Type, maxText, false)
	limit("transaction.reference", in.Transaction.Reference, maxText, true)
	limit("system", in.System, maxText, true)
	limit("systemVersion", in.SystemVersion, maxText, true)
	if in.DefaultLocale != "" && !localePattern.MatchString(in.DefaultLocale) {
		errs.Check("defaultLocale", "must be a locale such as en_US or de")
	}
	if in.EstimatedDeliveryDate != "" {
		if _, err := time.Parse(time.DateOnly, in.EstimatedDeliveryDate); err != nil {
			errs.Check("estimatedDeliveryDate", "must be a date such as 2026-11-24")
		}
	}
	if len(in.Products) > maxProducts {
		errs.Check("products", fmt.Sprintf("must have at most %d items", maxProducts))
	}
	for i, p := range in.Products[:min(len(in.Products), maxProducts)] {
		at := fmt.Sprintf("products[%d].", i)
		fields := map[string]typed{
			"name": {p.Name, text.Name}, "brand": {p.Brand, text.Name},
			"sku": {p.SKU, text.Identifier}, "gtin": {p.GTIN, text.Identifier}, "mpn": {p.MPN, text.Identifier},
			"url": {p.URL, text.URL}, "imageUrl": {p.ImageURL, text.URL},
		}
		if pp := p.ParentProduct; pp != nil {
			fields["parentProduct.name"], fields["parentProduct.sku"] = typed{pp.Name, text.Name}, typed{pp.SKU, text.Identifier}
		}
		for field, f := range fields {
			limit(at+field, f.v, maxText, false)
			kind(at+field, f.v, f.k)
		}
		if len(p.Categories) > maxCategories {
			errs.Check(at+"categories", fmt.Sprintf("must have at most %d items", maxCategories))
		}
		for j, cat := range p.Categories[:min(len(p.Categories), maxCategories)] {
			limit(fmt.Sprintf("%scategories[%d]", at, j), cat, maxText, false)
			kind(fmt.Sprintf("%scategories[%d]", at, j), cat, text.Name)
		}
	}
	if len(in.Metadata) > maxMetadataKeys {
		errs.Check("metadata", fmt.Sprintf("must have at most %d keys", maxMetadataKeys))
	} else {
		for k, v := range in.Metadata {
			if k == "" || utf8.RuneCountInString(k) > maxMetadataKey {
				errs.Check("metadata", fmt.Sprintf("keys must be 1 to %d characters; %.80q is not", maxMetadataKey, k))
				continue
			}
			if err := text.Check(text.Identifier, k); err != nil {
				errs.Check("metadata", fmt.Sprintf("key %.80q %s", k, err))
				continue
			}
			in.Metadata[k] = text.Clean(text.Multiline, v)
			limit(jsonstrict.MapPath("metadata", k), in.Metadata[k], maxText, false)
		}
	}
	// Map iteration above is random; report in a stable order.
	slices.SortFunc(errs, func(a, b apiwire.FieldError) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

// acceptance is the documented 202 body, with its capitalised names.
type acceptance struct {
	Message  string `json:"Message"`
	EventRef string `json:"EventRef"`
}

func (s eventAPI) createEvent(w http.ResponseWriter, r *http.Request) {
	defer s.load.BeginAccept(1)()
	key := r.Header.Get("Idempotency-Key")
	if !validIdempotencyKey(key) {
		s.fail(w, r, invalid(fieldError{Field: "Idempotency-Key", Message: fmt.Sprintf("must be at most %d printable ASCII characters", maxIdemKey)}))
		return
	}
	var in eventIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := in.validate().Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	e, err := newStoreEvent(&in, accountID(r), key)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	acc, err := s.events.AcceptEvent(r.Context(), e)
	switch {
	case errors.Is(err, eventdb.ErrUnknownEventType):
		err = unprocessable("type", fmt.Sprintf("there is no event type named %q; create it with POST /event-types", in.Type))
	case errors.Is(err, eventdb.ErrUnknownChannel):
		err = unprocessable("channel.id", "there is no such channel in this account")
	case errors.Is(err, eventdb.ErrIdempotencyMismatch):
		err = unprocessable("Idempotency-Key", "was already used with a different request body")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !acc.Replayed {
		s.notify()
		s.metrics.EventAccepted()
	}
	infoFrom(r.Context()).eventID = acc.EventID
	apiwire.WriteJSON(w, http.StatusAccepted, acceptance{
		Message:  fmt.Sprintf("Your event (%s) was accepted for processing.", acc.EventID),
		EventRef: acc.EventID,
	})
}

// unprocessable is a 422: well-formed, but it refers to something that
// does not exist.
func unprocessable(field, msg string) *apiError {
	e := invalid(fieldError{Field: field, Message: msg})
	e.status = http.StatusUnprocessableEntity
	return e
}

// eventOut is a stored event: what was sent, plus its id, arrival, event
// type and invite state.
type eventOut struct {
	ID          string            `json:"id"`
	ReceivedAt  apiwire.Timestamp `json:"receivedAt"`
	EventTypeID string            `json:"eventTypeId"`
	eventIn
	Invite inviteOut      `json:"invite"`
	Review *reviewSummary `json:"review"`
	// ErasedAt is when the customer's personal data left the event
	// (POST /customers/erase); null while it has not.
	ErasedAt *apiwire.Timestamp `json:"erasedAt"`
}

type inviteOut struct {
	Status       invite.Status      `json:"status"`
	Reason       *string            `json:"reason"`
	Medium       *string            `json:"medium"`
	ScheduledFor *apiwire.Timestamp `json:"scheduledFor"`
	SentAt       *apiwire.Timestamp `json:"sentAt"`
	// OpenedAt is when the customer first opened the invite's feedback
	// page; null while they have not.
	OpenedAt  *apiwire.Timestamp `json:"openedAt"`
	Attempts  int                `json:"attempts"`
	LastError *string            `json:"lastError"`
	// Delivery is the provider's last report on the message: an
	// *smsDelivery or a *mailDelivery; null before the first.
	Delivery any          `json:"delivery"`
	Reminder *reminderOut `json:"reminder"`
	// AttemptHistory is every send attempt (see attemptOut).
	AttemptHistory []attemptOut `json:"attemptHistory"`
}

// reminderOut is the invite's reminder; null when none is
// planned.
type reminderOut struct {
	Status       invite.Status      `json:"status"`
	Reason       *string            `json:"reason"`
	ScheduledFor *apiwire.Timestamp `json:"scheduledFor"`
	SentAt       *apiwire.Timestamp `json:"sentAt"`
	Delivery     any                `json:"delivery"` // as inviteOut's
}

// optionalTime is t as an optional timestamp.
func optionalTime(t sql.NullTime) *apiwire.Timestamp {
	if !t.Valid {
		return nil
	}
	ts := apiwire.Timestamp(t.Time)
	return &ts
}

// optionalString is s as an optional string.
func optionalString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// eventOutOf is the stored event as the API shows it. Its payload was
// written by createEvent from this very type, so a decoding error means a
// damaged row: the request fails (500) rather than show it half.
func eventOutOf(e invitedb.Event) (eventOut, error) {
	out := eventOut{ID: e.ID, ReceivedAt: apiwire.Timestamp(e.ReceivedAt), EventTypeID: e.EventTypeID}
	if err := json.Unmarshal(e.Payload, &out.eventIn); err != nil {
		return out, fmt.Errorf("event %s: decode stored payload: %w", e.ID, err)
	}
	out.Invite = inviteOut{Status: e.InviteStatus.API(), Attempts: e.Attempts, Reason: optionalString(e.InviteReason),
		Medium: optionalString(e.InviteMedium), LastError: optionalString(e.LastError),
		ScheduledFor: optionalTime(e.ScheduledFor), SentAt: optionalTime(e.SentAt), OpenedAt: optionalTime(e.OpenedAt)}
	if e.ReminderStatus.Valid {
		out.Invite.Reminder = &reminderOut{Status: invite.Status(e.ReminderStatus.String).API(), Reason: optionalString(e.ReminderReason),
			ScheduledFor: optionalTime(e.ReminderScheduledFor), SentAt: optionalTime(e.ReminderSentAt)}
	}
	var err error
	if out.Review, err = reviewSummaryOf(e.Review); err != nil {
		return out, fmt.Errorf("event %s: decode review: %w", e.ID, err)
	}
	if err := addSMSDelivery(&out.Invite, e.SMSDelivery); err != nil {
		return out, fmt.Errorf("event %s: decode sms delivery: %w", e.ID, err)
	}
	if err := addMailDelivery(&out.Invite, e.MailDelivery); err != nil {
		return out, fmt.Errorf("event %s: decode mail delivery: %w", e.ID, err)
	}
	if out.Invite.AttemptHistory, err = attemptsOut(e); err != nil {
		return out, err
	}
	out.ErasedAt = optionalTime(e.ErasedAt)
	return out, nil
}

// reviewSummary is the event's review as GET /events/{id} shows it.
type reviewSummary struct {
	ID        string            `json:"id"`
	Rating    *int              `json:"rating"`
	CreatedAt apiwire.Timestamp `json:"createdAt"`
}

// reviewSummaryOf decodes the review column of an event row (nil: none).
func reviewSummaryOf(raw []byte) (*reviewSummary, error) {
	if raw == nil {
		return nil, nil
	}
	var r struct {
		ID        string    `json:"id"`
		Rating    *int      `json:"rating"`
		CreatedAt time.Time `json:"createdAt"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return &reviewSummary{ID: r.ID, Rating: r.Rating, CreatedAt: apiwire.Timestamp(r.CreatedAt)}, nil
}

// writeEvent answers with the event.
func (s eventAPI) writeEvent(w http.ResponseWriter, r *http.Request, status int, e invitedb.Event) {
	out, err := eventOutOf(e)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, status, out)
}

func (s eventAPI) listEvents(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r, "type", "channelId", "status", "customerEmail", "transactionReference", "receivedFrom", "receivedTo")
	f := invitedb.EventFilter{
		Type:                 q.Get("type"),
		ChannelID:            q.ID("channelId", "chl"),
		Status:               invite.Status(q.Get("status")),
		CustomerEmail:        q.Get("customerEmail"),
		TransactionReference: q.Get("transactionReference"),
		ReceivedFrom:         q.Time("receivedFrom"),
		ReceivedTo:           q.Time("receivedTo"),
	}
	if f.Status != "" {
		if msg := apiwire.OneOf(f.Status, invite.APIStatuses()...); msg != "" {
			q.Fail("status", msg)
		}
	}
	for name, v := range map[string]string{"type": f.Type, "customerEmail": f.CustomerEmail, "transactionReference": f.TransactionReference} {
		if len(v) > maxText {
			q.Fail(name, fmt.Sprintf("must be at most %d bytes", maxText))
		}
	}
	p := q.Page("evt")
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	events, next, err := s.invites.ListEvents(r.Context(), accountID(r), f, p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	items := make([]eventOut, len(events))
	for i, e := range events {
		if items[i], err = eventOutOf(e); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(items, next, func(o eventOut) eventOut { return o }))
}

func (s eventAPI) getEvent(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "evt", "event")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	e, err := s.invites.Event(r.Context(), accountID(r), id)
	if err != nil {
		s.fail(w, r, apiwire.About("event", "", err))
		return
	}
	s.writeEvent(w, r, http.StatusOK, e)
}

// cancelEvent decides the cancel in PostgreSQL, so it answers
// at once even when no worker runs, then tells the workflow.
func (s eventAPI) cancelEvent(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "evt", "event")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	e, err := s.invites.CancelInvite(r.Context(), accountID(r), id)
	if errors.Is(err, invitedb.ErrInviteState) {
		err = s.stateConflict(r.Context(), id, "cancelled")
	}
	if err != nil {
		s.fail(w, r, apiwire.About("event", "", err))
		return
	}
	s.signalCancel(id)
	s.writeEvent(w, r, http.StatusOK, e)
}

// retryEvent re-sends a failed invite now: a new workflow run, started by
// the outbox starter like any other.
func (s eventAPI) retryEvent(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "evt", "event")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	e, err := s.invites.RetryInvite(r.Context(), accountID(r), id)
	if errors.Is(err, invitedb.ErrInviteState) {
		err = s.stateConflict(r.Context(), id, "retried")
	}
	if err != nil {
		s.fail(w, r, apiwire.About("event", "", err))
		return
	}
	s.notify()
	s.writeEvent(w, r, http.StatusAccepted, e)
}

// stateConflict words the 409 of a cancel or retry the invite's state
// does not allow.
func (s eventAPI) stateConflict(ctx context.Context, id, verb string) error {
	e, err := s.invites.Event(ctx, infoFrom(ctx).principal.AccountID, id)
	if err != nil {
		return newError(http.StatusConflict, "the invite's state does not allow it to be %s", verb)
	}
	if e.InviteStatus == invite.Sending {
		return newError(http.StatusConflict, "the invite is being sent; it can no longer be %s", verb)
	}
	return newError(http.StatusConflict, "the invite is %s; it cannot be %s", e.InviteStatus, verb)
}
