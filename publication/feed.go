package publication

import (
	"bufio"
	"encoding/xml"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/accountdb"
	"github.com/touchpoint/touchpoint/store/reviewdb"
)

// Google's Product Reviews Feed, version 2.3, written with encoding/xml's
// streaming encoder: the opening elements, then one review at a time as
// the store reads them, so memory stays constant however many there are.
// The encoder escapes every text and attribute ("<", "&", "]]>" come out
// as character references; characters XML cannot carry become U+FFFD).
//
// The feed's schema requires of every review a content with at least one
// character other than white space, and of every product a product_url.
// A product rated without a comment is left out of the feed (its rating
// still counts in every aggregate and shows in the widget and the JSON):
// the text is the customer's, and nothing may be written in their name.
// A product the event gave without an address (or with one the schema's
// httpUrlType refuses) gets the review's own address, as the schema
// allows. An identifier list (gtins, mpns, skus, brands), product_ids and
// reviews are each written only with something in them: the schema
// refuses them empty. internal/feedschema holds the schema; the tests
// check every feed against it.

// FeedVersion is the version of Google's Product Reviews Feed written.
const FeedVersion = "2.3"

// ContentTypeXML is the media type of the feed.
const ContentTypeXML = "application/xml; charset=utf-8"

const feedSchema = "http://www.google.com/shopping/reviews/schema/product/2.3/product_reviews.xsd"

// feedFlushEvery is how many reviews are encoded between flushes to the
// reader.
const feedFlushEvery = 256

// Feed describes an account's feed.
type Feed struct {
	Account accountdb.Account
	// ReviewURL is the address of the page that shows one review alone
	// (review_url type="singleton").
	ReviewURL func(reviewID string) string
}

type feedReviewer struct {
	Name feedName `xml:"name"`
}

type feedName struct {
	Anonymous string `xml:"is_anonymous,attr,omitempty"`
	Text      string `xml:",chardata"`
}

type feedURL struct {
	Type string `xml:"type,attr"`
	URL  string `xml:",chardata"`
}

type feedOverall struct {
	Min    int `xml:"min,attr"`
	Max    int `xml:"max,attr"`
	Rating int `xml:",chardata"`
}

// feedProductIDs are a product's identifiers. The schema refuses an
// empty container (each holds one or more of its element), and
// encoding/xml writes the parent of an "a>b" path even when b is empty:
// so each container is its own element, nil when it has nothing.
type feedProductIDs struct {
	GTINs  *feedGTINs  `xml:"gtins,omitempty"`
	MPNs   *feedMPNs   `xml:"mpns,omitempty"`
	SKUs   *feedSKUs   `xml:"skus,omitempty"`
	Brands *feedBrands `xml:"brands,omitempty"`
}

type (
	feedGTINs struct {
		GTIN []string `xml:"gtin"`
	}
	feedMPNs struct {
		MPN []string `xml:"mpn"`
	}
	feedSKUs struct {
		SKU []string `xml:"sku"`
	}
	feedBrands struct {
		Brand []string `xml:"brand"`
	}
)

type feedProduct struct {
	IDs  *feedProductIDs `xml:"product_ids,omitempty"`
	Name string          `xml:"product_name,omitempty"`
	URL  string          `xml:"product_url"`
}

type feedReview struct {
	XMLName   xml.Name      `xml:"review"`
	ID        string        `xml:"review_id"`
	Reviewer  feedReviewer  `xml:"reviewer"`
	Timestamp string        `xml:"review_timestamp"`
	Content   string        `xml:"content"`
	URL       feedURL       `xml:"review_url"`
	Overall   feedOverall   `xml:"ratings>overall"`
	Products  []feedProduct `xml:"products>product"`
	IsSpam    bool          `xml:"is_spam"`
	// CollectionMethod is always post_fulfillment: every review answers
	// an invite sent after a transaction.
	CollectionMethod string `xml:"collection_method"`
	// TransactionID is the event's id, never the shop's order reference
	// (a customer's data); the product reviews of one event share it.
	TransactionID string `xml:"transaction_id,omitempty"`
}

// collectionPostFulfillment is the schema's collection_method of a review
// written in answer to a solicitation after the order was fulfilled.
const collectionPostFulfillment = "post_fulfillment"

// schemaURLPattern is the schema's httpUrlType ((https?://)?\S+\.\S+,
// XSD's \S being anything but space, tab, newline and carriage return).
var schemaURLPattern = regexp.MustCompile(`^(https?://)?[^ \t\n\r]+\.[^ \t\n\r]+$`)

// schemaURL reports whether u is an httpUrlType. A product's address that
// is not (one on a host without a dot) gives way to the review's own, as
// one missing does; a logo's is left out.
func schemaURL(u string) bool { return schemaURLPattern.MatchString(u) }

// hasText reports whether s may be written as one of the schema's
// strings: it needs a character other than white space.
func hasText(s string) bool { return strings.TrimSpace(s) != "" }

// inFeed reports whether the feed carries a public product review: only
// one with a comment (the feed's content is required and never empty).
func inFeed(it reviewdb.FeedItem) bool { return hasText(it.Comment) }

// feedReviewOf is one public product review as the feed writes it: the
// reviewer by the public author's name, marked anonymous unless the
// customer agreed to be named.
func (f Feed) feedReviewOf(it reviewdb.FeedItem) feedReview {
	name := it.Author(it.Locale)
	anonymous := "true"
	if it.ShowName && name != review.VerifiedCustomer(it.Locale) {
		anonymous = ""
	}
	reviewURL := f.ReviewURL(it.ReviewID)
	p := feedProduct{Name: strings.TrimSpace(it.Name), URL: it.URL}
	if !schemaURL(p.URL) {
		p.URL = reviewURL
	}
	var ids feedProductIDs
	if gtin := review.PublicGTIN(it.GTIN); gtin != "" {
		ids.GTINs = &feedGTINs{[]string{gtin}}
	}
	if hasText(it.MPN) {
		ids.MPNs = &feedMPNs{[]string{it.MPN}}
	}
	if hasText(it.SKU) {
		ids.SKUs = &feedSKUs{[]string{it.SKU}}
	}
	if hasText(it.Brand) {
		ids.Brands = &feedBrands{[]string{it.Brand}}
	}
	if ids != (feedProductIDs{}) {
		p.IDs = &ids
	}
	return feedReview{ID: it.ID, Reviewer: feedReviewer{Name: feedName{Anonymous: anonymous, Text: name}},
		Timestamp: it.CreatedAt.UTC().Format(time.RFC3339), Content: it.Comment,
		URL:     feedURL{Type: "singleton", URL: reviewURL},
		Overall: feedOverall{Min: review.MinRating, Max: review.MaxRating, Rating: it.Rating}, Products: []feedProduct{p},
		CollectionMethod: collectionPostFulfillment, TransactionID: it.EventID}
}

// Write streams the feed to w: each calls its function with every public
// product review in turn (reviewdb.Store.EachPublicProductReview) and
// stops at its first error; the feed leaves out those without a comment.
// Once the first bytes are out, an error can only cut the document short;
// the reader's XML parser then refuses it.
func (f Feed) Write(w io.Writer, each func(fn func(reviewdb.FeedItem) error) error) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	if _, err := bw.WriteString(xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(bw)
	feed := xml.StartElement{Name: xml.Name{Local: "feed"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "xmlns:vc"}, Value: "http://www.w3.org/2007/XMLSchema-versioning"},
		{Name: xml.Name{Local: "xmlns:xsi"}, Value: "http://www.w3.org/2001/XMLSchema-instance"},
		{Name: xml.Name{Local: "xsi:noNamespaceSchemaLocation"}, Value: feedSchema},
	}}
	if err := enc.EncodeToken(feed); err != nil {
		return err
	}
	if err := enc.EncodeElement(FeedVersion, xml.StartElement{Name: xml.Name{Local: "version"}}); err != nil {
		return err
	}
	pub := AccountOf(f.Account)
	publisher := struct {
		Name    string `xml:"name"`
		Favicon string `xml:"favicon,omitempty"`
	}{Name: pub.DisplayName}
	if pub.LogoURL != nil && schemaURL(*pub.LogoURL) {
		publisher.Favicon = *pub.LogoURL
	}
	if err := enc.EncodeElement(publisher, xml.StartElement{Name: xml.Name{Local: "publisher"}}); err != nil {
		return err
	}
	// <reviews> holds one review or more: it is opened with the first.
	reviews := xml.StartElement{Name: xml.Name{Local: "reviews"}}
	n := 0
	err := each(func(it reviewdb.FeedItem) error {
		if !inFeed(it) {
			return nil
		}
		if n == 0 {
			if err := enc.EncodeToken(reviews); err != nil {
				return err
			}
		}
		if err := enc.Encode(f.feedReviewOf(it)); err != nil {
			return err
		}
		if n++; n%feedFlushEvery == 0 {
			if err := enc.Flush(); err != nil {
				return err
			}
			return bw.Flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n > 0 {
		if err := enc.EncodeToken(reviews.End()); err != nil {
			return err
		}
	}
	if err := enc.EncodeToken(feed.End()); err != nil {
		return err
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	if _, err := bw.WriteString("\n"); err != nil {
		return err
	}
	return bw.Flush()
}
