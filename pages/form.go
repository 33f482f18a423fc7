package pages

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/touchpoint/touchpoint/review"
)

// Limits of a posted feedback form.
const (
	// MaxComment is the longest comment, in characters (runes).
	MaxComment = 2000
	// MaxFeedbackBody caps the form body. A comment of 2,000 characters
	// from a script of 4-byte characters, percent-encoded, is 24,000
	// bytes; the hidden fields and the rating add a few hundred.
	MaxFeedbackBody = 32 << 10
)

// The form's field names; also the ids the error summary links to.
const (
	FieldRating  = "rating"
	FieldComment = "comment"
)

// What can be wrong with a field. The page turns a code into a message
// in the reader's language.
const (
	CodeRatingRequired = "rating_required" // missing, or not one of "1".."5"
	CodeCommentTooLong = "comment_too_long"
	CodeCommentInvalid = "comment_invalid" // not UTF-8
)

// Errors for a request that is not a feedback form at all; the handler
// answers them with BadRequest.
var (
	ErrContentType = errors.New("feedback: content type is not application/x-www-form-urlencoded")
	ErrMalformed   = errors.New("feedback: malformed form body")
)

// FieldError is one problem with one field of the form.
type FieldError struct {
	Field string // FieldRating or FieldComment
	Code  string // CodeRatingRequired, …
}

// FeedbackForm is a posted feedback form.
type FeedbackForm struct {
	EventID string // the hidden "event" field, unverified
	Sig     string // the hidden "sig" field, unverified
	Rating  int    // 1–5, or 0 when missing or invalid
	Comment string // normalised as ParseFeedback documents; may be ""
}

// ParseFeedback reads a posted feedback form (application/
// x-www-form-urlencoded only). It returns an error only for a request
// that is not such a form (ErrContentType, ErrMalformed, or a failed
// read); problems with the answers come back as field errors, with the
// form as far as it could be read, so the page can be shown again with
// the reader's input kept. The event and signature are not checked here.
//
// The comment is cleaned as every free text of a review is
// (review.CleanText): line breaks become "\n" (browsers send "\r\n"),
// control characters other than tab and line break are removed
// (PostgreSQL cannot store NUL), so are the bidirectional embedding,
// override and isolate controls (U+202A–U+202E, U+2066–U+2069), and white
// space at both ends is trimmed. It may then be at most MaxComment
// characters.
// A comment that is not valid UTF-8 is a field error; the form keeps it
// with U+FFFD in place of the bad bytes so the reader can fix it.
//
// A body over MaxFeedbackBody is read up to the cap: the fields that
// arrived whole (a browser sends the hidden fields and the rating before
// the comment) are kept and the comment is reported too long.
func ParseFeedback(r *http.Request) (FeedbackForm, []FieldError, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return FeedbackForm{}, nil, ErrContentType
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxFeedbackBody+1))
	if err != nil {
		return FeedbackForm{}, nil, fmt.Errorf("read feedback: %w", err)
	}
	tooLarge := len(body) > MaxFeedbackBody
	if tooLarge {
		// Keep only the pairs that arrived whole.
		body = body[:MaxFeedbackBody]
		if i := bytes.LastIndexByte(body, '&'); i >= 0 {
			body = body[:i]
		} else {
			body = nil
		}
	}
	vals, err := url.ParseQuery(string(body))
	if err != nil {
		return FeedbackForm{}, nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}

	f := FeedbackForm{EventID: vals.Get("event"), Sig: vals.Get("sig")}
	var errs []FieldError
	if rs := vals[FieldRating]; len(rs) == 1 && len(rs[0]) == 1 && rs[0][0] >= '1' && rs[0][0] <= '5' {
		f.Rating = int(rs[0][0] - '0')
	} else {
		errs = append(errs, FieldError{Field: FieldRating, Code: CodeRatingRequired})
	}
	comment := vals.Get(FieldComment)
	switch {
	case tooLarge:
		errs = append(errs, FieldError{Field: FieldComment, Code: CodeCommentTooLong})
	case !utf8.ValidString(comment):
		f.Comment = normaliseComment(strings.ToValidUTF8(comment, "\uFFFD"))
		errs = append(errs, FieldError{Field: FieldComment, Code: CodeCommentInvalid})
	default:
		f.Comment = normaliseComment(comment)
		if utf8.RuneCountInString(f.Comment) > MaxComment {
			errs = append(errs, FieldError{Field: FieldComment, Code: CodeCommentTooLong})
		}
	}
	return f, errs, nil
}

// normaliseComment cleans a comment as every free text of a review is
// stored (review.CleanText).
func normaliseComment(s string) string { return review.CleanText(s) }
