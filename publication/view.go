package publication

import (
	"context"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
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

// Reply is the shop's public answer to a review.
type Reply struct {
	Text      string `json:"text"`
	CreatedAt Time   `json:"createdAt"`
}

// Product is a product review inside a public review.
type Product struct {
	ID string `json:"id"`
	ProductInfo
	Rating  int    `json:"rating"`
	Comment string `json:"comment"`
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

// List is a page of public reviews with the aggregate they count in: of
// Review for GET /public/accounts/{acc}/reviews, of ProductReview for GET
// /public/products/reviews.
type List[T Review | ProductReview] struct {
	Account    Account        `json:"account"`
	Aggregate  review.Summary `json:"aggregate"`
	Items      []T            `json:"items"`
	NextCursor *string        `json:"nextCursor"`
}

func replyOf(r reviewdb.Review) *Reply {
	if r.ReplyText == "" || r.ReplyCreatedAt == nil {
		return nil
	}
	return &Reply{Text: r.ReplyText, CreatedAt: Time(*r.ReplyCreatedAt)}
}

func infoOf(p reviewdb.Product) ProductInfo {
	return ProductInfo{Name: p.Name, SKU: p.SKU, GTIN: review.PublicGTIN(p.GTIN), MPN: p.MPN, Brand: p.Brand, URL: p.URL, ImageURL: p.ImageURL}
}

// ReviewOf is a public review, signed; its author is named in its own
// language.
func (k *Keys) ReviewOf(ctx context.Context, r reviewdb.PublicReview) (Review, error) {
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
		out.Products = append(out.Products, Product{ID: p.ID, ProductInfo: infoOf(p.Product), Rating: p.Rating, Comment: p.Comment})
	}
	return out, nil
}

// productReviewOf is a public product review, signed with its review.
func (k *Keys) productReviewOf(ctx context.Context, p reviewdb.PublicProductReview) (ProductReview, error) {
	proof, err := k.Sign(ctx, p.Review)
	if err != nil {
		return ProductReview{}, err
	}
	return ProductReview{ID: p.ID, ReviewID: p.ReviewID, Rating: p.Rating, Comment: p.Comment,
		Locale: p.Review.Locale, Author: p.Review.Author(p.Review.Locale), CreatedAt: Time(p.CreatedAt), UpdatedAt: Time(p.UpdatedAt),
		Product: infoOf(p.Product), Reply: replyOf(p.Review.Review), Proof: proof}, nil
}

// ListOf is the public list of an account's reviews.
func (k *Keys) ListOf(ctx context.Context, a accountdb.Account, agg review.Aggregate, rs []reviewdb.PublicReview, next *store.Cursor) (List[Review], error) {
	return listOf(ctx, a, agg, rs, next, k.ReviewOf)
}

// ProductListOf is the public list of one product's reviews.
func (k *Keys) ProductListOf(ctx context.Context, a accountdb.Account, agg review.Aggregate, ps []reviewdb.PublicProductReview, next *store.Cursor) (List[ProductReview], error) {
	return listOf(ctx, a, agg, ps, next, k.productReviewOf)
}

// listOf is a list of the rows, each made public (and signed) by item.
func listOf[R any, T Review | ProductReview](ctx context.Context, a accountdb.Account, agg review.Aggregate, rows []R, next *store.Cursor,
	item func(context.Context, R) (T, error)) (List[T], error) {
	out := List[T]{Account: AccountOf(a), Aggregate: agg.Summary(), Items: make([]T, 0, len(rows))}
	for _, r := range rows {
		v, err := item(ctx, r)
		if err != nil {
			return List[T]{}, err
		}
		out.Items = append(out.Items, v)
	}
	if next != nil {
		c := next.Encode()
		out.NextCursor = &c
	}
	return out, nil
}
