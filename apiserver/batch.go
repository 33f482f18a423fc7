package apiserver

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/internal/apiwire"
	"github.com/touchpoint/touchpoint/internal/giveway"
	"github.com/touchpoint/touchpoint/internal/httpmw"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/eventdb"
)

// Limits of POST /events/batch. Each event also keeps the
// limits of POST /events, its encoded size included (MaxBodyBytes).
const (
	maxBatchEvents = 500
	maxBatchBody   = 8 << 20
)

// DefaultBatchInflightBytes is the default cap on the request bytes of
// POST /events/batch in flight in one API process.
const DefaultBatchInflightBytes = 64 << 20

// DefaultBatchReadTimeout is how long a batch's body may take to arrive
// when Options leaves it 0.
const DefaultBatchReadTimeout = 10 * time.Second

// batchIn is POST /events/batch. Its events are decoded one by one, so
// that each gets its own problem.
type batchIn struct {
	Events []json.RawMessage `json:"events" required:"true"`
}

// decodeBatch checks a batch as decodeStrict checks a body and returns
// its events unread. They were checked for syntax with the batch; each
// is then decoded on its own (jsonstrict.DecodeValid).
func decodeBatch(body []byte) ([]json.RawMessage, error) {
	raws, err := jsonstrict.Scan[batchIn](body)
	if err != nil {
		return nil, decodeError(err, "the body")
	}
	return raws, nil
}

// batchEventIn is one event of a batch: an event as for POST /events plus
// its idempotency key, which shares the key space of the Idempotency-Key
// header.
type batchEventIn struct {
	eventIn
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

// batchItem is the answer for one event of a batch: the status POST
// /events would have given it, with the acceptance or the problem.
type batchItem struct {
	Index    int      `json:"index"`
	Status   int      `json:"status"`
	Message  string   `json:"Message,omitempty"`
	EventRef string   `json:"EventRef,omitempty"`
	Problem  *problem `json:"problem,omitempty"`
}

type batchOut struct {
	Items []batchItem `json:"items"`
	// overQuota: some events were over the daily quota of accepted
	// events; the answer carries their Retry-After.
	overQuota bool
}

// createEvents is POST /events/batch: every valid event is accepted in
// one statement with its start order (all of them or, when PostgreSQL
// fails, none: then the whole request is a 503), every invalid one gets
// its own problem. The answer is 200 whenever the batch itself could be
// read, even if no event was accepted.
//
// The bytes of the batches in flight are capped (batchBytes): in the
// process, and for one account at a quarter of that, counted as they
// are read and given back once the answer is decided. A batch whose
// bytes do not fit is answered 503 with Retry-After, the rest unread; a
// body that has not arrived whole within the read timeout, 408. So a
// client that declares much and sends little holds little, and one
// account's slow or huge uploads leave room for every other account's.
func (s eventAPI) createEvents(w http.ResponseWriter, r *http.Request) {
	if err := checkJSONType(r); err != nil {
		s.fail(w, r, err)
		return
	}
	if r.ContentLength > maxBatchBody {
		s.fail(w, r, newError(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", maxBatchBody))
		return
	}
	out, err := s.takeBatch(w, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if out.overQuota {
		w.Header().Set("Retry-After", retryAtMidnight(s.now()))
	}
	apiwire.WriteJSON(w, http.StatusOK, out)
}

// takeBatch reads a batch and accepts it, holding its bytes until the
// answer is decided.
func (s eventAPI) takeBatch(w http.ResponseWriter, r *http.Request) (batchOut, error) {
	account := accountID(r)
	body, held, err := s.readBatch(w, r, account)
	defer s.batchBytes.Give(account, held)
	if err != nil {
		return batchOut{}, err
	}
	return s.acceptBatch(r, body)
}

// readBatch reads a batch's body within the read timeout, counting its
// bytes against the account's and the process's budget as they arrive.
// It returns how many bytes it holds, also on error.
func (s eventAPI) readBatch(w http.ResponseWriter, r *http.Request, account string) ([]byte, int64, error) {
	// The deadline is the connection's: lifted once the body is in, so
	// that what follows does not meet it, and moved to the past when the
	// body is refused, so that nothing more of it is read.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.batchReadTimeout)) // unsupported only by writers that read nothing from a peer
	body, held, err := s.batchBytes.Read(account, r.Body, maxBatchBody)
	if err == nil {
		_ = rc.SetReadDeadline(time.Time{})
	} else {
		_ = rc.SetReadDeadline(time.Unix(1, 0))
	}
	var e *apiError
	switch {
	case err == nil:
		return body, held, nil
	case errors.Is(err, httpmw.ErrTooLarge):
		e = newError(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", maxBatchBody)
	case errors.Is(err, httpmw.ErrAccountBytes):
		e = newError(http.StatusServiceUnavailable, "this account's batches hold as many bytes as one account may in this "+
			"API process (%d, a quarter of its %d); retry later", s.batchBytes.Share(), s.batchBytes.Limit())
		e.header = map[string]string{"Retry-After": strconv.Itoa(retryAfter)}
	case errors.Is(err, httpmw.ErrProcessBytes):
		e = newError(http.StatusServiceUnavailable, "this API process holds as many batch bytes as it may (%d); retry later",
			s.batchBytes.Limit())
		e.header = map[string]string{"Retry-After": strconv.Itoa(retryAfter)}
	case errors.Is(err, os.ErrDeadlineExceeded):
		e = newError(http.StatusRequestTimeout, "the body did not arrive within %s", s.batchReadTimeout)
	default:
		return nil, held, newError(http.StatusBadRequest, "the body could not be read")
	}
	// The rest of the body stays unread: the connection cannot be reused.
	if e.header == nil {
		e.header = map[string]string{}
	}
	e.header["Connection"] = "close"
	return nil, held, e
}

// acceptBatch checks and accepts a batch whose bytes are held.
func (s eventAPI) acceptBatch(r *http.Request, body []byte) (batchOut, error) {
	raws, err := decodeBatch(body)
	if err != nil {
		return batchOut{}, err
	}
	switch n := len(raws); {
	case n > maxBatchEvents:
		return batchOut{}, newError(http.StatusRequestEntityTooLarge, "the batch has %d events; at most %d are allowed in one request", n, maxBatchEvents)
	case n == 0:
		return batchOut{}, invalid(fieldError{Field: "events", Message: fmt.Sprintf("must have 1 to %d events", maxBatchEvents)})
	}
	defer s.load.BeginAccept(giveway.BatchWeight(len(raws)))()
	requestID := infoFrom(r.Context()).id
	items := make([]batchItem, len(raws))
	var events []eventdb.NewEvent
	var at []int // events[k] is item at[k]
	for i, raw := range raws {
		items[i].Index = i
		e, err := s.batchEvent(r, raw)
		if err != nil {
			items[i].setProblem(err, requestID)
			continue
		}
		events = append(events, e)
		at = append(at, i)
	}
	// Over the daily quota of accepted events the first events of the
	// batch that fit are accepted, each one after them gets its own 429.
	overQuota := false
	if len(events) > 0 {
		out, err := s.events.AcceptEvents(r.Context(), events)
		if err != nil {
			return batchOut{}, err
		}
		fresh := 0
		for k, o := range out {
			it := &items[at[k]]
			var quota *accountdb.QuotaError
			if errors.As(o.Err, &quota) {
				overQuota = true
			}
			if o.Err != nil {
				it.setProblem(s.batchOutcomeError(o.Err, events[k].Type), requestID)
				continue
			}
			if !o.Replayed {
				fresh++
				s.metrics.EventAccepted()
			}
			it.Status, it.EventRef = http.StatusAccepted, o.EventID
			it.Message = fmt.Sprintf("Your event (%s) was accepted for processing.", o.EventID)
		}
		if fresh > 0 {
			s.notify()
		}
	}
	return batchOut{Items: items, overQuota: overQuota}, nil
}

// batchEvent decodes and validates one event of a batch as POST /events
// does its body.
func (s eventAPI) batchEvent(r *http.Request, raw json.RawMessage) (eventdb.NewEvent, error) {
	if int64(len(raw)) > s.maxBody {
		return eventdb.NewEvent{}, newError(http.StatusRequestEntityTooLarge, "the event is larger than %d bytes", s.maxBody)
	}
	var in batchEventIn
	if err := jsonstrict.DecodeValid(raw, &in); err != nil {
		return eventdb.NewEvent{}, decodeError(err, "the event")
	}
	errs := in.validate()
	if !validIdempotencyKey(in.IdempotencyKey) {
		errs = append(errs, apiwire.FieldError{Field: "idempotencyKey", Message: fmt.Sprintf("must be at most %d printable ASCII characters", maxIdemKey)})
	}
	if err := errs.Err(); err != nil {
		return eventdb.NewEvent{}, err
	}
	return newStoreEvent(&in.eventIn, accountID(r), in.IdempotencyKey)
}

// validIdempotencyKey: at most maxIdemKey printable ASCII characters.
func validIdempotencyKey(key string) bool {
	return len(key) <= maxIdemKey && strings.IndexFunc(key, func(c rune) bool { return c < 0x21 || c > 0x7e }) < 0
}

// newStoreEvent normalises a validated event and makes what the store
// accepts, as POST /events does: the canonical JSON of the event is the
// payload and, with a key, the request hash.
func newStoreEvent(in *eventIn, accountID, key string) (eventdb.NewEvent, error) {
	in.Transaction.Date = in.Transaction.Date.UTC().Truncate(time.Millisecond)
	payload, err := json.Marshal(in) // canonical: fixed field order, sorted metadata keys
	if err != nil {
		return eventdb.NewEvent{}, err
	}
	e := eventdb.NewEvent{
		AccountID:            accountID,
		Type:                 in.Type,
		ChannelID:            in.Channel.ID,
		CustomerEmail:        in.Customer.Email,
		CustomerReference:    in.Customer.Reference,
		TransactionReference: in.Transaction.Reference,
		TransactionDate:      in.Transaction.Date,
		Payload:              payload,
		IdempotencyKey:       key,
	}
	if key != "" {
		sum := sha256.Sum256(payload)
		e.RequestHash = sum[:]
	}
	if in.EstimatedDeliveryDate != "" {
		d, _ := time.Parse(time.DateOnly, in.EstimatedDeliveryDate) // validated
		e.EstimatedDeliveryDate = &d
	}
	return e, nil
}

// batchOutcomeError words a store outcome as POST /events would.
func (s eventAPI) batchOutcomeError(err error, typ string) error {
	var quota *accountdb.QuotaError
	switch {
	case errors.As(err, &quota):
		return eventQuotaError(quota.Limit, s.now())
	case errors.Is(err, eventdb.ErrUnknownEventType):
		return unprocessable("type", fmt.Sprintf("there is no event type named %q; create it with POST /event-types", typ))
	case errors.Is(err, eventdb.ErrUnknownChannel):
		return unprocessable("channel.id", "there is no such channel in this account")
	case errors.Is(err, eventdb.ErrIdempotencyMismatch):
		return unprocessable("idempotencyKey", "was already used with a different request body")
	case errors.Is(err, eventdb.ErrDuplicateIdempotencyKey):
		return unprocessable("idempotencyKey", "is the key of an earlier event of this batch")
	}
	return err
}

// setProblem makes the item the problem answer of err, with the batch's
// request id. Only errors meant
// for clients (apiError, apiwire.Invalid) show their text; anything else is a 503 when
// PostgreSQL is unavailable and a 500 otherwise, without details.
func (it *batchItem) setProblem(err error, requestID string) {
	var ae *apiError
	var fields apiwire.Invalid
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &fields):
		ae = invalidFields(fields)
	case errors.Is(err, store.ErrUnavailable):
		ae = newError(http.StatusServiceUnavailable, "a dependency is unavailable; retry this event later")
	default:
		ae = newError(http.StatusInternalServerError, "internal error")
	}
	title := http.StatusText(ae.status)
	it.Status = ae.status
	it.Problem = &problem{Type: "about:blank", Title: title, Status: ae.status, Detail: ae.detail, Message: ae.detail,
		RequestID: requestID, Errors: ae.fields}
}
