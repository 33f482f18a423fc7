package publication

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

//go:embed html/widget.html
var widgetHTML string

//go:embed html/public.css
var publicCSS string

// The widget and the verify page are server-rendered html/template pages
// with their CSS inline (its hash in the Content-Security-Policy), no
// script and nothing loaded from elsewhere but https images.
var pageTemplates = template.Must(template.New("public").Parse(widgetHTML))

// LatestInWidget is how many reviews the widget shows; its "all reviews"
// view shows AllPerPage a page.
const (
	LatestInWidget = 3
	AllPerPage     = 20
)

// Themes of the widget.
const (
	ThemeLight = "light"
	ThemeDark  = "dark"
)

// Content-Security-Policy of the widget and the verify page: the inline
// style by its hash, https images, no script, no form; the widget may be
// framed by any site (frame-ancestors *), the verify page by none.
const (
	cspWidget = "default-src 'none'; style-src %s; img-src https:; form-action 'none'; base-uri 'none'; frame-ancestors *"
	cspVerify = "default-src 'none'; style-src %s; img-src https:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)

func styleHash(css string) string {
	sum := sha256.Sum256([]byte(css))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// WidgetCSP and VerifyCSP are the Content-Security-Policy headers of the
// widget and the verify page.
var (
	WidgetCSP = strings.Replace(cspWidget, "%s", styleHash(publicCSS), 1)
	VerifyCSP = strings.Replace(cspVerify, "%s", styleHash(publicCSS), 1)
)

// ContentTypeHTML is the media type of the widget and the verify page.
const ContentTypeHTML = "text/html; charset=utf-8"

// tr is the text of key in lang, filled in with args.
func tr(lang, key string, args ...any) string {
	s := texts[lang][key]
	if len(args) == 0 {
		return s
	}
	return fmt.Sprintf(s, args...)
}

// stars draws a rating 0–5 as filled and empty stars (for the eye only:
// the text beside it says the same to a screen reader).
func stars(n int) string {
	n = max(0, min(review.MaxRating, n))
	return strings.Repeat("★", n) + strings.Repeat("☆", review.MaxRating-n)
}

// averageText is the average in the reader's notation ("4,3").
func averageText(lang string, a review.Aggregate) string {
	return strings.Replace(a.AverageText(), ".", tr(lang, "decimal"), 1)
}

func countText(lang string, n int64) string {
	if n == 1 {
		return tr(lang, "reviewsOne")
	}
	return tr(lang, "reviewsOther", n)
}

type productData struct {
	Name, Stars, RatingText, Comment string
}

type reviewData struct {
	Author, Date, VerifyURL, Verified string
	Rating                            int
	Stars, RatingText, Comment        string
	Products                          []productData
	ProductsLabel                     string
	Reply, ReplyLabel                 string
}

func reviewDataOf(lang, shop string, r reviewdb.PublicReview, verifyURL string) reviewData {
	d := reviewData{Author: r.Author(lang), Date: r.CreatedAt.UTC().Format(time.DateOnly), VerifyURL: verifyURL,
		Verified: tr(lang, "verifiedReview"), Rating: r.Rating, Stars: stars(r.Rating),
		RatingText: tr(lang, "starsOutOf5", r.Rating), Comment: r.Comment, ProductsLabel: tr(lang, "products"),
		Reply: r.ReplyText, ReplyLabel: tr(lang, "replyFrom", shop)}
	for _, p := range r.Products {
		d.Products = append(d.Products, productData{Name: p.Name, Stars: stars(p.Rating), RatingText: tr(lang, "starsOutOf5", p.Rating),
			Comment: p.Comment})
	}
	return d
}

// Widget is what the widget shows.
type Widget struct {
	// Locale is the reader's language (Pick); Theme ThemeLight or
	// ThemeDark.
	Locale, Theme string
	Account       accountdb.Account
	// Aggregate is the account's (or, with a product, the product's).
	Aggregate review.Aggregate
	// Reviews are the latest (newest first).
	Reviews []reviewdb.PublicReview
	// VerifyURL is the verify page of a review.
	VerifyURL func(reviewID string) string
	// AllURL links to all reviews ("" on that view itself); NextURL to
	// the next page of it ("" for none).
	AllURL, NextURL string
}

// Render writes the widget's HTML.
func (v Widget) Render() ([]byte, error) {
	lang := Pick(v.Locale)
	theme := ThemeLight
	if v.Theme == ThemeDark {
		theme = ThemeDark
	}
	shop := AccountOf(v.Account).DisplayName
	tenths, _ := v.Aggregate.Average()
	data := struct {
		Lang, Theme, Title, Average, Stars, RatingText, CountText, NoReviews string
		CSS                                                                  template.CSS
		Count                                                                int64
		Reviews                                                              []reviewData
		AllURL, AllLabel, NextURL, NextLabel                                 string
	}{Lang: lang, Theme: theme, Title: tr(lang, "title", shop), Average: averageText(lang, v.Aggregate),
		Stars: stars(int((tenths + 5) / 10)), RatingText: tr(lang, "ratedOutOf5", averageText(lang, v.Aggregate)),
		CountText: countText(lang, v.Aggregate.Count), NoReviews: tr(lang, "noReviews"), CSS: template.CSS(publicCSS),
		Count: v.Aggregate.Count, AllURL: v.AllURL, AllLabel: tr(lang, "allReviews"), NextURL: v.NextURL,
		NextLabel: tr(lang, "olderReviews")}
	for _, r := range v.Reviews {
		data.Reviews = append(data.Reviews, reviewDataOf(lang, shop, r, v.VerifyURL(r.ID)))
	}
	var b bytes.Buffer
	if err := pageTemplates.ExecuteTemplate(&b, "widget", data); err != nil {
		return nil, fmt.Errorf("render widget: %w", err)
	}
	return b.Bytes(), nil
}

// ProofCheck is what the verify page found of a proof the reader brought.
type ProofCheck int

// Proof checks.
const (
	// ProofNone: the reader brought no proof.
	ProofNone ProofCheck = iota
	// ProofMatches: valid, and its claims are the review's as it is now.
	ProofMatches
	// ProofMatchesOlder: valid, issued before proofs covered the products'
	// comments, and the rest of its claims are the review's as it is now.
	ProofMatchesOlder
	// ProofOutdated: valid, but the review changed since.
	ProofOutdated
	// ProofInvalid: not a proof of this account.
	ProofInvalid
)

// VerifyPage is what the verify page of a review shows.
type VerifyPage struct {
	Locale  string
	Account accountdb.Account
	Review  reviewdb.PublicReview
	// Proof is the review's proof as it is now, signed by KID.
	Proof, KID string
	// JWKSURL is where the account's keys are published; VerifyURL is
	// this page's address.
	JWKSURL, VerifyURL string
	// Brought is what the reader's own proof turned out to be.
	Brought ProofCheck
}

// Render writes the verify page's HTML.
func (v VerifyPage) Render() ([]byte, error) {
	lang := Pick(v.Locale)
	shop := AccountOf(v.Account).DisplayName
	c := ClaimsOf(v.Review)
	since := time.Time(c.ReviewedAt).UTC().Format(time.DateOnly)
	data := struct {
		Lang, Title, Statement, Invited, ReviewLabel, Signed, JWKSURL, ProofLabel, Proof, ProofResult, ProofClass string
		Covers                                                                                                    string
		CSS                                                                                                       template.CSS
		Review                                                                                                    reviewData
	}{Lang: lang, Title: tr(lang, "verifyTitle"), ReviewLabel: tr(lang, "verifyTheReview"),
		Signed: tr(lang, "verifySigned", v.KID), JWKSURL: v.JWKSURL, ProofLabel: tr(lang, "verifyProof"), Proof: v.Proof,
		CSS: template.CSS(publicCSS), Review: reviewDataOf(lang, shop, v.Review, v.VerifyURL)}
	if c.EventDate != nil {
		data.Statement = tr(lang, "verifyGenuine", shop, *c.EventDate, since)
	} else {
		data.Statement = tr(lang, "verifyNoEvent", shop, since)
	}
	if c.InvitedAt != nil {
		data.Invited = tr(lang, "verifyInvited", time.Time(*c.InvitedAt).UTC().Format(time.DateOnly))
	}
	// Which texts the proof covers: every word the customer published;
	// never the shop's reply, which the page shows too.
	data.Covers = tr(lang, "coversReview")
	if len(c.Products) > 0 {
		data.Covers = tr(lang, "coversProducts")
	}
	switch v.Brought {
	case ProofMatches:
		data.ProofResult, data.ProofClass = tr(lang, "verifyProofOK"), "ok"
	case ProofMatchesOlder:
		data.ProofResult, data.ProofClass = tr(lang, "verifyProofLess"), "ok"
	case ProofOutdated:
		data.ProofResult, data.ProofClass = tr(lang, "verifyProofOld"), "bad"
	case ProofInvalid:
		data.ProofResult, data.ProofClass = tr(lang, "verifyProofBad"), "bad"
	}
	var b bytes.Buffer
	if err := pageTemplates.ExecuteTemplate(&b, "verify", data); err != nil {
		return nil, fmt.Errorf("render verify page: %w", err)
	}
	return b.Bytes(), nil
}
