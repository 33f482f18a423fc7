package pages

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/text"
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
	FieldRating   = "rating"
	FieldComment  = "comment"
	FieldShowName = "showName"
)

// MaxProducts is how many products of an event the form asks about.
const MaxProducts = review.MaxProducts

// ProductRatingField and ProductCommentField are the names of the
// rating and comment fields of the event's product i (its index in the
// event's products): "product.0.rating", "product.0.comment".
func ProductRatingField(i int) string  { return "product." + strconv.Itoa(i) + ".rating" }
func ProductCommentField(i int) string { return "product." + strconv.Itoa(i) + ".comment" }

// What can be wrong with a field. The page turns a code into a message
// in the reader's language.
const (
	CodeRatingRequired = "rating_required" // nothing rated at all, or a rating not one of "1".."5"
	CodeCommentTooLong = "comment_too_long"
	CodeCommentInvalid = "comment_invalid" // not UTF-8
	// A product's rating is not one of "1".."5", or its comment has no
	// rating beside it.
	CodeProductRating         = "product_rating"
	CodeProductCommentTooLong = "product_comment_too_long"
)

// Errors for a request that is not a feedback form at all; the handler
// answers them with BadRequest.
var (
	ErrContentType = errors.New("feedback: content type is not application/x-www-form-urlencoded")
	ErrMalformed   = errors.New("feedback: malformed form body")
	// ErrProductIndex: a product field names a product the form never
	// asks about (not a product index below MaxProducts, or spelt
	// another way: "product.01.rating"). The handler also answers it for
	// an index the event has no product at.
	ErrProductIndex = errors.New("feedback: no such product in the form")
)

// FieldError is one problem with one field of the form.
type FieldError struct {
	Field string // FieldRating, FieldComment, ProductRatingField(i), ProductCommentField(i)
	Code  string // CodeRatingRequired, …
	// Product is the index of the product the field is about, for the
	// product fields; -1 otherwise.
	Product int
}

// FeedbackForm is a posted feedback form.
type FeedbackForm struct {
	EventID string // the hidden "event" field, unverified
	Sig     string // the hidden "sig" field, unverified
	Rating  int    // 1–5, or 0 when missing or invalid
	Comment string // normalised as ParseFeedback documents; may be ""
	// ShowName is the checkbox "show my first name and the initial of my
	// last name" (value "1"); off unless ticked.
	ShowName bool
	// Products are the product answers by product index: a rating (0
	// when none or invalid) and a comment, for each product with either.
	Products map[int]ProductAnswer
}

// ProductAnswer is what the form says of one product.
type ProductAnswer struct {
	Rating  int
	Comment string
}

// ParseFeedback reads a posted feedback form (application/
// x-www-form-urlencoded only). It returns an error only for a request
// that is not such a form (ErrContentType, ErrMalformed, or a failed
// read); problems with the answers come back as field errors, with the
// form as far as it could be read, so the page can be shown again with
// the reader's input kept. The event and signature are not checked here.
//
// The comments are cleaned as every multi-line text is (text.Multiline:
// line breaks become "\n" — browsers send "\r\n" —, control characters
// other than tab and line break and the bidirectional embeddings,
// overrides and isolates are removed, white space at both ends is
// trimmed). A comment may then be at most MaxComment characters.
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

	f := FeedbackForm{EventID: vals.Get("event"), Sig: vals.Get("sig"), ShowName: vals.Get(FieldShowName) == "1",
		Products: map[int]ProductAnswer{}}
	var errs []FieldError
	for name, vs := range vals {
		i, field, ok := productField(name)
		if !ok {
			if strings.HasPrefix(name, "product.") {
				return f, nil, ErrProductIndex
			}
			continue
		}
		a := f.Products[i]
		v := ""
		if len(vs) > 0 {
			v = vs[0]
		}
		switch field {
		case "rating":
			a.Rating = ratingOf(vs)
			if a.Rating == 0 && v != "" {
				a.Rating = -1 // given, but not a rating
			}
		case "comment":
			a.Comment = text.Clean(text.Multiline, v)
		}
		f.Products[i] = a
	}
	rated := false
	for _, i := range slices.Sorted(maps.Keys(f.Products)) {
		a := f.Products[i]
		switch {
		case a.Rating < 0 || (a.Rating == 0 && a.Comment != ""):
			errs = append(errs, FieldError{Field: ProductRatingField(i), Code: CodeProductRating, Product: i})
			a.Rating = 0
		case a.Rating > 0:
			rated = true
		}
		if utf8.RuneCountInString(a.Comment) > MaxComment {
			errs = append(errs, FieldError{Field: ProductCommentField(i), Code: CodeProductCommentTooLong, Product: i})
		}
		if a.Rating == 0 && a.Comment == "" {
			delete(f.Products, i)
			continue
		}
		f.Products[i] = a
	}
	// The shop rating: optional when a product is rated, else required;
	// when given, one of "1".."5".
	switch rs := vals[FieldRating]; {
	case ratingOf(rs) > 0:
		f.Rating = ratingOf(rs)
	case len(rs) == 0 || (len(rs) == 1 && rs[0] == ""):
		if !rated && len(errs) == 0 {
			errs = append(errs, FieldError{Field: FieldRating, Code: CodeRatingRequired, Product: -1})
		}
	default:
		errs = append(errs, FieldError{Field: FieldRating, Code: CodeRatingRequired, Product: -1})
	}
	comment := vals.Get(FieldComment)
	switch {
	case tooLarge:
		errs = append(errs, FieldError{Field: FieldComment, Code: CodeCommentTooLong, Product: -1})
	case !utf8.ValidString(comment):
		f.Comment = text.Clean(text.Multiline, comment)
		errs = append(errs, FieldError{Field: FieldComment, Code: CodeCommentInvalid, Product: -1})
	default:
		f.Comment = text.Clean(text.Multiline, comment)
		if utf8.RuneCountInString(f.Comment) > MaxComment {
			errs = append(errs, FieldError{Field: FieldComment, Code: CodeCommentTooLong, Product: -1})
		}
	}
	// The shop's fields first, as the page shows them.
	slices.SortStableFunc(errs, func(a, b FieldError) int { return a.Product - b.Product })
	if len(f.Products) == 0 {
		f.Products = nil
	}
	return f, errs, nil
}

// ratingOf is a posted rating: exactly one value, "1" to "5"; else 0.
func ratingOf(vs []string) int {
	if len(vs) == 1 && len(vs[0]) == 1 && vs[0][0] >= '1' && vs[0][0] <= '5' {
		return int(vs[0][0] - '0')
	}
	return 0
}

// productField reads "product.N.rating" or "product.N.comment": N a
// product index below MaxProducts written without leading zeros.
func productField(name string) (index int, field string, ok bool) {
	rest, ok := strings.CutPrefix(name, "product.")
	if !ok {
		return 0, "", false
	}
	num, field, ok := strings.Cut(rest, ".")
	if !ok || (field != "rating" && field != "comment") {
		return 0, "", false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n >= MaxProducts || strconv.Itoa(n) != num {
		return 0, "", false
	}
	return n, field, true
}
