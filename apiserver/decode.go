package apiserver

import (
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/touchpoint/touchpoint/internal/httpmw"
	"github.com/touchpoint/touchpoint/internal/jsonstrict"
)

// decodeJSON reads the request body into dst, a pointer to a struct, with
// the checks every JSON body gets: Content-Type application/json (or
// application/merge-patch+json) else 415, at most MaxBodyBytes else 413,
// then decodeStrict.
func (s *server) decodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	body, err := readJSON(w, r, s.maxBody)
	if err != nil {
		return err
	}
	return decodeStrict(body, dst)
}

// readJSON reads a JSON request body of at most limit bytes: Content-Type
// application/json (or application/merge-patch+json) else 415, a longer
// body 413.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if err := checkJSONType(r); err != nil {
		return nil, err
	}
	return readBody(w, r, limit)
}

// checkJSONType answers 415 unless the request's Content-Type is
// application/json (or application/merge-patch+json) in UTF-8.
func checkJSONType(r *http.Request) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/json" && mt != "application/merge-patch+json") {
		return newError(http.StatusUnsupportedMediaType, "Content-Type must be application/json (UTF-8)")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return newError(http.StatusUnsupportedMediaType, "Content-Type must be application/json (UTF-8)")
	}
	return nil
}

// readBody reads a request body of at most limit bytes (httpmw.ReadBody:
// 413 above, refused before a byte is read when its declared length is
// longer).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := httpmw.ReadBody(w, r, limit)
	switch {
	case errors.Is(err, httpmw.ErrTooLarge):
		return nil, newError(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", limit)
	case err != nil:
		return nil, newError(http.StatusBadRequest, "the body could not be read")
	}
	return body, nil
}

// decodeStrict decodes a request body into dst (a pointer to a struct)
// with jsonstrict's checks, answering 400 for what they refuse.
func decodeStrict(body []byte, dst any) error {
	return decodeError(jsonstrict.Decode(body, dst), "the body")
}

// decodeError is the one place that turns jsonstrict's errors into 400
// answers: a syntax error about the whole text, worded about subject
// ("the body", "the event"), or the field errors with their paths.
func decodeError(err error, subject string) error {
	var se *jsonstrict.SyntaxError
	var fe jsonstrict.FieldErrors
	switch {
	case errors.As(err, &se):
		return badRequest(se.Message(subject))
	case errors.As(err, &fe):
		fields := make([]fieldError, len(fe))
		for i, f := range fe {
			fields[i] = fieldError(f)
		}
		return invalid(fields...)
	}
	return err
}
