package webhookapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/store/pg"
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

func (h *Handler) RetryDelivery(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "whk", "webhook")
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	msg := mux.Vars(r)["msg"]
	if !pg.ValidID("msg", msg) {
		h.o.API.Fail(w, r, apiwire.Errorf(http.StatusNotFound, "delivery not found"))
		return
	}
	d, err := h.o.Store.RetryWebhookDelivery(r.Context(), h.o.API.AccountID(r), id, msg)
	if err != nil {
		h.o.API.Fail(w, r, replayErr(err, "delivery"))
		return
	}
	apiwire.WriteJSON(w, http.StatusAccepted, deliveryOut(d))
}

func (h *Handler) Replay(w http.ResponseWriter, r *http.Request) {
	id, err := apiwire.PathID(r, "whk", "webhook")
	if err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	var in replayIn
	if err := h.o.API.DecodeJSON(w, r, &in); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	var errs apiwire.Invalid
	f := webhookdb.ReplayFilter{Since: in.Since}
	if in.Until != nil {
		f.Until = *in.Until
	}
	if bound, problem := f.Problem(h.o.Now()); bound != "" {
		errs.Check(bound, problem)
	}
	if in.Status != nil && *in.Status != webhookdb.DeliveryFailed {
		errs.Check("status", `must be "failed": only failed deliveries are replayed`)
	}
	if err := errs.Err(); err != nil {
		h.o.API.Fail(w, r, err)
		return
	}
	n, err := h.o.Store.ReplayWebhookDeliveries(r.Context(), h.o.API.AccountID(r), id, f, in.DryRun)
	if err != nil {
		h.o.API.Fail(w, r, replayErr(err, "webhook"))
		return
	}
	apiwire.WriteJSON(w, http.StatusAccepted, replayOut{Replayed: n, DryRun: in.DryRun})
}

// replayErr words the store's refusals of a replay.
func replayErr(err error, kind string) error {
	switch {
	case errors.Is(err, webhookdb.ErrEndpointDisabled):
		return apiwire.Errorf(http.StatusConflict, "%s", webhookdb.ErrEndpointDisabled.Error())
	case errors.Is(err, webhookdb.ErrNotFailed):
		return apiwire.Errorf(http.StatusConflict, "%s: a pending delivery is on its way, a succeeded one was answered 2xx", webhookdb.ErrNotFailed.Error())
	}
	return apiwire.About(kind, "", err)
}
