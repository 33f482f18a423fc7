package apiserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/text"
	"github.com/touchpoint/touchpoint/webhook"
)

// webhookAPI is the routes of the webhook endpoints and their deliveries.
type webhookAPI struct{ *server }

// Webhook endpoints and their deliveries. An endpoint's
// secret is made here, shown once (on create and on rotation) and handed
// to the store sealed; the deliveries themselves are written by the store
// with the state changes they report.

// SecretOverlap is how long the previous secret still signs after a
// rotation (webhook.SecretOverlap).
const SecretOverlap = webhook.SecretOverlap

// maxWebhookDescription bounds an endpoint's description, in characters.
const maxWebhookDescription = 500

// webhookJSON is an endpoint as the API shows it.
type webhookJSON struct {
	ID          string    `json:"id"`
	URL         string    `json:"url"`
	Events      []string  `json:"events"`
	Description string    `json:"description"`
	Enabled     bool      `json:"enabled"`
	CreatedAt   timestamp `json:"createdAt"`
	UpdatedAt   timestamp `json:"updatedAt"`
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
		CreatedAt: timestamp(ep.CreatedAt), UpdatedAt: timestamp(ep.UpdatedAt)}
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
	ID             string        `json:"id"`
	Type           string        `json:"type"`
	Status         string        `json:"status"`
	Reason         *string       `json:"reason"`
	Attempts       int           `json:"attempts"`
	LastStatusCode *int          `json:"lastStatusCode"`
	LastError      *string       `json:"lastError"`
	CreatedAt      timestamp     `json:"createdAt"`
	DeliveredAt    *timestamp    `json:"deliveredAt"`
	AttemptLog     []attemptJSON `json:"attemptLog"`
}

// attemptJSON is one attempt of a delivery's log.
type attemptJSON struct {
	At         timestamp `json:"at"`
	StatusCode *int      `json:"statusCode"`
	Error      *string   `json:"error"`
	TookMs     int64     `json:"tookMs"`
}

func deliveryOut(d webhookdb.WebhookDelivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, Type: d.Type, Status: d.Status, Attempts: d.Attempts, CreatedAt: timestamp(d.CreatedAt),
		AttemptLog: make([]attemptJSON, len(d.AttemptLog))}
	for i, a := range d.AttemptLog {
		out.AttemptLog[i] = attemptJSON{At: timestamp(a.At), TookMs: a.TookMs}
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
		at := timestamp(d.DeliveredAt.Time)
		out.DeliveredAt = &at
	}
	return out
}

func (s webhookAPI) createWebhook(w http.ResponseWriter, r *http.Request) {
	var in webhookIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	var errs fieldErrors
	errs.check("url", s.checkWebhookURL(in.URL))
	errs = append(errs, checkWebhookEvents(in.Events)...)
	desc := ""
	if in.Description != nil {
		desc = text.Clean(text.Multiline, *in.Description)
		errs.check("description", checkDescription(desc))
	}
	if err := errs.err(); err != nil {
		s.fail(w, r, err)
		return
	}
	id := store.NewID("whk")
	secret, sealed, err := s.newWebhookSecret(id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ep, err := s.webhooks.CreateWebhookEndpoint(r.Context(), webhookdb.WebhookEndpoint{ID: id, AccountID: accountID(r),
		URL: in.URL, Events: in.Events, Description: desc, Secret: sealed})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Location", "/webhooks/"+ep.ID)
	writeJSON(w, http.StatusCreated, webhookWithSecret{webhookOut(ep), secret})
}

func (s webhookAPI) listWebhooks(w http.ResponseWriter, r *http.Request) {
	q := parseQuery(r)
	p := q.Page("whk")
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	eps, next, err := s.webhooks.ListWebhookEndpoints(r.Context(), accountID(r), p)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newList(eps, next, webhookOut))
}

func (s webhookAPI) getWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "whk", "webhook")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ep, err := s.webhooks.WebhookEndpoint(r.Context(), accountID(r), id)
	if err != nil {
		s.fail(w, r, about("webhook", "", err))
		return
	}
	writeJSON(w, http.StatusOK, webhookOut(ep))
}

// updateWebhook applies a merge patch. Disabling an endpoint gives up its
// pending deliveries; enabling it again delivers what happens from then on.
func (s webhookAPI) updateWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "whk", "webhook")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var in webhookPatch
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	var u webhookdb.WebhookEndpointUpdate
	var errs fieldErrors
	if in.URL.Set {
		errs.check("url", s.checkWebhookURL(in.URL.Value))
		u.URL = &in.URL.Value
	}
	if in.Events.Set {
		errs = append(errs, checkWebhookEvents(in.Events.Value)...)
		u.Events = in.Events.Value
	}
	if in.Description.Set {
		desc := text.Clean(text.Multiline, *in.Description.Patch())
		u.Description = &desc
		errs.check("description", checkDescription(desc))
	}
	if in.Enabled.Set {
		u.Enabled = &in.Enabled.Value
	}
	if err := errs.err(); err != nil {
		s.fail(w, r, err)
		return
	}
	ep, err := s.webhooks.UpdateWebhookEndpoint(r.Context(), accountID(r), id, u)
	if err != nil {
		s.fail(w, r, about("webhook", "", err))
		return
	}
	writeJSON(w, http.StatusOK, webhookOut(ep))
}

func (s webhookAPI) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "whk", "webhook")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.webhooks.DeleteWebhookEndpoint(r.Context(), accountID(r), id); err != nil {
		s.fail(w, r, about("webhook", "", err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// rotateWebhookSecret gives the endpoint a new secret, shown in the
// answer; the old one goes on signing beside it for SecretOverlap. The
// request has no body.
func (s webhookAPI) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "whk", "webhook")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	secret, sealed, err := s.newWebhookSecret(id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ep, err := s.webhooks.RotateWebhookSecret(r.Context(), accountID(r), id, sealed, SecretOverlap)
	if err != nil {
		s.fail(w, r, about("webhook", "", err))
		return
	}
	writeJSON(w, http.StatusOK, webhookWithSecret{webhookOut(ep), secret})
}

func (s webhookAPI) listWebhookDeliveries(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "whk", "webhook")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := parseQuery(r, "status")
	status := q.Get("status")
	if status != "" {
		if msg := oneOf(status, webhookdb.DeliveryPending, webhookdb.DeliverySucceeded, webhookdb.DeliveryFailed); msg != "" {
			q.Fail("status", msg)
		}
	}
	p := q.Page("msg")
	if err := q.Err(); err != nil {
		s.fail(w, r, err)
		return
	}
	ds, next, err := s.webhooks.ListWebhookDeliveries(r.Context(), accountID(r), id, status, p)
	if err != nil {
		s.fail(w, r, about("webhook", "", err))
		return
	}
	writeJSON(w, http.StatusOK, newList(ds, next, deliveryOut))
}

// newWebhookSecret makes a secret for endpoint id and seals it.
func (s webhookAPI) newWebhookSecret(id string) (secret string, sealed []byte, err error) {
	return s.webhookSecrets.New(id)
}

func (s webhookAPI) checkWebhookURL(u string) string {
	if err := webhook.ValidateURL(u, s.webhookAllowPrivate); err != nil {
		return err.Error()
	}
	return ""
}

// checkWebhookEvents requires at least one known event type, each once.
func checkWebhookEvents(events []string) fieldErrors {
	var errs fieldErrors
	if len(events) == 0 {
		errs.check("events", "must name at least one event type: "+strings.Join(webhook.EventTypes(), ", "))
		return errs
	}
	for i, e := range events {
		field := fmt.Sprintf("events[%d]", i)
		switch {
		case !webhook.ValidEventType(e):
			errs.check(field, "must be one of: "+strings.Join(webhook.EventTypes(), ", "))
		case slices.Index(events, e) < i:
			errs.check(field, fmt.Sprintf("repeats %q", e))
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
