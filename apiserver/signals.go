package apiserver

import (
	"context"
	"time"

	"github.com/touchpoint/touchpoint/workflows"
)

// signal is one workflow signal for Run to deliver.
type signal struct {
	eventID, name string
	arg           any
}

// signalQueue bounds the signals waiting for delivery.
const signalQueue = 1024

// signalCancel queues the cancel signal for the event's workflow. The
// cancel is already decided in PostgreSQL, so the answer never waits on
// Temporal, and a workflow that misses the signal (queue full, Temporal
// down) still finds the invite or reminder cancelled before it sends.
func (s *server) signalCancel(eventID string) {
	s.queueSignal(signal{eventID, workflows.CancelSignal, workflows.CancelRequest{Source: "api"}})
}

// SignalCancel tells the event's workflow, in the background, of a
// cancel already decided in PostgreSQL (by the console).
func (a *Server) SignalCancel(eventID string) { a.s.signalCancel(eventID) }

// signalReview queues the review signal, which ends a waiting reminder.
// The reminder's send step checks PostgreSQL too, so a lost signal never
// causes a reminder after a review.
func (s *server) signalReview(eventID, reviewID string) {
	s.queueSignal(signal{eventID, workflows.ReviewSignal, workflows.ReviewReceived{ReviewID: reviewID}})
}

func (s *server) queueSignal(sig signal) {
	if s.workflows == nil {
		return
	}
	select {
	case s.signals <- sig:
	default:
		s.log.Warn("signal queue full; the workflow will find the state in PostgreSQL", "event_id", sig.eventID, "signal", sig.name)
	}
}

// Run delivers the queued signals until ctx ends; those still queued then
// are dropped (the workflows find the state in PostgreSQL). Each delivery
// is bounded.
func (a *Server) Run(ctx context.Context) error {
	s := a.s
	for {
		select {
		case <-ctx.Done():
			return nil
		case sig := <-s.signals:
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := s.workflows.SignalWorkflow(sctx, workflows.WorkflowID(sig.eventID), "", sig.name, sig.arg)
			cancel()
			if err != nil && ctx.Err() == nil {
				s.log.Info("signal not delivered; the workflow will find the state in PostgreSQL",
					"event_id", sig.eventID, "signal", sig.name, "error", err)
			}
		}
	}
}
