package publication

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// JSON-LD is written with encoding/json and its HTML escaping left on:
// "<", ">" and "&" come out as \u003c, \u003e and \u0026, so a shop can
// paste the document into a <script type="application/ld+json"> element
// and no comment can close the element early. The parsed document holds
// the text intact.

// LatestInJSONLD is how many reviews a JSON-LD document carries.
const LatestInJSONLD = 20

// ContentTypeJSONLD is the media type of the JSON-LD documents.
const ContentTypeJSONLD = "application/ld+json"

const schemaOrg = "https://schema.org"

type ldAggregateRating struct {
	Type        string      `json:"@type"`
	RatingValue json.Number `json:"ratingValue"`
	ReviewCount int64       `json:"reviewCount"`
	BestRating  int         `json:"bestRating"`
	WorstRating int         `json:"worstRating"`
}

type ldRating struct {
	Type        string `json:"@type"`
	RatingValue int    `json:"ratingValue"`
	BestRating  int    `json:"bestRating"`
	WorstRating int    `json:"worstRating"`
}

type ldPerson struct {
	Type string `json:"@type"`
	Name string `json:"name"`
}

type ldReview struct {
	Type          string   `json:"@type"`
	ReviewRating  ldRating `json:"reviewRating"`
	Author        ldPerson `json:"author"`
	DatePublished string   `json:"datePublished"`
	ReviewBody    string   `json:"reviewBody,omitempty"`
}

type ldBrand struct {
	Type string `json:"@type"`
	Name string `json:"name"`
}

// Organization is the account's JSON-LD.
type Organization struct {
	Context         string             `json:"@context"`
	Type            string             `json:"@type"`
	Name            string             `json:"name"`
	Logo            string             `json:"logo,omitempty"`
	AggregateRating *ldAggregateRating `json:"aggregateRating,omitempty"`
	Review          []ldReview         `json:"review"`
}

// LDProduct is a product's JSON-LD.
type LDProduct struct {
	Context         string             `json:"@context"`
	Type            string             `json:"@type"`
	Name            string             `json:"name"`
	SKU             string             `json:"sku,omitempty"`
	GTIN            string             `json:"gtin,omitempty"`
	MPN             string             `json:"mpn,omitempty"`
	Brand           *ldBrand           `json:"brand,omitempty"`
	Image           string             `json:"image,omitempty"`
	URL             string             `json:"url,omitempty"`
	AggregateRating *ldAggregateRating `json:"aggregateRating,omitempty"`
	Review          []ldReview         `json:"review"`
}

// aggregateLD is the aggregateRating of a, or nil when nothing is rated
// (search engines refuse a reviewCount of 0).
func aggregateLD(a review.Aggregate) *ldAggregateRating {
	avg := a.AverageText()
	if avg == "" {
		return nil
	}
	return &ldAggregateRating{Type: "AggregateRating", RatingValue: json.Number(avg), ReviewCount: a.Count,
		BestRating: review.MaxRating, WorstRating: review.MinRating}
}

func reviewLD(rating int, author, body string, at time.Time) ldReview {
	return ldReview{Type: "Review", ReviewRating: ldRating{Type: "Rating", RatingValue: rating, BestRating: review.MaxRating,
		WorstRating: review.MinRating}, Author: ldPerson{Type: "Person", Name: author},
		DatePublished: at.UTC().Format(time.DateOnly), ReviewBody: body}
}

// OrganizationOf is the account's JSON-LD: an Organization with the
// aggregate of its public shop ratings and the latest of them (rs, newest
// first; those without a shop rating are left out).
func OrganizationOf(a accountdb.Account, agg review.Aggregate, rs []reviewdb.PublicReview) Organization {
	pub := AccountOf(a)
	o := Organization{Context: schemaOrg, Type: "Organization", Name: pub.DisplayName, AggregateRating: aggregateLD(agg),
		Review: []ldReview{}}
	if pub.LogoURL != nil {
		o.Logo = *pub.LogoURL
	}
	for _, r := range rs {
		if r.Rating != 0 && len(o.Review) < LatestInJSONLD {
			o.Review = append(o.Review, reviewLD(r.Rating, r.Author(r.Locale), r.Comment, r.CreatedAt))
		}
	}
	return o
}

// ErrNotReviewed: the product has no public review, so there is nothing
// to describe (search engines refuse a Product without reviews, and one
// made from the query alone would show what the caller typed).
var ErrNotReviewed = errors.New("the product has no public review")

// ProductOf is a product's JSON-LD: the Product named by key k (its
// name, keys and brand from its latest review), the aggregate of its
// public ratings and the latest of them (ps, newest first). A GTIN is
// named only when it checks (review.PublicGTIN), as in every public
// output. ErrNotReviewed when ps is empty.
func ProductOf(k review.ProductKey, agg review.Aggregate, ps []reviewdb.PublicProductReview) (LDProduct, error) {
	if len(ps) == 0 {
		return LDProduct{}, ErrNotReviewed
	}
	latest := ps[0].Product
	p := LDProduct{Context: schemaOrg, Type: "Product", Name: or(latest.Name, k.Value), SKU: latest.SKU,
		GTIN: review.PublicGTIN(latest.GTIN), MPN: latest.MPN, Image: latest.ImageURL, URL: latest.URL,
		AggregateRating: aggregateLD(agg), Review: []ldReview{}}
	switch k.Kind { // the key asked by, when the latest review's event gave another
	case review.SKU:
		p.SKU = k.Value
	case review.GTIN:
		p.GTIN = review.PublicGTIN(k.Value)
	case review.MPN:
		p.MPN = k.Value
	}
	if latest.Brand != "" {
		p.Brand = &ldBrand{Type: "Brand", Name: latest.Brand}
	}
	for _, pr := range ps {
		if len(p.Review) < LatestInJSONLD {
			p.Review = append(p.Review, reviewLD(pr.Rating, pr.Review.Author(pr.Review.Locale), pr.Comment, pr.CreatedAt))
		}
	}
	return p, nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// MarshalJSONLD writes a JSON-LD document safe to embed in HTML.
func MarshalJSONLD(v any) ([]byte, error) { return json.Marshal(v) }
