package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// shutdownGrace is how long in-flight HTTP requests get to finish after
// SIGINT/SIGTERM.
const shutdownGrace = 15 * time.Second

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

// serveHTTP serves h on ln until ctx is cancelled, then drains in-flight
// requests for up to shutdownGrace.
func serveHTTP(ctx context.Context, logger *slog.Logger, name string, ln net.Listener, h http.Handler) error {
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
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) && err == nil {
		err = serveErr
	}
	logger.Info("stopped", "server", name)
	return err
}
