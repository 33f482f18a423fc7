package apiserver

import (
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/webhookdb"
)

// Replays of failed webhook deliveries: one by its ID, or every failed
// delivery of an endpoint made within a period. The store makes them
// pending again and the webhook starter starts a new delivery workflow
// for each; the message keeps its webhook-id and body, and goes to the
// endpoint's current URL, signed with its current secrets.

// replayIn is POST /webhooks/{id}/replay.
type replayIn struct {
	Since  time.Time  `json:"since" required:"true"`
	Until  *time.Time `json:"until"`
	Status *string    `json:"status"`
	DryRun bool       `json:"dryRun"`
}

// replayOut answers a replay: how many deliveries it put back in the
// outbox (or, with dryRun, would).
type replayOut struct {
	Replayed int  `json:"replayed"`
	DryRun   bool `json:"dryRun"`
}

func (s webhookAPI) retryWebhookDelivery(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "whk", "webhook")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	msg := mux.Vars(r)["msg"]
	if !store.ValidID("msg", msg) {
		s.fail(w, r, newError(http.StatusNotFound, "delivery not found"))
		return
	}
	d, err := s.webhooks.RetryWebhookDelivery(r.Context(), accountID(r), id, msg)
	if err != nil {
		s.fail(w, r, replayErr(err, "delivery"))
		return
	}
	writeJSON(w, http.StatusAccepted, deliveryOut(d))
}

func (s webhookAPI) replayWebhook(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "whk", "webhook")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var in replayIn
	if err := s.decodeJSON(w, r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	var errs fieldErrors
	f := webhookdb.ReplayFilter{Since: in.Since}
	if in.Until != nil {
		f.Until = *in.Until
	}
	if bound, problem := f.Problem(s.now()); bound != "" {
		errs.check(bound, problem)
	}
	if in.Status != nil && *in.Status != webhookdb.DeliveryFailed {
		errs.check("status", `must be "failed": only failed deliveries are replayed`)
	}
	if err := errs.err(); err != nil {
		s.fail(w, r, err)
		return
	}
	n, err := s.webhooks.ReplayWebhookDeliveries(r.Context(), accountID(r), id, f, in.DryRun)
	if err != nil {
		s.fail(w, r, replayErr(err, "webhook"))
		return
	}
	writeJSON(w, http.StatusAccepted, replayOut{Replayed: n, DryRun: in.DryRun})
}

// replayErr words the store's refusals of a replay.
func replayErr(err error, kind string) error {
	switch {
	case errors.Is(err, webhookdb.ErrEndpointDisabled):
		return newError(http.StatusConflict, "%s", webhookdb.ErrEndpointDisabled.Error())
	case errors.Is(err, webhookdb.ErrNotFailed):
		return newError(http.StatusConflict, "%s: a pending delivery is on its way, a succeeded one was answered 2xx", webhookdb.ErrNotFailed.Error())
	}
	return about(kind, "", err)
}
