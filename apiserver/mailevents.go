package apiserver

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/mailevents"
	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/store/reportdb"
)

// POST /mail-events/{provider}: the mail providers' reports of what
// became of a message after their relay took it. The route carries no
// token: package mailevents verifies each request as its provider signs
// it, and the store applies the reports. Providers retry whatever is not
// answered 2xx, for days, so a report on a message Touchpoint does not
// know is answered 200 (and counted): retrying cannot make it known; so
// is Mailgun's retry of a request whose reports were applied (its token
// seen before), which applies nothing twice. A request that does not
// verify is 401, as is a spent Mailgun token carrying a report it did not
// carry then (a replay); an SNS message of a topic not listed is 403,
// before anything is fetched for it — SNS does not retry a 4xx. The route
// is limited per client address (reportLimits) and reads at most
// mailevents.MaxBody before the signature is checked.

// mailEventAPI is the route of the mail providers' reports.
type mailEventAPI struct{ *server }

// mailEventsOut is the answer to a provider's request.
type mailEventsOut struct {
	// Reports on Touchpoint's messages, of which Unknown on messages it
	// does not know; Ignored events said nothing of delivery (opens,
	// clicks, …).
	Reports int `json:"reports"`
	Unknown int `json:"unknown"`
	Ignored int `json:"ignored"`
}

func (s mailEventAPI) mailEvents(w http.ResponseWriter, r *http.Request) {
	provider := mux.Vars(r)["provider"]
	v := s.mailEventVerifiers[provider]
	known, ok := mailevents.Lookup(provider)
	if v == nil {
		if !ok {
			s.fail(w, r, newError(http.StatusNotFound, "no mail provider %s; the providers are %v", strconv.Quote(provider), mailevents.Names()))
			return
		}
		s.refuseMailEvents(w, r, provider, metrics.MailRefusedUnconfigured,
			newError(http.StatusNotFound, "the reports of %s are not taken: it is not configured on this server", provider))
		return
	}
	body, err := readBody(w, r, mailevents.MaxBody)
	if err != nil {
		reason := metrics.MailRefusedMalformed
		if ae := (*apiError)(nil); errors.As(err, &ae) && ae.status == http.StatusRequestEntityTooLarge {
			reason = metrics.MailRefusedTooLarge
		}
		s.refuseMailEvents(w, r, provider, reason, err)
		return
	}
	batch, err := v.Read(r.Context(), r.Header, body)
	if err != nil {
		infoFrom(r.Context()).err = err
		switch {
		case errors.Is(err, mailevents.ErrSignature):
			e := newError(http.StatusUnauthorized, "the request does not verify as %s's: %v", provider, err)
			if known.Challenge != "" {
				e.header = map[string]string{"WWW-Authenticate": known.Challenge}
			}
			s.refuseMailEvents(w, r, provider, metrics.MailRefusedSignature, e)
		case errors.Is(err, mailevents.ErrTopic):
			err = newError(http.StatusForbidden, "%s; list it in TOUCHPOINT_SES_TOPIC_ARNS to take its notifications", err)
			s.refuseMailEvents(w, r, provider, metrics.MailRefusedTopic, err)
		case errors.Is(err, mailevents.ErrMalformed):
			s.refuseMailEvents(w, r, provider, metrics.MailRefusedMalformed, badRequest(err.Error()))
		case errors.Is(err, mailevents.ErrUnavailable):
			e := newError(http.StatusServiceUnavailable, "SNS could not be reached to verify or confirm the message; retry later")
			e.header = map[string]string{"Retry-After": strconv.Itoa(retryAfter)}
			s.refuseMailEvents(w, r, provider, metrics.MailRefusedUnavailable, e)
		default:
			s.fail(w, r, err)
		}
		return
	}
	if batch.Note != "" {
		s.log.InfoContext(r.Context(), "mail provider: "+batch.Note, "provider", provider, "request_id", infoFrom(r.Context()).id)
	}
	out := mailEventsOut{Reports: len(batch.Reports), Ignored: batch.Ignored}
	if len(batch.Reports) > 0 || batch.Nonce != "" {
		var nonce *reportdb.MailNonce
		if batch.Nonce != "" {
			nonce = &reportdb.MailNonce{Provider: provider, Nonce: batch.Nonce, SignedAt: batch.NonceTime}
		}
		reports := make([]reportdb.MailReport, len(batch.Reports))
		for i, rep := range batch.Reports {
			reports[i] = reportdb.MailReport{Provider: rep.Provider, ID: rep.ID, Outcome: rep.Outcome, EventID: rep.EventID,
				Kind: rep.Kind, Detail: rep.Detail, At: rep.At}
		}
		results, err := s.reports.ApplyMailReports(r.Context(), nonce, reports)
		if errors.Is(err, reportdb.ErrReplay) {
			infoFrom(r.Context()).err = err
			s.refuseMailEvents(w, r, provider, metrics.MailRefusedReplay,
				newError(http.StatusUnauthorized, "this signature was used before: a replayed request"))
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		for i, res := range results {
			if res == reportdb.MailUnknown {
				out.Unknown++
				s.metrics.MailReportUnknown(provider)
				continue
			}
			s.metrics.MailReport(provider, string(batch.Reports[i].Outcome))
		}
	}
	apiwire.WriteJSON(w, http.StatusOK, out)
}

// refuseMailEvents answers err to a provider's request and counts the
// refusal.
func (s mailEventAPI) refuseMailEvents(w http.ResponseWriter, r *http.Request, provider, reason string, err error) {
	s.metrics.MailEventRefused(provider, reason)
	s.fail(w, r, err)
}
