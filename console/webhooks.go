package console

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/webhookdb"
	"github.com/touchpoint/touchpoint/webhook"
)

// webhookPages are the pages of the webhook endpoints and their deliveries.
type webhookPages struct{ *Handler }

// Webhooks: the endpoints a shop's systems hear of its changes at
// (owners create, enable, disable and rotate them), and each endpoint's
// deliveries with their attempts and the last answer, which editors
// retry one by one or replay for a period. Signing, the URL rules and the
// replay period are package webhook's and the store's.

type webhooksView struct {
	Endpoints []webhookdb.WebhookEndpoint
	Types     []string
	// The create form, as typed when refused, and the secret of the
	// endpoint just made (shown once).
	URL     string
	Events  []string
	Errors  fieldErrors
	Created *webhookdb.WebhookEndpoint
	Secret  string
	CanAdd  bool
}

func (h webhookPages) webhooks(w http.ResponseWriter, r *http.Request, p Person) {
	v, ok := h.webhooksView(w, r, p)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, "webhooks", "webhooks_title", "webhooks", v)
}

func (h webhookPages) webhooksView(w http.ResponseWriter, r *http.Request, p Person) (webhooksView, bool) {
	eps, _, err := h.opts.Webhooks.ListWebhookEndpoints(r.Context(), p.AccountID, store.Page{Limit: 100})
	if err != nil {
		h.fail(w, r, err)
		return webhooksView{}, false
	}
	return webhooksView{Endpoints: eps, Types: webhook.EventTypes(), CanAdd: h.opts.Allows(p.Role, ManageWebhooks)}, true
}

// createWebhook adds an endpoint and shows its signing secret, once.
func (h webhookPages) createWebhook(w http.ResponseWriter, r *http.Request, p Person) {
	v, ok := h.webhooksView(w, r, p)
	if !ok {
		return
	}
	t := h.translator(r)
	v.URL, v.Events = strings.TrimSpace(r.PostForm.Get("url")), r.PostForm["events"]
	if err := webhook.ValidateURL(v.URL, h.opts.WebhookAllowPrivate); err != nil {
		v.Errors.add("url", sayProblem(t, err))
	}
	if len(v.Events) == 0 {
		v.Errors.add("events-"+v.Types[0], t("error_webhook_events"))
	}
	for _, e := range v.Events {
		if !webhook.ValidEventType(e) {
			v.Errors.add("events-"+v.Types[0], t("error_choice"))
			break
		}
	}
	if len(v.Errors) > 0 {
		h.render(w, r, http.StatusBadRequest, "webhooks", "webhooks_title", "webhooks", v)
		return
	}
	slices.Sort(v.Events)
	id := store.NewID("whk")
	secret, sealed, err := h.opts.WebhookSecrets.New(id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ep, err := h.opts.Webhooks.CreateWebhookEndpoint(r.Context(), webhookdb.WebhookEndpoint{ID: id, AccountID: p.AccountID, URL: v.URL,
		Events: slices.Compact(v.Events), Secret: sealed})
	if errors.Is(err, accountdb.ErrQuotaExceeded) {
		v.Errors.add("url", t("error_webhook_quota"))
		h.render(w, r, http.StatusBadRequest, "webhooks", "webhooks_title", "webhooks", v)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v.Endpoints = append([]webhookdb.WebhookEndpoint{ep}, v.Endpoints...)
	v.Created, v.Secret, v.URL, v.Events = &ep, secret, "", nil
	h.render(w, r, http.StatusCreated, "webhooks", "webhooks_title", "webhooks", v)
}

type webhookView struct {
	Endpoint   webhookdb.WebhookEndpoint
	Status     string // the deliveries shown: "", pending, succeeded, failed
	Deliveries []webhookdb.WebhookDelivery
	Next       string
	Secret     string // a new secret just made by a rotation, shown once
	Error      string // why a retry or replay was refused
	// The replay form, as typed.
	Since, Until string
	Errors       fieldErrors
	CanManage    bool
	CanRetry     bool
}

func (h webhookPages) loadWebhook(w http.ResponseWriter, r *http.Request, p Person) (webhookView, bool) {
	id := r.PathValue("id")
	if !store.ValidID("whk", id) {
		h.notFound(w, r)
		return webhookView{}, false
	}
	ep, err := h.opts.Webhooks.WebhookEndpoint(r.Context(), p.AccountID, id)
	if err != nil {
		h.fail(w, r, notFound(err))
		return webhookView{}, false
	}
	v := webhookView{Endpoint: ep, Status: r.URL.Query().Get("status"), CanManage: h.opts.Allows(p.Role, ManageWebhooks),
		CanRetry: h.opts.Allows(p.Role, RetryWebhook)}
	if !slices.Contains([]string{"", webhookdb.DeliveryPending, webhookdb.DeliverySucceeded, webhookdb.DeliveryFailed}, v.Status) {
		v.Status = ""
	}
	page, ok := readPage(r.URL.Query())
	if !ok {
		h.notFound(w, r)
		return webhookView{}, false
	}
	ds, next, err := h.opts.Webhooks.ListWebhookDeliveries(r.Context(), p.AccountID, id, v.Status, page)
	if err != nil {
		h.fail(w, r, notFound(err))
		return webhookView{}, false
	}
	v.Deliveries = ds
	if next != nil {
		q := url.Values{"cursor": {next.Encode()}}
		if v.Status != "" {
			q.Set("status", v.Status)
		}
		v.Next = strings.TrimSuffix(Prefix, "/") + "/webhooks/" + id + "?" + q.Encode()
	}
	return v, true
}

func (h webhookPages) webhookPage(w http.ResponseWriter, r *http.Request, p Person) {
	v, ok := h.loadWebhook(w, r, p)
	if !ok {
		return
	}
	h.render(w, r, http.StatusOK, "webhook", "webhook_title", "webhooks", v)
}

// setWebhookEnabled turns an endpoint on or off.
func (h webhookPages) setWebhookEnabled(enabled bool) func(w http.ResponseWriter, r *http.Request, p Person) {
	return func(w http.ResponseWriter, r *http.Request, p Person) {
		id := r.PathValue("id")
		if !store.ValidID("whk", id) {
			h.notFound(w, r)
			return
		}
		if _, err := h.opts.Webhooks.UpdateWebhookEndpoint(r.Context(), p.AccountID, id, webhookdb.WebhookEndpointUpdate{Enabled: &enabled}); err != nil {
			h.fail(w, r, notFound(err))
			return
		}
		done := "webhook_disabled"
		if enabled {
			done = "webhook_enabled"
		}
		h.seeOther(w, r, "/webhooks/"+id, done)
	}
}

// rotateWebhook makes a new signing secret and shows it once; the old
// one signs beside it for webhook.SecretOverlap.
func (h webhookPages) rotateWebhook(w http.ResponseWriter, r *http.Request, p Person) {
	id := r.PathValue("id")
	if !store.ValidID("whk", id) {
		h.notFound(w, r)
		return
	}
	if _, err := h.opts.Webhooks.WebhookEndpoint(r.Context(), p.AccountID, id); err != nil {
		h.fail(w, r, notFound(err))
		return
	}
	secret, sealed, err := h.opts.WebhookSecrets.New(id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if _, err := h.opts.Webhooks.RotateWebhookSecret(r.Context(), p.AccountID, id, sealed, webhook.SecretOverlap); err != nil {
		h.fail(w, r, notFound(err))
		return
	}
	v, ok := h.loadWebhook(w, r, p)
	if !ok {
		return
	}
	v.Secret = secret
	h.render(w, r, http.StatusOK, "webhook", "webhook_title", "webhooks", v)
}

// retryDelivery sends one failed delivery again.
func (h webhookPages) retryDelivery(w http.ResponseWriter, r *http.Request, p Person) {
	id, msg := r.PathValue("id"), r.PathValue("msg")
	if !store.ValidID("whk", id) || !store.ValidID("msg", msg) {
		h.notFound(w, r)
		return
	}
	_, err := h.opts.Webhooks.RetryWebhookDelivery(r.Context(), p.AccountID, id, msg)
	if h.replayRefused(w, r, p, err) {
		return
	}
	h.seeOther(w, r, "/webhooks/"+id, "delivery_retried")
}

// replayWebhook sends the endpoint's failed deliveries of a period again.
func (h webhookPages) replayWebhook(w http.ResponseWriter, r *http.Request, p Person) {
	id := r.PathValue("id")
	if !store.ValidID("whk", id) {
		h.notFound(w, r)
		return
	}
	t := h.translator(r)
	since, until := r.PostForm.Get("since"), r.PostForm.Get("until")
	var errs fieldErrors
	var f webhookdb.ReplayFilter
	day := func(field, v string) time.Time {
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			errs.add(field, t("error_date"))
		}
		return d
	}
	f.Since = day("since", since)
	if until != "" {
		f.Until = day("until", until).AddDate(0, 0, 1) // the day is included
	}
	if len(errs) == 0 {
		if bound, _ := f.Problem(h.now()); bound != "" {
			errs.add(bound, t("error_replay_period"))
		}
	}
	if len(errs) > 0 {
		v, ok := h.loadWebhook(w, r, p)
		if !ok {
			return
		}
		v.Since, v.Until, v.Errors = since, until, errs
		h.render(w, r, http.StatusBadRequest, "webhook", "webhook_title", "webhooks", v)
		return
	}
	_, err := h.opts.Webhooks.ReplayWebhookDeliveries(r.Context(), p.AccountID, id, f, false)
	if h.replayRefused(w, r, p, err) {
		return
	}
	h.seeOther(w, r, "/webhooks/"+id, "replayed")
}

// replayRefused answers a retry or replay the store refused; false when
// there was nothing to answer.
func (h webhookPages) replayRefused(w http.ResponseWriter, r *http.Request, p Person, err error) bool {
	if err == nil {
		return false
	}
	key := ""
	switch {
	case errors.Is(err, webhookdb.ErrEndpointDisabled):
		key = "error_endpoint_disabled"
	case errors.Is(err, webhookdb.ErrNotFailed):
		key = "error_not_failed"
	default:
		h.fail(w, r, notFound(err))
		return true
	}
	v, ok := h.loadWebhook(w, r, p)
	if !ok {
		return true
	}
	v.Error = h.translator(r)(key)
	h.render(w, r, http.StatusConflict, "webhook", "webhook_title", "webhooks", v)
	return true
}
