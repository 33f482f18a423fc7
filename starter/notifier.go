package starter

import (
	"context"
	"log/slog"
	"time"
)

// Notifier sends the outbox NOTIFY after accept transactions commit,
// coalescing bursts: however many events are accepted while a NOTIFY is
// in flight, one more follows it.
type Notifier struct {
	outbox interface{ Notify(context.Context) error }
	logger *slog.Logger
	poke   chan struct{}
}

// NewNotifier returns a Notifier of the outbox; call Run to send.
func NewNotifier(outbox interface{ Notify(context.Context) error }, logger *slog.Logger) *Notifier {
	return &Notifier{outbox: outbox, logger: logger, poke: make(chan struct{}, 1)}
}

// Poke asks for a NOTIFY; it never blocks.
func (n *Notifier) Poke() {
	select {
	case n.poke <- struct{}{}:
	default:
	}
}

// Run sends NOTIFYs until ctx is cancelled. A failed NOTIFY is only
// logged: the starters' sweep finds the rows anyway.
func (n *Notifier) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-n.poke:
		}
		nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := n.outbox.Notify(nctx); err != nil && ctx.Err() == nil {
			n.logger.Warn("outbox notify failed; the sweep will pick the events up", "error", err)
		}
		cancel()
	}
}
