// Package webhookapi serves the API's routes of an account's webhook
// endpoints and their deliveries (/webhooks/…): the endpoints' writing
// and reading, the rotation of their secrets, the list of deliveries,
// and the retry or replay of failed ones. An endpoint's secret is made
// here, shown once (on create and on rotation) and handed to the store
// sealed; the deliveries themselves are written by the store with the
// state changes they report. What an endpoint URL may be, and the event
// types, are package webhook's. The API mounts these handlers on the
// routes of its route table, behind its authentication and access
// groups, and answers their errors (apiwire.API).
package webhookapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/store/pg"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/text"
	"github.com/touchpoint/touchpoint/webhook"
)

// Store is what the handlers read and change of an account's webhook
// endpoints and their deliveries.
type Store interface {
	CreateWebhookEndpoint(ctx context.Context, ep webhookdb.WebhookEndpoint) (webhookdb.WebhookEndpoint, error)
	WebhookEndpoint(ctx context.Context, accountID, id string) (webhookdb.WebhookEndpoint, error)
	ListWebhookEndpoints(ctx context.Context, accountID string, p pg.Page) ([]webhookdb.WebhookEndpoint, *pg.Cursor, error)
	UpdateWebhookEndpoint(ctx context.Context, accountID, id string, u webhookdb.WebhookEndpointUpdate) (webhookdb.WebhookEndpoint, error)
	DeleteWebhookEndpoint(ctx context.Context, accountID, id string) error
	RotateWebhookSecret(ctx context.Context, accountID, id string, sealed []byte, overlap time.Duration) (webhookdb.WebhookEndpoint, error)
	ListWebhookDeliveries(ctx context.Context, accountID, endpointID, status string, p pg.Page) ([]webhookdb.WebhookDelivery, *pg.Cursor, error)
	RetryWebhookDelivery(ctx context.Context, accountID, endpointID, deliveryID string) (webhookdb.WebhookDelivery, error)
	ReplayWebhookDeliveries(ctx context.Context, accountID, endpointID string, f webhookdb.ReplayFilter, dryRun bool) (int, error)
}

// Options are the handlers' dependencies.
type Options struct {
	API   apiwire.API // required
	Store Store       // required
	// Secrets seals the signing secrets of the endpoints for storage (the
	// worker opens them to sign). Required.
	Secrets *webhook.SecretBox
	// AllowPrivate admits endpoint URLs on http and on private, loopback
	// and link-local addresses (development and tests only).
	AllowPrivate bool
	// Now is the clock a replay's period is checked against; default
	// time.Now.
	Now func() time.Time
}

// Handler serves the routes of the webhooks. Its methods are the
// handlers of the routes the API mounts.
type Handler struct{ o Options }

// New builds the handlers. It panics without API, Store or Secrets, which
// is a wiring mistake.
func New(o Options) *Handler {
	if o.API == nil || o.Store == nil || o.Secrets == nil {
		panic("webhookapi.New: API, Store and Secrets are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Handler{o: o}
}

// maxWebhookDescription bounds an endpoint's description, in characters.
const maxWebhookDescription = 500

// webhookJSON is an endpoint as the API shows it.
type webhookJSON struct {
	ID          string            `json:"id"`
	URL         string            `json:"url"`
	Events      []string          `json:"events"`
	Description string            `json:"description"`
	Enabled     bool              `json:"enabled"`
	CreatedAt   apiwire.Timestamp `json:"createdAt"`
	UpdatedAt   apiwire.Timestamp `json:"updatedAt"`
}

// webhookWithSecret is the answer of create and rotate-secret, the only
// ones that carry the secret.
type webhookWithSecret struct {
	webhookJSON
	Secret string `json:"secret"`
}

func webhookOut(ep webhookdb.WebhookEndpoint) webhookJSON {
	events := append([]string{}, ep.Events...)
	return webhookJSON{ID: ep.ID, URL: ep.URL, Events: events, Description: ep.Description, Enabled: ep.Enabled,
		CreatedAt: apiwire.Timestamp(ep.CreatedAt), UpdatedAt: apiwire.Timestamp(ep.UpdatedAt)}
}

// webhookIn is POST /webhooks.
type webhookIn struct {
	URL         string              `json:"url" required:"true"`
	Events      []string            `json:"events" required:"true"`
	Description *string             `json:"description"`
	Enabled     jsonstrict.ReadOnly `json:"enabled"`
	Secret      jsonstrict.ReadOnly `json:"secret"`
	ID          jsonstrict.ReadOnly `json:"id"`
	CreatedAt   jsonstrict.ReadOnly `json:"createdAt"`
	UpdatedAt   jsonstrict.ReadOnly `json:"updatedAt"`
}

// webhookPatch is PATCH /webhooks/{id}, a JSON merge patch.
type webhookPatch struct {
	URL         jsonstrict.Optional[string]   `json:"url"`
	Events      jsonstrict.Optional[[]string] `json:"events"`
	Description jsonstrict.Optional[string]   `json:"description" nullable:"true"`
	Enabled     jsonstrict.Optional[bool]     `json:"enabled"`
	Secret      jsonstrict.ReadOnly           `json:"secret"`
	ID          jsonstrict.ReadOnly           `json:"id"`
	CreatedAt   jsonstrict.ReadOnly           `json:"createdAt"`
	UpdatedAt   jsonstrict.ReadOnly           `json:"updatedAt"`
}

// deliveryJSON is a delivery as GET /webhooks/{id}/deliveries lists it.
type deliveryJSON struct {
	ID             string             `json:"id"`
	Type           string             `json:"type"`
	Status         string             `json:"status"`
	Reason         *string            `json:"reason"`
	Attempts       int                `json:"attempts"`
	LastStatusCode *int               `json:"lastStatusCode"`
	LastError      *string            `json:"lastError"`
	CreatedAt      apiwire.Timestamp  `json:"createdAt"`
	DeliveredAt    *apiwire.Timestamp `json:"deliveredAt"`
	AttemptLog     []attemptJSON      `json:"attemptLog"`
}

// attemptJSON is one attempt of a delivery's log.
type attemptJSON struct {
	At         apiwire.Timestamp `json:"at"`
	StatusCode *int              `json:"statusCode"`
	Error      *string           `json:"error"`
	TookMs     int64             `json:"tookMs"`
}

func deliveryOut(d webhookdb.WebhookDelivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, Type: d.Type, Status: d.Status, Attempts: d.Attempts, CreatedAt: apiwire.Timestamp(d.CreatedAt),
		AttemptLog: make([]attemptJSON, len(d.AttemptLog))}
	for i, a := range d.AttemptLog {
		out.AttemptLog[i] = attemptJSON{At: apiwire.Timestamp(a.At), TookMs: a.TookMs}
		if a.StatusCode != 0 {
			out.AttemptLog[i].StatusCode = &a.StatusCode
		}
		if a.Error != "" {
			out.AttemptLog[i].Error = &a.Error
		}
	}
	if d.LastStatusCode.Valid {
		code := int(d.LastStatusCode.Int32)
		out.LastStatusCode = &code
	}
	if d.Reason.Valid {
		out.Reason = &d.Reason.String
	}
	if d.LastError.Valid {
		out.LastError = &d.LastError.String
	}
	if d.DeliveredAt.Valid {
		at := apiwire.Timestamp(d.DeliveredAt.Time)
		out.DeliveredAt = &at
	}
	return out
}

func (h *Handler) Create(w http.ResponseWriter, r *http.Request) {
	var in webhookIn
	if err := h.o.API.DecodeJSON(w, r, &in); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	var errs apiwire.Invalid
	errs.Check("url", h.checkWebhookURL(in.URL))
	errs = append(errs, checkWebhookEvents(in.Events)...)
	desc := ""
	if in.Description != nil {
		desc = text.Clean(text.Multiline, *in.Description)
		errs.Check("description", checkDescription(desc))
	}
	if err := errs.Err(); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	id := pg.NewID("whk")
	secret, sealed, err := h.newWebhookSecret(id)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	ep, err := h.o.Store.CreateWebhookEndpoint(r.Context(), webhookdb.WebhookEndpoint{ID: id, AccountID: h.o.API.AccountID(r),
		URL: in.URL, Events: in.Events, Description: desc, Secret: sealed})
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/webhooks/"+ep.ID)
	apiwire.WriteJSON(w, http.StatusCreated, webhookWithSecret{webhookOut(ep), secret})
}

func (h *Handler) List(w http.ResponseWriter, r *http.Request) {
	q := apiquery.Parse(r)
	p := q.Page("whk")
	if err := q.Err(); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	eps, next, err := h.o.Store.ListWebhookEndpoints(r.Context(), h.o.API.AccountID(r), p)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(eps, next, webhookOut))
}

func (h *Handler) Get(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "whk", "webhook")
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	ep, err := h.o.Store.WebhookEndpoint(r.Context(), h.o.API.AccountID(r), id)
	if err != nil {
		h.o.API.Fail(w, r, apiwire.About("webhook", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, webhookOut(ep))
}

// Update applies a merge patch. Disabling an endpoint gives up its
// pending deliveries; enabling it again delivers what happens from then on.
func (h *Handler) Update(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "whk", "webhook")
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	var in webhookPatch
	if err := h.o.API.DecodeJSON(w, r, &in); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	var u webhookdb.WebhookEndpointUpdate
	var errs apiwire.Invalid
	if in.URL.Set {
		errs.Check("url", h.checkWebhookURL(in.URL.Value))
		u.URL = &in.URL.Value
	}
	if in.Events.Set {
		errs = append(errs, checkWebhookEvents(in.Events.Value)...)
		u.Events = in.Events.Value
	}
	if in.Description.Set {
		desc := text.Clean(text.Multiline, *in.Description.Patch())
		u.Description = &desc
		errs.Check("description", checkDescription(desc))
	}
	if in.Enabled.Set {
		u.Enabled = &in.Enabled.Value
	}
	if err := errs.Err(); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	ep, err := h.o.Store.UpdateWebhookEndpoint(r.Context(), h.o.API.AccountID(r), id, u)
	if err != nil {
		h.o.API.Fail(w, r, apiwire.About("webhook", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, webhookOut(ep))
}

func (h *Handler) Delete(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "whk", "webhook")
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	if err := h.o.Store.DeleteWebhookEndpoint(r.Context(), h.o.API.AccountID(r), id); err != nil {
		h.o.API.Fail(w, r, apiwire.About("webhook", "", err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// RotateSecret gives the endpoint a new secret, shown in the
// answer; the old one goes on signing beside it for webhook.SecretOverlap. The
// request has no body.
func (h *Handler) RotateSecret(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "whk", "webhook")
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	secret, sealed, err := h.newWebhookSecret(id)
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	ep, err := h.o.Store.RotateWebhookSecret(r.Context(), h.o.API.AccountID(r), id, sealed, webhook.SecretOverlap)
	if err != nil {
		h.o.API.Fail(w, r, apiwire.About("webhook", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, webhookWithSecret{webhookOut(ep), secret})
}

func (h *Handler) ListDeliveries(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "whk", "webhook")
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	q := apiquery.Parse(r, "status")
	status := q.Get("status")
	if status != "" {
		if msg := apiwire.OneOf(status, webhookdb.DeliveryPending, webhookdb.DeliverySucceeded, webhookdb.DeliveryFailed); msg != "" {
			q.Fail("status", msg)
		}
	}
	p := q.Page("msg")
	if err := q.Err(); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	ds, next, err := h.o.Store.ListWebhookDeliveries(r.Context(), h.o.API.AccountID(r), id, status, p)
	if err != nil {
		h.o.API.Fail(w, r, apiwire.About("webhook", "", err))
		return
	}
	apiwire.WriteJSON(w, http.StatusOK, apiwire.NewList(ds, next, deliveryOut))
}

// newWebhookSecret makes a secret for endpoint id and seals it.
func (h *Handler) newWebhookSecret(id string) (secret string, sealed []byte, err error) {
	return h.o.Secrets.New(id)
}

func (h *Handler) checkWebhookURL(u string) string {
	if err := webhook.ValidateURL(u, h.o.AllowPrivate); err != nil {
		return err.Error()
	}
	return ""
}

// checkWebhookEvents requires at least one known event type, each once.
func checkWebhookEvents(events []string) apiwire.Invalid {
	var errs apiwire.Invalid
	if len(events) == 0 {
		errs.Check("events", "must name at least one event type: "+strings.Join(webhook.EventTypes(), ", "))
		return errs
	}
	for i, e := range events {
		field := fmt.Sprintf("events[%d]", i)
		switch {
		case !webhook.ValidEventType(e):
			errs.Check(field, "must be one of: "+strings.Join(webhook.EventTypes(), ", "))
		case slices.Index(events, e) < i:
			errs.Check(field, fmt.Sprintf("repeats %q", e))
		}
	}
	return errs
}

// checkDescription says what is wrong with a cleaned description.
func checkDescription(d string) string {
	if utf8.RuneCountInString(d) > maxWebhookDescription {
		return fmt.Sprintf("must be at most %d characters", maxWebhookDescription)
	}
	return ""
}
