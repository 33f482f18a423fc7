package mail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/touchpoint/touchpoint/senderr"
)

// Dir writes each message as <event ID>.eml into a directory, for
// `touchpoint dev` without a mail server. A retry overwrites the file
// rather than adding one.
type Dir struct {
	sender
	dir    string
	logger *slog.Logger
}

// NewDir creates dir if needed. Each message carries tags.
func NewDir(dir, from string, logger *slog.Logger, tags ...Tag) (*Dir, error) {
	snd, err := newSender(from, tags)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("mail directory: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Dir{sender: snd, dir: dir, logger: logger}, nil
}

// Path is the file a message for eventID is written to.
func (d *Dir) Path(eventID string) string {
	safe := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, eventID)
	return filepath.Join(d.dir, strings.TrimLeft(safe, ".")+".eml")
}

// Send writes the message atomically: a temporary file renamed into place,
// so a reader never sees half a message.
func (d *Dir) Send(ctx context.Context, m Message) error {
	msg, err := d.build(m)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(d.dir, ".tmp-*.eml")
	if err != nil {
		return &senderr.Error{Kind: senderr.Transient, Text: "write eml: " + err.Error(), Err: err}
	}
	_, err = msg.WriteTo(f)
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(f.Name(), d.Path(m.ID()))
	}
	if err != nil {
		os.Remove(f.Name())
		return &senderr.Error{Kind: senderr.Transient, Text: "write eml: " + err.Error(), Err: err}
	}
	d.logger.InfoContext(ctx, "invite written to file (no SMTP server configured)",
		"event_id", m.EventID, "to", MaskEmail(m.To), "file", d.Path(m.ID()))
	return nil
}
