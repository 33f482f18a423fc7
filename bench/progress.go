package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// progress draws a progress bar on stderr when it is a terminal, and
// nothing otherwise.
type progress struct {
	w     io.Writer
	label string
	total int
	n     atomic.Int64
}

func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	if !ok {
		return &progress{}
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return &progress{}
	}
	return &progress{w: w}
}

// phase starts drawing one phase; the returned func ends it.
func (p *progress) phase(label string, total int) func() {
	if p.w == nil {
		return func() {}
	}
	p.label, p.total = label, total
	p.n.Store(0)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			p.draw()
			select {
			case <-stop:
				p.draw()
				fmt.Fprintln(p.w)
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(stop); <-stopped }
}

func (p *progress) add(n int) { p.n.Add(int64(n)) }
func (p *progress) set(n int) { p.n.Store(int64(n)) }

func (p *progress) draw() {
	n := min(int(p.n.Load()), p.total)
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = n * width / p.total
	}
	fmt.Fprintf(p.w, "\r%-14s [%s%s] %d/%d", p.label, strings.Repeat("#", filled), strings.Repeat(".", width-filled), n, p.total)
}
