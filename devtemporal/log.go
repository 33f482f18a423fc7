package devtemporal

import (
	"context"
	"log/slog"
	"sync/atomic"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// minLevel drops records below level before they reach the wrapped handler,
// so Temporal's info chatter never reaches the dev console.
type minLevel struct {
	slog.Handler
	level slog.Leveler
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level.Level() && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(attrs), h.level}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.level}
}

// quietLevel is the configured level until silenced: once Stop begins, every
// Temporal log line is shutdown noise (pollers losing their connections,
// "task queue closed", ...), so it is all dropped.
type quietLevel struct {
	slog.Leveler
	silenced atomic.Bool
}

func (q *quietLevel) Level() slog.Level {
	if q.silenced.Load() {
		return slog.Level(1 << 20)
	}
	return q.Leveler.Level()
}

// serverLogger adapts Temporal's tag-based log.Logger to slog.
type serverLogger struct{ l *slog.Logger }

var (
	_ log.Logger     = serverLogger{}
	_ log.WithLogger = serverLogger{}
)

func (s serverLogger) Debug(msg string, tags ...tag.Tag) { s.log(slog.LevelDebug, msg, tags) }
func (s serverLogger) Info(msg string, tags ...tag.Tag)  { s.log(slog.LevelInfo, msg, tags) }
func (s serverLogger) Warn(msg string, tags ...tag.Tag)  { s.log(slog.LevelWarn, msg, tags) }
func (s serverLogger) Error(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }

// DPanic/Panic/Fatal are logged as errors: an embedded dev server must not
// panic or os.Exit the host process (same choice as the Temporal CLI).
func (s serverLogger) DPanic(msg string, tags ...tag.Tag) { s.log(slog.LevelError, msg, tags) }
func (s serverLogger) Panic(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }
func (s serverLogger) Fatal(msg string, tags ...tag.Tag)  { s.log(slog.LevelError, msg, tags) }

func (s serverLogger) With(tags ...tag.Tag) log.Logger {
	return serverLogger{slog.New(s.l.Handler().WithAttrs(attrs(tags)))}
}

func (s serverLogger) log(level slog.Level, msg string, tags []tag.Tag) {
	// Check first: converting tags is the expensive part and most are dropped.
	if s.l.Enabled(context.Background(), level) {
		s.l.LogAttrs(context.Background(), level, msg, attrs(tags)...)
	}
}

func attrs(tags []tag.Tag) []slog.Attr {
	out := make([]slog.Attr, len(tags))
	for i, t := range tags {
		out[i] = slog.Any(t.Key(), t.Value())
	}
	return out
}
