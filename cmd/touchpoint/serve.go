package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/touchpoint/touchpoint/config"
)

// listen opens a TCP listener with an error that names what failed.
func listen(name, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &listenError{name: name, addr: addr, err: err}
	}
	return ln, nil
}

type listenError struct {
	name, addr string
	err        error
}

func (e *listenError) Error() string {
	return e.name + ": cannot listen on " + e.addr + " (is another process using it?): " + e.err.Error()
}
func (e *listenError) Unwrap() error { return e.err }

// drain says how a server leaves its load balancer when it stops: for how
// long it goes on serving, and what it tells once it begins (readiness).
// The zero value closes the listener at once.
type drain struct {
	period   time.Duration
	draining func() // optional
}

// serveHTTP serves h on ln until ctx is cancelled, then stops as a replica
// behind a load balancer should: draining is told at once (readiness
// fails), answers close their connections (clients reconnect to another
// replica), and requests are still served for the drain period while the
// load balancer lets go of this one; then the listener closes and the
// requests in flight get config.ShutdownGrace to finish.
func serveHTTP(ctx context.Context, logger *slog.Logger, name string, ln net.Listener, h http.Handler, d drain) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("listening", "server", name, "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	if d.period > 0 || d.draining != nil {
		logger.Info("draining", "server", name, "for", d.period.String())
		if d.draining != nil {
			d.draining()
		}
		srv.SetKeepAlivesEnabled(false)
		select {
		case err := <-errc:
			return err
		case <-time.After(d.period):
		}
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), config.ShutdownGrace)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	logger.Info("stopped", "server", name)
	return err
}

// runServing runs front, the part that takes work in (a server, the
// pollers), with the parts behind it, which carry on what front began or
// serve its probes (starters, signal deliveries, the health server). When
// ctx ends, front stops first, in its own time (draining, finishing what
// it has in hand); the parts behind it stop once it has returned. A part
// that fails stops them all.
func runServing(ctx context.Context, front part, behind ...part) error {
	behindCtx, stopBehind := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBehind()
	g, gctx := errgroup.WithContext(behindCtx)
	frontCtx, stopFront := context.WithCancel(ctx)
	defer stopFront()
	go func() { <-gctx.Done(); stopFront() }() // a failure behind; gctx also ends when Wait returns
	g.Go(func() error {
		defer stopBehind()
		return front(frontCtx)
	})
	for _, p := range behind {
		g.Go(func() error { return p(gctx) })
	}
	return g.Wait()
}
