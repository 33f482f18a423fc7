package eventdb

import (
	"log/slog"
	"time"

	"github.com/lib/pq"
)

// OutboxListener wakes a workflow starter when events are accepted: a
// LISTEN on OutboxChannel over a connection of its own, which reconnects
// and listens again by itself after the database went away.
type OutboxListener struct {
	l    *pq.Listener
	wake chan struct{}
}

// ListenOutbox starts listening on OutboxChannel through databaseURL. A
// failed first LISTEN is only logged: the listener keeps trying, and the
// starter's periodic sweep finds every row meanwhile.
func ListenOutbox(databaseURL string, logger *slog.Logger) *OutboxListener {
	l := pq.NewListener(databaseURL, time.Second, 30*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil {
			logger.Warn("outbox listener", "event", ev, "error", err)
		}
	})
	if err := l.Listen(OutboxChannel); err != nil {
		logger.Warn("outbox listen failed; relying on the sweep until it reconnects", "error", err)
	}
	ol := &OutboxListener{l: l, wake: make(chan struct{}, 1)}
	go ol.forward()
	return ol
}

// forward turns notifications (and the nil pq sends after a reconnect,
// when notifications may have been missed) into coalesced wake-ups. It
// ends when Close closes pq's channel.
func (ol *OutboxListener) forward() {
	for range ol.l.Notify {
		select {
		case ol.wake <- struct{}{}:
		default:
		}
	}
}

// Wake receives when rows may be waiting in the outbox.
func (ol *OutboxListener) Wake() <-chan struct{} { return ol.wake }

// Close stops listening and closes the connection.
func (ol *OutboxListener) Close() error { return ol.l.Close() }
