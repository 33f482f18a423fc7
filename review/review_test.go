package review_test

import (
	"math/big"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/review"
)

func TestPublic(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		status review.Status
		reason review.Reason
		want   bool
	}{
		{review.Published, "", true},
		{review.Reported, review.Spam, true},
		{review.Reported, review.Offensive, true},
		{review.Reported, review.NotAnExperience, true},
		{review.Reported, review.PersonalData, false},
		{review.Removed, "", false},
		{review.Removed, review.Spam, false},
		{review.Removed, review.PersonalData, false},
		{"", "", false},
		{"hidden", "", false},
	} {
		assert.Equal(t, tt.want, review.Public(tt.status, tt.reason), "%s/%s", tt.status, tt.reason)
	}
}

func TestReport(t *testing.T) {
	t.Parallel()
	published := review.Moderation{Status: review.Published}
	for _, tt := range []struct {
		name    string
		from    review.Moderation
		reason  review.Reason
		want    review.Moderation
		changed bool
		err     error
	}{
		{"published, spam", published, review.Spam, review.Moderation{Status: review.Reported, Reason: review.Spam}, true, nil},
		{"published, personal data", published, review.PersonalData, review.Moderation{Status: review.Reported, Reason: review.PersonalData}, true, nil},
		{"reported again, same reason", review.Moderation{Status: review.Reported, Reason: review.Spam}, review.Spam,
			review.Moderation{Status: review.Reported, Reason: review.Spam}, false, nil},
		{"reported, then another reason: kept", review.Moderation{Status: review.Reported, Reason: review.Spam}, review.Offensive,
			review.Moderation{Status: review.Reported, Reason: review.Spam}, false, nil},
		{"reported, then personal data: hidden now", review.Moderation{Status: review.Reported, Reason: review.Spam}, review.PersonalData,
			review.Moderation{Status: review.Reported, Reason: review.PersonalData}, true, nil},
		{"personal data, then spam: still hidden", review.Moderation{Status: review.Reported, Reason: review.PersonalData}, review.Spam,
			review.Moderation{Status: review.Reported, Reason: review.PersonalData}, false, nil},
		{"removed", review.Moderation{Status: review.Removed}, review.Spam, review.Moderation{Status: review.Removed}, false, review.ErrRemoved},
		{"settled by the operator", review.Moderation{Status: review.Published, Settled: true}, review.PersonalData,
			review.Moderation{Status: review.Published, Settled: true}, false, review.ErrSettled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, changed, err := tt.from.Report(tt.reason)
			assert.ErrorIs(t, err, tt.err)
			if tt.err == nil {
				assert.NoError(t, err)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.changed, changed)
		})
	}
}

// No sequence of reports takes a public review out of view, but one for
// personal data; and none brings back one the operator removed.
func TestReportsNeverHideButForPersonalData(t *testing.T) {
	t.Parallel()
	starts := []review.Moderation{
		{Status: review.Published}, {Status: review.Published, Settled: true},
		{Status: review.Reported, Reason: review.Spam}, {Status: review.Removed},
	}
	var walk func(m review.Moderation, depth int)
	walk = func(m review.Moderation, depth int) {
		if depth == 0 {
			return
		}
		for _, r := range review.Reasons() {
			next, _, err := m.Report(r)
			if err != nil {
				assert.Equal(t, m, next)
			}
			wasPublic, isPublic := review.Public(m.Status, m.Reason), review.Public(next.Status, next.Reason)
			if wasPublic && !isPublic {
				assert.Equal(t, review.PersonalData, r, "%+v hidden by a report for %s", m, r)
			}
			if m.Status == review.Removed {
				assert.Equal(t, review.Removed, next.Status)
			}
			walk(next, depth-1)
		}
	}
	for _, m := range starts {
		walk(m, 4)
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		from    review.Moderation
		d       review.Decision
		want    review.Moderation
		changed bool
	}{
		{"publish a report", review.Moderation{Status: review.Reported, Reason: review.PersonalData}, review.Publish,
			review.Moderation{Status: review.Published, Settled: true}, true},
		{"remove a report", review.Moderation{Status: review.Reported, Reason: review.Spam}, review.Remove,
			review.Moderation{Status: review.Removed}, true},
		{"remove unreported", review.Moderation{Status: review.Published}, review.Remove, review.Moderation{Status: review.Removed}, true},
		{"publish unreported: settles it", review.Moderation{Status: review.Published}, review.Publish,
			review.Moderation{Status: review.Published, Settled: true}, true},
		{"publish again", review.Moderation{Status: review.Published, Settled: true}, review.Publish,
			review.Moderation{Status: review.Published, Settled: true}, false},
		{"remove again", review.Moderation{Status: review.Removed}, review.Remove, review.Moderation{Status: review.Removed}, false},
		{"reverse a removal", review.Moderation{Status: review.Removed}, review.Publish,
			review.Moderation{Status: review.Published, Settled: true}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := tt.from.Decide(tt.d)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.changed, changed)
		})
	}
}

func TestEdited(t *testing.T) {
	t.Parallel()
	assert.Equal(t, review.Moderation{Status: review.Published},
		review.Moderation{Status: review.Published, Settled: true}.Edited(), "a changed review can be reported again")
	assert.Equal(t, review.Moderation{Status: review.Reported, Reason: review.PersonalData},
		review.Moderation{Status: review.Reported, Reason: review.PersonalData}.Edited(), "an edit does not lift a report")
	assert.Equal(t, review.Moderation{Status: review.Removed}, review.Moderation{Status: review.Removed}.Edited(),
		"an edit does not bring back a removed review")
}

func TestVocabulary(t *testing.T) {
	t.Parallel()
	for _, s := range review.Statuses() {
		assert.True(t, s.Valid())
	}
	for _, r := range review.Reasons() {
		assert.True(t, r.Valid())
	}
	for _, d := range review.Decisions() {
		assert.True(t, d.Valid())
	}
	assert.False(t, review.Status("Published").Valid())
	assert.False(t, review.Reason("PII").Valid())
	assert.False(t, review.Decision("hide").Valid())
}

func TestDelta(t *testing.T) {
	t.Parallel()
	pub := func(r int) review.Contribution { return review.Contribution{Public: true, Rating: r} }
	hidden := func(r int) review.Contribution { return review.Contribution{Rating: r} }
	dist := func(pairs ...int64) (d [5]int64) {
		for i := 0; i < len(pairs); i += 2 {
			d[pairs[i]-1] = pairs[i+1]
		}
		return d
	}
	for _, tt := range []struct {
		name          string
		before, after review.Contribution
		want          review.Aggregate
	}{
		{"new public rating", review.Contribution{}, pub(4), review.Aggregate{Count: 1, Sum: 4, Distribution: dist(4, 1)}},
		{"rating changed", pub(2), pub(5), review.Aggregate{Sum: 3, Distribution: dist(2, -1, 5, 1)}},
		{"same rating", pub(3), pub(3), review.Aggregate{}},
		{"hidden", pub(3), hidden(3), review.Aggregate{Count: -1, Sum: -3, Distribution: dist(3, -1)}},
		{"shown again", hidden(1), pub(1), review.Aggregate{Count: 1, Sum: 1, Distribution: dist(1, 1)}},
		{"hidden and changed", hidden(1), hidden(5), review.Aggregate{}},
		{"shop rating taken away", pub(5), pub(0), review.Aggregate{Count: -1, Sum: -5, Distribution: dist(5, -1)}},
		{"deleted", pub(2), review.Contribution{}, review.Aggregate{Count: -1, Sum: -2, Distribution: dist(2, -1)}},
		{"no rating at all", pub(0), pub(0), review.Aggregate{}},
	} {
		got := review.Delta(tt.before, tt.after)
		assert.Equal(t, tt.want, got, tt.name)
		assert.Equal(t, tt.want.IsZero(), got.IsZero(), tt.name)
	}
}

// Average rounds half up to one decimal, checked against exact rational
// arithmetic over every small aggregate, and at sizes where float64
// would round the wrong way.
func TestAverage(t *testing.T) {
	t.Parallel()
	_, ok := review.Aggregate{}.Average()
	assert.False(t, ok)
	assert.Equal(t, "", review.Aggregate{}.AverageText())

	for _, tt := range []struct {
		count, sum int64
		want       string
	}{
		{1, 5, "5.0"}, {4, 17, "4.3"} /* 4.25 */, {20, 85, "4.3"}, {3, 10, "3.3"}, {3, 11, "3.7"},
		{8, 34, "4.3"} /* 4.25 */, {40, 169, "4.2"} /* 4.225 */, {200, 849, "4.2"} /* 4.245 */, {2000, 8499, "4.2"}, /* 4.2495 */
		{1_000_000, 4_250_000, "4.3"}, {2_000_000, 8_499_999, "4.2"}, {3, 3, "1.0"},
	} {
		assert.Equal(t, tt.want, review.Aggregate{Count: tt.count, Sum: tt.sum}.AverageText(), "%d/%d", tt.sum, tt.count)
	}

	for count := int64(1); count <= 60; count++ {
		for sum := count; sum <= 5*count; sum++ {
			got, ok := review.Aggregate{Count: count, Sum: sum}.Average()
			require.True(t, ok)
			// round half up of 10·sum/count, exactly.
			exact := new(big.Rat).SetFrac64(10*sum, count)
			floor := new(big.Int).Quo(exact.Num(), exact.Denom())
			frac := new(big.Rat).Sub(exact, new(big.Rat).SetInt(floor))
			want := floor.Int64()
			if frac.Cmp(big.NewRat(1, 2)) >= 0 {
				want++
			}
			require.Equal(t, want, got, "%d/%d", sum, count)
		}
	}
}

func TestAggregateAddAndDistribution(t *testing.T) {
	t.Parallel()
	var a review.Aggregate
	for _, c := range []struct{ before, after review.Contribution }{
		{review.Contribution{}, review.Contribution{Public: true, Rating: 5}},
		{review.Contribution{}, review.Contribution{Public: true, Rating: 4}},
		{review.Contribution{}, review.Contribution{Public: true, Rating: 1}},
		{review.Contribution{Public: true, Rating: 1}, review.Contribution{Public: true, Rating: 2}},
	} {
		a = a.Add(review.Delta(c.before, c.after))
	}
	assert.Equal(t, review.Aggregate{Count: 3, Sum: 11, Distribution: [5]int64{0, 1, 0, 1, 1}}, a)
	assert.Equal(t, map[string]int64{"1": 0, "2": 1, "3": 0, "4": 1, "5": 1}, a.DistributionMap())
	assert.Equal(t, "3.7", a.AverageText())
}

func TestTooLong(t *testing.T) {
	t.Parallel()
	assert.False(t, review.TooLong(strings.Repeat("é", review.MaxText)))
	assert.True(t, review.TooLong(strings.Repeat("é", review.MaxText+1)))
}

func TestAuthor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		show        bool
		first, last string
		locale      string
		want        string
	}{
		{"consent", true, "Greta", "Zimmermann", "de_DE", "Greta Z."},
		{"no consent", false, "Greta", "Zimmermann", "de_DE", "Verifizierter Kunde"},
		{"no consent, English", false, "Greta", "Zimmermann", "en_US", "Verified customer"},
		{"lower case last name", true, "jan", "de vries", "nl", "jan D."},
		{"two first names: the first word", true, "Anne Marie", "Jensen", "da", "Anne J."},
		{"full name in the first name", true, "Greta Zimmermann", "Zimmermann", "de", "Greta Z."},
		{"full name, last name transliterated", true, "Anna Strauß", "STRAUSS", "de", "Anna S."},
		{"full name, last name spelt otherwise", true, "Zoë Müller", "Mueller", "de", "Zoë M."},
		{"full name, no last name", true, "Jan van der Berg", "", "nl", "Geverifieerde klant"},
		{"full name, blank last name", true, "Greta Zimmermann", "  ", "de", "Verifizierter Kunde"},
		{"first name only", true, "Greta", "", "fr", "Client vérifié"},
		{"no first name", true, "", "Zimmermann", "fr", "Client vérifié"},
		{"blank first name", true, " \t", "Zimmermann", "fr", "Client vérifié"},
		{"nothing", true, "", "", "es", "Cliente verificado"},
		{"an email for a name", true, "greta@example.com", "Z", "en", "Verified customer"},
		{"digits in the first word", true, "Greta2 Z", "Zimmermann", "en", "Verified customer"},
		{"digits after the first word", true, "Greta 2", "Zimmermann", "en", "Greta Z."},
		{"markup", true, "<b>Greta</b>", "Z", "en", "Verified customer"},
		{"too long", true, strings.Repeat("a", 41), "Z", "en", "Verified customer"},
		{"hyphen and apostrophe", true, "Anne-Marie", "D'Arcy", "en", "Anne-Marie D."},
		{"bidi override in a name stored before it was refused", true, "Gre\u202Eta", "Zimmermann", "en", "Verified customer"},
		{"bidi override before the last name", true, "Greta", "\u202EZimmermann", "en", "Greta Z."},
		{"last name starting with a quote", true, "Greta", "'t Hooft", "nl", "Greta T."},
		{"last name without a letter", true, "Greta", "-", "en", "Verified customer"},
		{"accented initial", true, "Zoë", "état", "fr", "Zoë É."},
		{"decomposed accented initial", true, "Zoë", "e\u0301tat", "fr", "Zoë E\u0301."},
		{"unknown locale", false, "", "", "pt_BR", "Verified customer"},
		{"Danish", false, "", "", "da_DK", "Verificeret kunde"},
		{"Dutch", false, "", "", "nl_BE", "Geverifieerde klant"},
	} {
		assert.Equal(t, tt.want, review.Author(tt.show, tt.first, tt.last, tt.locale), tt.name)
	}
	assert.Equal(t, []string{"da", "de", "en", "es", "fr", "nl"}, review.Locales(), "the languages of the customer pages")
}

// FuzzAuthor: whatever the names, the author is "Verified customer" or
// the first word of the first name, a space, one letter of the last name
// (with its accents) and a period — never an "@" or a digit.
func FuzzAuthor(f *testing.F) {
	f.Add("Greta", "Zimmermann")
	f.Add("Greta Zimmermann", "")
	f.Add("Anna Strauß", "STRAUSS")
	f.Add("a@b.c", "Doe")
	f.Fuzz(func(t *testing.T, first, last string) {
		got := review.Author(true, first, last, "en")
		if got == review.VerifiedCustomer("en") {
			return
		}
		if strings.ContainsAny(got, "@0123456789") {
			t.Fatalf("Author(%q, %q) = %q", first, last, got)
		}
		words := strings.Fields(first)
		rest, ok := strings.CutPrefix(got, words[0]+" ")
		initial, n := utf8.DecodeRuneInString(rest)
		if !ok || !unicode.IsLetter(initial) || letters(rest) != 1 || !strings.HasSuffix(rest, ".") ||
			strings.TrimFunc(rest[n:len(rest)-1], func(r rune) bool { return unicode.Is(unicode.Mn, r) }) != "" {
			t.Fatalf("Author(%q, %q) = %q is not the first word and an initial", first, last, got)
		}
	})
}

func letters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}

func TestValidGTIN(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"4006381333931":  true,  // EAN-13
		"4006381333932":  false, // its check digit off by one
		"96385074":       true,  // EAN-8
		"96385075":       false,
		"036000291452":   true, // UPC-A
		"036000291453":   false,
		"10614141000415": true, // GTIN-14
		"10614141000416": false,
		"":               false,
		"400638133393":   false, // 12 digits that do not check
		"40063813339A1":  false,
		"4006-381333931": false,
		"123":            false,
		"٤٠٠٦٣٨١٣٣٣٩٣١":  false, // Arabic-Indic digits are not GS1's
	} {
		assert.Equal(t, want, review.ValidGTIN(s), s)
		if want {
			assert.Equal(t, s, review.PublicGTIN(s))
		} else {
			assert.Empty(t, review.PublicGTIN(s), s)
		}
	}
}
