package httpmw

import (
	"errors"
	"io"
	"net/http"
)

// ErrTooLarge is a body longer than its limit.
var ErrTooLarge = errors.New("the body is too large")

// ReadBody reads a request body of at most limit bytes (ErrTooLarge
// above; any other error is the read's). A body of declared length is
// read into a buffer of exactly that size, and one declared longer than
// limit is refused before a byte of it is read.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, ErrTooLarge
	}
	if r.ContentLength >= 0 {
		body := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return nil, ErrTooLarge
		}
		return nil, err
	}
	return body, nil
}
