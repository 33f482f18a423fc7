package pages_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html/atom"

	"github.com/touchpoint/touchpoint/pages"
)

func post(body, contentType string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/feedback", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}

const form = "application/x-www-form-urlencoded"

func TestParseFeedback(t *testing.T) {
	t.Parallel()
	ratingErr := []pages.FieldError{{Field: "rating", Code: pages.CodeRatingRequired, Product: -1}}
	tooLong := []pages.FieldError{{Field: "comment", Code: pages.CodeCommentTooLong, Product: -1}}
	for _, tc := range []struct {
		name        string
		body        string
		contentType string
		want        pages.FeedbackForm
		errs        []pages.FieldError
	}{
		{"a rating and a comment", "event=evt-1&sig=s1&rating=4&comment=Great+fit", form,
			pages.FeedbackForm{EventID: "evt-1", Sig: "s1", Rating: 4, Comment: "Great fit"}, nil},
		{"no comment", "event=evt-1&sig=s1&rating=1&comment=", form, pages.FeedbackForm{EventID: "evt-1", Sig: "s1", Rating: 1}, nil},
		{"no comment field", "event=evt-1&sig=s1&rating=5", form, pages.FeedbackForm{EventID: "evt-1", Sig: "s1", Rating: 5}, nil},
		{"a charset parameter", "rating=3", form + "; charset=UTF-8", pages.FeedbackForm{Rating: 3}, nil},
		{"no rating", "event=e&sig=s&comment=kept", form, pages.FeedbackForm{EventID: "e", Sig: "s", Comment: "kept"}, ratingErr},
		{"empty rating", "rating=&comment=kept", form, pages.FeedbackForm{Comment: "kept"}, ratingErr},
		{"rating 0", "rating=0", form, pages.FeedbackForm{}, ratingErr},
		{"rating 6", "rating=6", form, pages.FeedbackForm{}, ratingErr},
		{"rating 04", "rating=04", form, pages.FeedbackForm{}, ratingErr},
		{"rating with a space", "rating=4+", form, pages.FeedbackForm{}, ratingErr},
		{"rating as a word", "rating=four", form, pages.FeedbackForm{}, ratingErr},
		{"rating twice", "rating=1&rating=5", form, pages.FeedbackForm{}, ratingErr},
		{"line breaks become \\n", "rating=2&comment=" + url.QueryEscape("one\r\ntwo\rthree\nfour"), form,
			pages.FeedbackForm{Rating: 2, Comment: "one\ntwo\nthree\nfour"}, nil},
		{"ends trimmed, inside kept", "rating=2&comment=" + url.QueryEscape("  \n\tSo  so.\t \n "), form,
			pages.FeedbackForm{Rating: 2, Comment: "So  so."}, nil},
		{"control characters dropped, tab kept", "rating=2&comment=" + url.QueryEscape("a\x00b\x1bc\td\u0085e\x7f"), form,
			pages.FeedbackForm{Rating: 2, Comment: "abc\tde"}, nil},
		{"markup kept as text", "rating=2&comment=" + url.QueryEscape(`</textarea><script>alert("x")</script>`), form,
			pages.FeedbackForm{Rating: 2, Comment: `</textarea><script>alert("x")</script>`}, nil},
		{"right-to-left text kept, direction controls removed", "rating=2&comment=" + url.QueryEscape("\u202eمرحبا \u2066x\u2069\u202a\u202b\u202c\u202d\u2067\u2068 \u200fok"), form,
			pages.FeedbackForm{Rating: 2, Comment: "مرحبا x \u200fok"}, nil},
		{"2,000 characters of 4 bytes", "rating=5&comment=" + url.QueryEscape(strings.Repeat("😀", 2000)), form,
			pages.FeedbackForm{Rating: 5, Comment: strings.Repeat("😀", 2000)}, nil},
		{"2,001 characters: kept, and too long", "rating=5&comment=" + strings.Repeat("x", 2001), form,
			pages.FeedbackForm{Rating: 5, Comment: strings.Repeat("x", 2001)}, tooLong},
		{"2,000 characters after line breaks are counted once", "rating=5&comment=" + url.QueryEscape(strings.Repeat("ab\r\n", 500)+"ab"), form,
			pages.FeedbackForm{Rating: 5, Comment: strings.Repeat("ab\n", 500) + "ab"}, nil},
		{"not UTF-8: shown again with a replacement", "event=e&sig=s&rating=3&comment=caf%E9", form,
			pages.FeedbackForm{EventID: "e", Sig: "s", Rating: 3, Comment: "caf\uFFFD"}, []pages.FieldError{{Field: "comment", Code: pages.CodeCommentInvalid, Product: -1}}},
		{"both wrong, in page order", "comment=" + strings.Repeat("y", 2001), form,
			pages.FeedbackForm{Comment: strings.Repeat("y", 2001)}, append(append([]pages.FieldError{}, ratingErr...), tooLong...)},
		{"over the cap: what arrived whole is kept", "event=evt-1&sig=s1&rating=4&comment=" + strings.Repeat("z", pages.MaxFeedbackBody), form,
			pages.FeedbackForm{EventID: "evt-1", Sig: "s1", Rating: 4}, tooLong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, errs, err := pages.ParseFeedback(post(tc.body, tc.contentType))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.errs, errs)
		})
	}
}

func TestParseFeedbackRejectsOtherRequests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, contentType string
		want                    error
	}{
		{"no content type", "rating=4", "", pages.ErrContentType},
		{"JSON", `{"rating":4}`, "application/json", pages.ErrContentType},
		{"multipart", "--x\r\n", "multipart/form-data; boundary=x", pages.ErrContentType},
		{"a bad content type", "rating=4", "application/x-www-form-urlencoded; charset", pages.ErrContentType},
		{"a bad escape", "rating=4&comment=%zz", form, pages.ErrMalformed},
		{"semicolons", "rating=4;comment=x", form, pages.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := pages.ParseFeedback(post(tc.body, tc.contentType))
			assert.ErrorIs(t, err, tc.want)
		})
	}

	r := httptest.NewRequest(http.MethodPost, "/feedback", iotest.ErrReader(errors.New("connection reset")))
	r.Header.Set("Content-Type", form)
	_, _, err := pages.ParseFeedback(r)
	assert.ErrorContains(t, err, "connection reset")
}

// TestLongestCommentFitsTheCap: the longest comment a browser can send,
// in the widest characters, percent-encoded, fits MaxFeedbackBody.
func TestLongestCommentFitsTheCap(t *testing.T) {
	t.Parallel()
	v := url.Values{
		"event":   {"evt-3f1c2a9e-7b4d-4c1a-9e2f-0a1b2c3d4e5f"},
		"sig":     {strings.Repeat("A", 86)},
		"rating":  {"5"},
		"comment": {strings.Repeat("😀", pages.MaxComment)},
	}
	body := v.Encode()
	assert.Less(t, len(body), pages.MaxFeedbackBody)
	got, errs, err := pages.ParseFeedback(post(body, form))
	require.NoError(t, err)
	assert.Empty(t, errs)
	assert.Equal(t, pages.MaxComment, len([]rune(got.Comment)))
}

// FuzzParseFeedback: whatever a client posts, the parsed form keeps its
// promises, and the page shown again holds the comment exactly.
func FuzzParseFeedback(f *testing.F) {
	f.Add("event=evt-1&sig=s&rating=4&comment=Great")
	f.Add("rating=9&comment=%FF%FE")
	f.Add("comment=" + url.QueryEscape("</textarea>\r\n\u202e<script>"))
	f.Add("rating=1&rating=2&comment=a&comment=b")
	p, err := pages.New()
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, body string) {
		got, errs, err := pages.ParseFeedback(post(body, form))
		if err != nil {
			require.ErrorIs(t, err, pages.ErrMalformed)
			return
		}
		require.True(t, utf8.ValidString(got.Comment))
		for _, r := range got.Comment {
			require.False(t, unicode.IsControl(r) && r != '\n' && r != '\t', "control %U kept", r)
			require.False(t, strings.ContainsRune("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", r), "direction control %U kept", r)
		}
		require.Equal(t, strings.TrimSpace(got.Comment), got.Comment)
		if len(errs) == 0 {
			require.GreaterOrEqual(t, got.Rating, 1)
			require.LessOrEqual(t, got.Rating, 5)
			require.LessOrEqual(t, utf8.RuneCountInString(got.Comment), pages.MaxComment)
		}
		rec := httptest.NewRecorder()
		require.NoError(t, p.Feedback(rec, http.StatusBadRequest, pages.FeedbackView{Locale: "en", Action: "/feedback",
			EventID: got.EventID, Sig: got.Sig, Rating: got.Rating, Comment: got.Comment, Errors: errs}))
		d := parse(t, rec)
		require.Equal(t, got.Comment, rawText(d.byID("comment")))
		require.Empty(t, d.tag(atom.Script))
	})
}

// TestParseFeedbackProducts: each product's optional rating and comment
// (product.N.rating, product.N.comment), the consent to be named, and
// what is wrong with them.
func TestParseFeedbackProducts(t *testing.T) {
	t.Parallel()
	none := -1
	for _, tc := range []struct {
		name, body string
		want       pages.FeedbackForm
		errs       []pages.FieldError
	}{
		{"products only, no shop rating", "product.0.rating=5&product.1.rating=2&product.1.comment=" + url.QueryEscape(" tight \u202e"),
			pages.FeedbackForm{Products: map[int]pages.ProductAnswer{0: {Rating: 5}, 1: {Rating: 2, Comment: "tight"}}}, nil},
		{"shop and product", "rating=4&product.9.rating=3&product.0.rating=&product.0.comment=",
			pages.FeedbackForm{Rating: 4, Products: map[int]pages.ProductAnswer{9: {Rating: 3}}}, nil},
		{"nothing rated", "comment=hi&product.0.rating=", pages.FeedbackForm{Comment: "hi"},
			[]pages.FieldError{{Field: "rating", Code: pages.CodeRatingRequired, Product: none}}},
		{"a product rating of 6", "rating=4&product.2.rating=6",
			pages.FeedbackForm{Rating: 4},
			[]pages.FieldError{{Field: "product.2.rating", Code: pages.CodeProductRating, Product: 2}}},
		{"a product rating as a word, comment kept", "rating=4&product.1.rating=five&product.1.comment=kept",
			pages.FeedbackForm{Rating: 4, Products: map[int]pages.ProductAnswer{1: {Comment: "kept"}}},
			[]pages.FieldError{{Field: "product.1.rating", Code: pages.CodeProductRating, Product: 1}}},
		{"a comment without its rating", "rating=4&product.0.comment=nice",
			pages.FeedbackForm{Rating: 4, Products: map[int]pages.ProductAnswer{0: {Comment: "nice"}}},
			[]pages.FieldError{{Field: "product.0.rating", Code: pages.CodeProductRating, Product: 0}}},
		{"a product comment of 2,001 characters", "product.0.rating=1&product.0.comment=" + strings.Repeat("x", 2001),
			pages.FeedbackForm{Products: map[int]pages.ProductAnswer{0: {Rating: 1, Comment: strings.Repeat("x", 2001)}}},
			[]pages.FieldError{{Field: "product.0.comment", Code: pages.CodeProductCommentTooLong, Product: 0}}},
		{"errors in page order", "rating=x&product.3.rating=0&product.1.rating=9",
			pages.FeedbackForm{},
			[]pages.FieldError{{Field: "rating", Code: pages.CodeRatingRequired, Product: none},
				{Field: "product.1.rating", Code: pages.CodeProductRating, Product: 1},
				{Field: "product.3.rating", Code: pages.CodeProductRating, Product: 3}}},
		{"consent to be named", "rating=5&showName=1", pages.FeedbackForm{Rating: 5, ShowName: true}, nil},
		{"consent only with the value 1", "rating=5&showName=on", pages.FeedbackForm{Rating: 5}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, errs, err := pages.ParseFeedback(post(tc.body, form))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.errs, errs)
		})
	}
	for _, bad := range []string{"rating=4&product.10.rating=5", "rating=4&product.01.rating=5", "rating=4&product.-1.rating=5",
		"rating=4&product.x.rating=5", "rating=4&product.0.stars=5", "rating=4&product.0=5"} {
		_, _, err := pages.ParseFeedback(post(bad, form))
		assert.ErrorIs(t, err, pages.ErrProductIndex, bad)
	}
}
