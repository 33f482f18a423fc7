package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/internal/apiquery"
	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/templatedb"
)

// retryAfter is the Retry-After of a 503, in seconds.
const retryAfter = 5

// maxFieldErrors bounds the field errors of one answer: as many as the
// decoder collects.
const maxFieldErrors = jsonstrict.MaxFieldErrors

// fieldError is one entry of a validation problem's errors: a dotted,
// indexed path into the request (customer.email, products[2].url, or a
// query parameter's name) and what is wrong with it.
type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// problem is an RFC 9457 body. Message repeats Detail for clients of the
// documented API, which read Message.
type problem struct {
	Type      string       `json:"type"`
	Title     string       `json:"title"`
	Status    int          `json:"status"`
	Detail    string       `json:"detail"`
	Message   string       `json:"Message"`
	RequestID string       `json:"requestId,omitempty"`
	Errors    []fieldError `json:"errors,omitempty"`
}

// apiError is an error whose status and text the client may see. Every
// other error reaching fail is mapped there and its text kept private.
type apiError struct {
	status int
	detail string
	fields []fieldError
	header map[string]string // e.g. WWW-Authenticate, Allow
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.status, e.detail) }

// statusError is an error of a package whose handlers the API mounts (a
// refused SMS callback, a public endpoint's 404): its status and its text
// are for the client.
type statusError interface {
	error
	HTTPStatus() int
}

func newError(status int, format string, args ...any) *apiError {
	return &apiError{status: status, detail: fmt.Sprintf(format, args...)}
}

// invalid is a 400 listing the field errors, the first maxFieldErrors of
// them: a hostile body must not make an answer many times its own size.
// The detail carries the first one so clients that only show Message
// still learn something, and how many there were in all.
func invalid(fields ...fieldError) *apiError {
	all := make(apiwire.Invalid, len(fields))
	for i, f := range fields {
		all[i] = apiwire.FieldError(f)
	}
	detail := all.Detail()
	if len(fields) > maxFieldErrors {
		detail += fmt.Sprintf("; the first %d are listed", maxFieldErrors)
		fields = fields[:maxFieldErrors]
	}
	return &apiError{status: http.StatusBadRequest, detail: detail, fields: fields}
}

// queryError is the 400 of a query string refused: about the whole of it
// when it is malformed, else listing the parameters' mistakes.
func queryError(e *apiquery.Error) *apiError {
	if e.Malformed {
		return badRequest("the query string is malformed")
	}
	fields := make([]fieldError, len(e.Fields))
	for i, f := range e.Fields {
		fields[i] = fieldError(f)
	}
	return invalid(fields...)
}

// invalidFields is the 400 of the mistakes of a request (apiwire.Invalid).
func invalidFields(fe apiwire.Invalid) *apiError {
	fields := make([]fieldError, len(fe))
	for i, f := range fe {
		fields[i] = fieldError(f)
	}
	return invalid(fields...)
}

// badRequest is a 400 about the request as a whole (malformed JSON, …).
func badRequest(detail string) *apiError { return newError(http.StatusBadRequest, "%s", detail) }

// fail is the one place that turns an error into a status and a problem
// body. Internal errors are recorded for the request log line (with the
// request id) and never shown to the client.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	info := infoFrom(r.Context())
	var ae *apiError
	var subj *apiwire.Subject
	var fields apiwire.Invalid
	var unproc *apiwire.Unprocessable
	var quota *accountdb.QuotaError
	var refused statusError
	var badQuery *apiquery.Error
	errors.As(err, &subj)
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &badQuery):
		ae = queryError(badQuery)
	case errors.As(err, &fields):
		ae = invalidFields(fields)
	case errors.As(err, &unproc):
		ae = unprocessable(unproc.Field, unproc.Message)
	case errors.As(err, &refused):
		ae = newError(refused.HTTPStatus(), "%s", refused.Error())
	case errors.Is(err, store.ErrNotFound):
		ae = newError(http.StatusNotFound, "not found")
		if subj != nil {
			ae.detail = subj.Kind + " not found"
		}
	case errors.As(err, &quota) && quota.Kind == templatedb.QuotaTestSends:
		ae = newError(http.StatusTooManyRequests, "this account may send at most %d tests of its templates a day (UTC)", quota.Limit)
		ae.header = map[string]string{"Retry-After": retryAtMidnight(s.now())}
	case errors.As(err, &quota) && quota.Kind == accountdb.QuotaDailySends:
		ae = newError(http.StatusTooManyRequests, "the account's daily send quota of %d is used up; "+
			"the operator can raise it (touchpoint accounts set-quota)", quota.Limit)
		ae.header = map[string]string{"Retry-After": retryAtMidnight(s.now())}
	case errors.As(err, &quota) && quota.Kind == accountdb.QuotaRecipient:
		ae = newError(http.StatusTooManyRequests, "the account may send at most %d messages a day (UTC) to one address, "+
			"invites and tests alike; the operator can raise it (touchpoint accounts set-quota --recipient-daily-cap)", quota.Limit)
		ae.header = map[string]string{"Retry-After": retryAtMidnight(s.now())}
	case errors.As(err, &quota) && quota.Kind == accountdb.QuotaEvents:
		ae = eventQuotaError(quota.Limit, s.now())
	case errors.As(err, &quota):
		// 429, though waiting will not help: the quota is of the account.
		what := map[string]string{accountdb.QuotaChannels: "channels", accountdb.QuotaEventTypes: "event types",
			accountdb.QuotaWebhooks: "webhook endpoints"}[quota.Kind]
		ae = newError(http.StatusTooManyRequests, "this account may have at most %d %s; "+
			"the operator can raise its quota (touchpoint accounts set-quota)", quota.Limit, what)
	case errors.Is(err, store.ErrConflict):
		ae = newError(http.StatusConflict, "conflicts with an existing resource")
		if subj != nil {
			ae.detail = fmt.Sprintf("%s name %q is already taken", subj.Kind, subj.Name)
		}
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, auth.ErrUnavailable):
		info.err = err
		ae = newError(http.StatusServiceUnavailable, "a dependency is unavailable; retry later")
		ae.header = map[string]string{"Retry-After": strconv.Itoa(retryAfter)}
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client went away; nobody reads this answer.
		info.err = err
		ae = newError(499, "client closed the request")
	default:
		info.err = err
		ae = newError(http.StatusInternalServerError, "internal error; report the request id %s if it persists", info.id)
	}
	for k, v := range ae.header {
		w.Header().Set(k, v)
	}
	writeProblem(w, info.id, ae)
}

// eventQuotaError is the 429 of an event over the account's daily quota
// of accepted events, with Retry-After until the next UTC midnight.
func eventQuotaError(limit int, now time.Time) *apiError {
	e := newError(http.StatusTooManyRequests, "the account's quota of %d accepted events a day (UTC) is used up; "+
		"send again after midnight UTC, or ask the operator to raise it (touchpoint accounts update --daily-events)", limit)
	e.header = map[string]string{"Retry-After": retryAtMidnight(now)}
	return e
}

func writeProblem(w http.ResponseWriter, requestID string, e *apiError) {
	title := http.StatusText(e.status)
	if title == "" {
		title = "Error"
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.status)
	json.NewEncoder(w).Encode(problem{ // a failed write means the client is gone
		Type: "about:blank", Title: title, Status: e.status, Detail: e.detail, Message: e.detail,
		RequestID: requestID, Errors: e.fields,
	})
}

// retryAtMidnight is the Retry-After of a daily limit: the seconds to the
// next UTC midnight.
func retryAtMidnight(now time.Time) string {
	next := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	return fmt.Sprint(int(next.Sub(now).Seconds()) + 1)
}
