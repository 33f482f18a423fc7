package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The webhook delivery workflow and its contract. One runs
// per delivery row (a message to one endpoint), started by the webhook
// starter from the outbox that state changes write in PostgreSQL. It
// makes one activity call, retried by Temporal with back-off for up to
// three days, and gives the delivery up when those run out.
//
// One workflow per delivery rather than per endpoint: deliveries fan out
// independently (a slow endpoint delays only its own messages), each
// history stays a handful of events whatever the traffic, and nothing
// needs continue-as-new. The price is order: two deliveries to one
// endpoint may arrive in either order, as Standard Webhooks allows;
// receivers order by the message's timestamp.

// WebhookTaskQueue is the task queue of delivery workflows and their
// activities: their own, so invites never wait behind webhook retries.
const WebhookTaskQueue = "webhooks"

// WebhookWorkflowType is the registered name of the delivery workflow.
const WebhookWorkflowType = "DeliverWebhook"

// WebhookWorkflowID is the ID of a delivery's workflow: the delivery's ID
// (msg-…), which is also its webhook-id, so support finds one from the
// other and a second start for one delivery is rejected. The nth replay
// of a failed delivery runs as msg-….replay-n: once, like the first.
func WebhookWorkflowID(deliveryID string, replay int) string {
	if replay == 0 {
		return deliveryID
	}
	return fmt.Sprintf("%s.replay-%d", deliveryID, replay)
}

// WebhookInput starts a delivery workflow. It names the delivery; the
// activity reads the URL, the secrets and the body from PostgreSQL, so
// no payload and no secret enters Temporal.
type WebhookInput struct {
	DeliveryID string
	EndpointID string
	AccountID  string
	Type       string // the message's event type, e.g. invite.sent
}

// How a delivery ended, in WebhookResult.Status.
const (
	WebhookSucceeded = "succeeded" // answered 2xx
	WebhookFailed    = "failed"    // given up: retries ran out, 410 Gone, endpoint disabled
	// WebhookDeleted: the endpoint, and with it the delivery, was deleted.
	WebhookDeleted = "deleted"
)

// WebhookResult is how a delivery ended: its status, its attempts and the
// last answer.
type WebhookResult struct {
	Status         string `json:"status"`
	Attempts       int    `json:"attempts"`
	LastStatusCode int    `json:"lastStatusCode,omitempty"`
	LastError      string `json:"lastError,omitempty"`
}

// The delivery workflow's activities, registered by the worker from
// activities.Webhooks, whose method names these are.
const (
	// DeliverWebhook makes one attempt and records it: WebhookResult once
	// the delivery is decided, an ErrTypeWebhookAttempt error (retried)
	// while it is not.
	DeliverWebhookActivity = "DeliverWebhook"
	// GiveUpWebhook fails a delivery whose retries ran out: WebhookResult.
	GiveUpWebhookActivity = "GiveUpWebhook"
)

// Error types of the delivery workflow.
const (
	// ErrTypeWebhookAttempt: an attempt was not answered 2xx or 410 (or
	// not at all); the activity is retried.
	ErrTypeWebhookAttempt = "WebhookAttemptFailed"
	// ErrTypeWebhookFailed: the run's error when the delivery failed.
	ErrTypeWebhookFailed = "WebhookFailed"
)

// GiveUpWebhookInput is a delivery to fail and why.
type GiveUpWebhookInput struct {
	DeliveryID string
	// Reason is stored as the delivery's last error when it has none.
	Reason string
}

// WebhookOptions are the worker-side timeouts and retries of deliveries.
// Zero fields take the defaults of DefaultWebhookOptions.
type WebhookOptions struct {
	// AttemptTimeout bounds one attempt: the HTTP call (10 s) and the
	// database reads and writes around it.
	AttemptTimeout time.Duration
	// InitialInterval is the wait after the first failed attempt; it
	// doubles up to MaxInterval.
	InitialInterval time.Duration
	MaxInterval     time.Duration
	// GiveUpAfter bounds all attempts of a delivery (ScheduleToClose).
	GiveUpAfter time.Duration
	// MaxAttempts caps the attempts; 0: until GiveUpAfter.
	MaxAttempts int32
	// StepTimeout bounds giving up (a database write, retried until it
	// succeeds).
	StepTimeout time.Duration
}

// DefaultWebhookOptions are the documented retries:
// a first retry after 10 s, doubling to at most 1 h between tries, for
// up to 3 days.
func DefaultWebhookOptions() WebhookOptions {
	return WebhookOptions{
		AttemptTimeout:  time.Minute,
		InitialInterval: 10 * time.Second,
		MaxInterval:     time.Hour,
		GiveUpAfter:     72 * time.Hour,
		StepTimeout:     30 * time.Second,
	}
}

func (o WebhookOptions) withDefaults() WebhookOptions {
	d := DefaultWebhookOptions()
	for _, f := range []struct{ v, def *time.Duration }{
		{&o.AttemptTimeout, &d.AttemptTimeout}, {&o.InitialInterval, &d.InitialInterval},
		{&o.MaxInterval, &d.MaxInterval}, {&o.GiveUpAfter, &d.GiveUpAfter}, {&o.StepTimeout, &d.StepTimeout},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return o
}

// DeliverWebhook is the delivery workflow with DefaultWebhookOptions.
func DeliverWebhook(ctx workflow.Context, in WebhookInput) (WebhookResult, error) {
	return DeliverWebhookWith(DefaultWebhookOptions())(ctx, in)
}

// DeliverWebhookWith returns the delivery workflow with other options, for
// the worker to register under WebhookWorkflowType.
func DeliverWebhookWith(opts WebhookOptions) func(workflow.Context, WebhookInput) (WebhookResult, error) {
	opts = opts.withDefaults()
	return func(ctx workflow.Context, in WebhookInput) (WebhookResult, error) {
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("Delivering %s to endpoint %s", in.Type, in.EndpointID))
		attempts := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout:    opts.AttemptTimeout,
			ScheduleToCloseTimeout: opts.GiveUpAfter,
			RetryPolicy: &temporal.RetryPolicy{
				InitialInterval:    opts.InitialInterval,
				BackoffCoefficient: 2,
				MaximumInterval:    opts.MaxInterval,
				MaximumAttempts:    opts.MaxAttempts,
			},
			Summary: "deliver " + in.Type,
		})
		var res WebhookResult
		err := workflow.ExecuteActivity(attempts, DeliverWebhookActivity, in).Get(ctx, &res)
		if err != nil {
			// Retries ran out (or the run was asked to stop): give the
			// delivery up, keeping the last attempt's error.
			ctx, _ := workflow.NewDisconnectedContext(ctx)
			step := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
				StartToCloseTimeout: opts.StepTimeout,
				RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute},
				Summary:             "give up",
			})
			reason := "not delivered after retrying for " + span(opts.GiveUpAfter)
			if temporal.IsCanceledError(err) {
				reason = "delivery cancelled in Temporal"
			}
			in := GiveUpWebhookInput{DeliveryID: in.DeliveryID, Reason: reason}
			if gerr := workflow.ExecuteActivity(step, GiveUpWebhookActivity, in).Get(ctx, &res); gerr != nil {
				return WebhookResult{}, gerr
			}
		}
		workflow.SetCurrentDetails(ctx, webhookDetails(in, res))
		if res.Status == WebhookFailed {
			return res, temporal.NewNonRetryableApplicationError("webhook not delivered: "+res.LastError, ErrTypeWebhookFailed, nil)
		}
		return res, nil
	}
}

// webhookDetails is the human summary shown in the Temporal UI.
func webhookDetails(in WebhookInput, r WebhookResult) string {
	s := fmt.Sprintf("%s to endpoint %s: %s after %d attempt(s)", in.Type, in.EndpointID, r.Status, r.Attempts)
	if r.LastError != "" && r.Status != WebhookSucceeded {
		s += "\n\nLast error: " + r.LastError
	}
	return s
}

// span writes a retry budget for people: "3 days", "2h0m0s".
func span(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		if n := d / (24 * time.Hour); n > 1 {
			return fmt.Sprintf("%d days", n)
		}
		return "1 day"
	}
	return d.String()
}
