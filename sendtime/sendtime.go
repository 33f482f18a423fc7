package sendtime

import (
	"sort"
	"time"
)

// Where an invite's delay starts (an invite setting's delayFrom).
const (
	FromEvent       = "event"
	FromTransaction = "transaction"
	FromDelivery    = "delivery"
)

// Plan is what an invite is scheduled from: the event's own times and the
// copy of its setting's delay, delayFrom and sendWindow taken when the
// event was accepted. It travels through Temporal as JSON, so it
// holds no customer data.
type Plan struct {
	ReceivedAt      time.Time   `json:"receivedAt"`
	TransactionDate time.Time   `json:"transactionDate,omitzero"` // zero: absent
	DeliveryDate    string      `json:"deliveryDate,omitempty"`   // estimatedDeliveryDate, YYYY-MM-DD; "": absent
	Delay           string      `json:"delay"`                    // ISO 8601, as the setting had it
	DelayFrom       string      `json:"delayFrom"`                // FromEvent, FromTransaction or FromDelivery
	SendWindow      *SendWindow `json:"sendWindow,omitempty"`     // nil: any time of day
}

// SendTime resolves when an invite is due: its start (the event's arrival,
// transaction.date, or 00:00 of the estimated delivery date in the window's
// time zone, else UTC; the arrival when the chosen one is absent) plus the
// delay, moved into the send window. A time already past means now, and
// now outside the window means the next opening.
//
// SendTime never fails: the copy was validated when the setting was
// saved, and should it still not parse, an invite sent without the delay
// or outside the window serves the customer better than one never sent.
func SendTime(now time.Time, p Plan) time.Time {
	var window *Window
	if p.SendWindow != nil {
		if w, err := p.SendWindow.Parse(); err == nil {
			window = &w
		}
	}
	delay, err := ParseDuration(p.Delay)
	if err != nil {
		delay = 0
	}

	start := p.ReceivedAt
	switch p.DelayFrom {
	case FromTransaction:
		if !p.TransactionDate.IsZero() {
			start = p.TransactionDate
		}
	case FromDelivery:
		if d, err := time.Parse(time.DateOnly, p.DeliveryDate); err == nil {
			loc := time.UTC
			if window != nil {
				loc = window.Location
			}
			start = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc)
		}
	}
	if start.IsZero() {
		start = now
	}
	t := start.Add(delay)
	if t.Before(now) {
		t = now
	}
	if window != nil {
		t = window.Next(t)
	}
	return t.UTC()
}

// Contains reports whether t's wall-clock time in the window's zone lies in
// the window (Start inclusive, End exclusive, overnight when End < Start).
func (w Window) Contains(t time.Time) bool {
	c := sinceMidnight(t.In(w.Location))
	start, end := time.Duration(w.Start)*time.Minute, time.Duration(w.End)*time.Minute
	if w.Start < w.End {
		return c >= start && c < end
	}
	return c >= start || c < end
}

// Next returns t if it lies in the window, else the window's next opening:
// the first instant of a later local day (or of t's day, if the window
// has yet to open) whose wall clock reaches Start. On a day when Start
// falls into a daylight-saving gap, the window opens as the clocks jump;
// on a day when it occurs twice, at its first occurrence.
func (w Window) Next(t time.Time) time.Time {
	if w.Contains(t) {
		return t
	}
	y, m, d := t.In(w.Location).Date()
	// A day or two suffice; more cover a window lying wholly in a gap and
	// zones that skipped a whole day (Pacific/Apia, 2011-12-30).
	for i := range 7 {
		if o := w.opening(y, m, d+i); !o.Before(t) && w.Contains(o) {
			return o
		}
	}
	return t // not reached for a window that passed Parse
}

// opening is the first instant of local day y-m-d whose wall clock reads
// Start or later.
func (w Window) opening(y int, m time.Month, d int) time.Time {
	o := time.Date(y, m, d, w.Start/60, w.Start%60, 0, 0, w.Location)
	_, off := o.Zone()
	_, offBefore := o.Add(-3 * time.Hour).Zone()
	switch {
	case offBefore > off:
		// Clocks were set back: the wall time may occur twice, and
		// time.Date may have chosen the later occurrence.
		if e := o.Add(-time.Duration(offBefore-off) * time.Second); sameWallClock(e, o) {
			return e
		}
	case offBefore < off && sinceMidnight(o) != time.Duration(w.Start)*time.Minute:
		// Start lies in a gap (clocks jumped forward); time.Date moved it
		// past the gap. The window opens at the jump: find it to the second.
		gap := off - offBefore
		from := o.Add(-time.Duration(gap) * time.Second)
		jump := sort.Search(gap+1, func(s int) bool {
			_, z := from.Add(time.Duration(s) * time.Second).Zone()
			return z == off
		})
		return from.Add(time.Duration(jump) * time.Second)
	}
	return o
}

func sinceMidnight(t time.Time) time.Duration {
	h, m, s := t.Clock()
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second + time.Duration(t.Nanosecond())
}

func sameWallClock(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd && sinceMidnight(a) == sinceMidnight(b)
}
