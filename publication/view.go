package publication

import (
	"context"
	"encoding/json"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
)

// What is public of a review is decided here and only here: the store
// reads only public rows (review.Public), and these types carry only the
// fields below — the author as review.Author makes it, never the
// customer's email address, mobile number, postal address, reference or
// last name.

// Account is the shop as the public sees it.
type Account struct {
	ID          string  `json:"-"`
	DisplayName string  `json:"displayName"`
	LogoURL     *string `json:"logoUrl"`
}

// AccountOf is the public face of an account: its display name (its name
// when unset) and logo.
func AccountOf(a accountdb.Account) Account {
	b := a.Brand()
	out := Account{ID: a.ID, DisplayName: b.DisplayName}
	if b.LogoURL != "" {
		out.LogoURL = &b.LogoURL
	}
	return out
}

// Aggregate is a set of public ratings: average null when there are none.
type Aggregate struct {
	Count        int64            `json:"count"`
	Average      *json.Number     `json:"average"`
	Distribution map[string]int64 `json:"distribution"`
	agg          review.Aggregate
}

// AggregateOf writes an aggregate as the public answers do.
func AggregateOf(a review.Aggregate) Aggregate {
	out := Aggregate{Count: a.Count, Distribution: a.DistributionMap(), agg: a}
	if avg := json.Number(a.AverageText()); avg != "" {
		out.Average = &avg
	}
	return out
}

// Reply is the shop's public answer to a review.
type Reply struct {
	Text      string `json:"text"`
	CreatedAt Time   `json:"createdAt"`
}

// Product is a product review inside a public review.
type Product struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	SKU      string `json:"sku"`
	GTIN     string `json:"gtin"`
	MPN      string `json:"mpn"`
	Brand    string `json:"brand"`
	URL      string `json:"url"`
	ImageURL string `json:"imageUrl"`
	Rating   int    `json:"rating"`
	Comment  string `json:"comment"`
}

// Review is a public review with its proof.
type Review struct {
	ID string `json:"id"`
	// Rating is the shop rating; null when only products were rated.
	Rating    *int      `json:"rating"`
	Comment   string    `json:"comment"`
	Locale    string    `json:"locale"`
	Author    string    `json:"author"`
	CreatedAt Time      `json:"createdAt"`
	UpdatedAt Time      `json:"updatedAt"`
	Reply     *Reply    `json:"reply"`
	Products  []Product `json:"products"`
	Proof     string    `json:"proof"`
}

// List is GET /public/accounts/{acc}/reviews.
type List struct {
	Account    Account   `json:"account"`
	Aggregate  Aggregate `json:"aggregate"`
	Items      []Review  `json:"items"`
	NextCursor *string   `json:"nextCursor"`
}

// ProductInfo is a product as the event named it.
type ProductInfo struct {
	Name     string `json:"name"`
	SKU      string `json:"sku"`
	GTIN     string `json:"gtin"`
	MPN      string `json:"mpn"`
	Brand    string `json:"brand"`
	URL      string `json:"url"`
	ImageURL string `json:"imageUrl"`
}

// ProductReview is a public review of one product, with its review's
// author, reply and proof (which covers the product's rating).
type ProductReview struct {
	ID        string      `json:"id"`
	ReviewID  string      `json:"reviewId"`
	Rating    int         `json:"rating"`
	Comment   string      `json:"comment"`
	Locale    string      `json:"locale"`
	Author    string      `json:"author"`
	CreatedAt Time        `json:"createdAt"`
	UpdatedAt Time        `json:"updatedAt"`
	Product   ProductInfo `json:"product"`
	Reply     *Reply      `json:"reply"`
	Proof     string      `json:"proof"`
}

// ProductList is GET /public/products/reviews.
type ProductList struct {
	Account    Account         `json:"account"`
	Aggregate  Aggregate       `json:"aggregate"`
	Items      []ProductReview `json:"items"`
	NextCursor *string         `json:"nextCursor"`
}

func replyOf(r store.Review) *Reply {
	if r.ReplyText == "" || r.ReplyCreatedAt == nil {
		return nil
	}
	return &Reply{Text: r.ReplyText, CreatedAt: Time(*r.ReplyCreatedAt)}
}

func infoOf(p store.Product) ProductInfo {
	return ProductInfo{Name: p.Name, SKU: p.SKU, GTIN: review.PublicGTIN(p.GTIN), MPN: p.MPN, Brand: p.Brand, URL: p.URL, ImageURL: p.ImageURL}
}

// ReviewOf is a public review, signed; its author is named in its own
// language.
func (k *Keys) ReviewOf(ctx context.Context, r store.PublicReview) (Review, error) {
	proof, err := k.Sign(ctx, r)
	if err != nil {
		return Review{}, err
	}
	out := Review{ID: r.ID, Comment: r.Comment, Locale: r.Locale, Author: r.Author(r.Locale), CreatedAt: Time(r.CreatedAt),
		UpdatedAt: Time(r.UpdatedAt), Reply: replyOf(r.Review), Products: []Product{}, Proof: proof}
	if r.Rating != 0 {
		out.Rating = &r.Rating
	}
	for _, p := range r.Products {
		out.Products = append(out.Products, Product{ID: p.ID, Name: p.Name, SKU: p.SKU, GTIN: review.PublicGTIN(p.GTIN), MPN: p.MPN, Brand: p.Brand,
			URL: p.URL, ImageURL: p.ImageURL, Rating: p.Rating, Comment: p.Comment})
	}
	return out, nil
}

// ListOf is the public list of an account's reviews.
func (k *Keys) ListOf(ctx context.Context, a accountdb.Account, agg review.Aggregate, rs []store.PublicReview, next *store.Cursor) (List, error) {
	out := List{Account: AccountOf(a), Aggregate: AggregateOf(agg), Items: make([]Review, 0, len(rs))}
	for _, r := range rs {
		v, err := k.ReviewOf(ctx, r)
		if err != nil {
			return List{}, err
		}
		out.Items = append(out.Items, v)
	}
	if next != nil {
		c := next.Encode()
		out.NextCursor = &c
	}
	return out, nil
}

// ProductListOf is the public list of one product's reviews.
func (k *Keys) ProductListOf(ctx context.Context, a accountdb.Account, agg review.Aggregate, ps []store.PublicProductReview, next *store.Cursor) (ProductList, error) {
	out := ProductList{Account: AccountOf(a), Aggregate: AggregateOf(agg), Items: make([]ProductReview, 0, len(ps))}
	for _, p := range ps {
		proof, err := k.Sign(ctx, p.Review)
		if err != nil {
			return ProductList{}, err
		}
		out.Items = append(out.Items, ProductReview{ID: p.ID, ReviewID: p.ReviewID, Rating: p.Rating, Comment: p.Comment,
			Locale: p.Review.Locale, Author: p.Review.Author(p.Review.Locale), CreatedAt: Time(p.CreatedAt), UpdatedAt: Time(p.UpdatedAt),
			Product: infoOf(p.Product), Reply: replyOf(p.Review.Review), Proof: proof})
	}
	if next != nil {
		c := next.Encode()
		out.NextCursor = &c
	}
	return out, nil
}
