package publication

import (
	"bufio"
	"encoding/xml"
	"io"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
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
// A product the event gave without an address gets the review's own
// address, as the schema allows.

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
	Account store.Account
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

type feedProductIDs struct {
	GTINs  []string `xml:"gtins>gtin,omitempty"`
	MPNs   []string `xml:"mpns>mpn,omitempty"`
	SKUs   []string `xml:"skus>sku,omitempty"`
	Brands []string `xml:"brands>brand,omitempty"`
}

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
}

func some(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// validGTIN reports whether s is a GTIN as GS1 defines it: 8, 12, 13 or
// 14 digits whose last is the check digit of the others. Events take any
// text for a product's gtin; the feed passes on only what checks.
func validGTIN(s string) bool {
	switch len(s) {
	case 8, 12, 13, 14:
	default:
		return false
	}
	sum := 0
	for i := len(s) - 1; i >= 0; i-- {
		d := int(s[i]) - '0'
		if d < 0 || d > 9 {
			return false
		}
		if i == len(s)-1 {
			continue // the check digit itself
		}
		if (len(s)-1-i)%2 == 1 {
			d *= 3 // from the right, every other digit next to the check digit
		}
		sum += d
	}
	return (10-sum%10)%10 == int(s[len(s)-1]-'0')
}

// inFeed reports whether the feed carries a public product review: only
// one with a comment (the feed's content is required and never empty).
func inFeed(it store.FeedItem) bool {
	return strings.TrimSpace(it.Comment) != ""
}

// feedReviewOf is one public product review as the feed writes it: the
// reviewer by the public author's name, marked anonymous unless the
// customer agreed to be named.
func (f Feed) feedReviewOf(it store.FeedItem) feedReview {
	name := it.Author(it.Locale)
	anonymous := "true"
	if it.ShowName && name != review.VerifiedCustomer(it.Locale) {
		anonymous = ""
	}
	reviewURL := f.ReviewURL(it.ReviewID)
	p := feedProduct{Name: strings.TrimSpace(it.Name), URL: it.URL}
	if p.URL == "" {
		p.URL = reviewURL
	}
	var gtin string
	if validGTIN(it.GTIN) {
		gtin = it.GTIN // Google flags a product whose GTIN does not check
	}
	ids := feedProductIDs{GTINs: some(gtin), MPNs: some(it.MPN), SKUs: some(it.SKU), Brands: some(it.Brand)}
	if ids.GTINs != nil || ids.MPNs != nil || ids.SKUs != nil || ids.Brands != nil {
		p.IDs = &ids
	}
	return feedReview{ID: it.ID, Reviewer: feedReviewer{Name: feedName{Anonymous: anonymous, Text: name}},
		Timestamp: it.CreatedAt.UTC().Format(time.RFC3339), Content: it.Comment,
		URL:     feedURL{Type: "singleton", URL: reviewURL},
		Overall: feedOverall{Min: review.MinRating, Max: review.MaxRating, Rating: it.Rating}, Products: []feedProduct{p}}
}

// Write streams the feed to w: each calls its function with every public
// product review in turn (store.EachPublicProductReview) and stops at its
// first error; the feed leaves out those without a comment. Once the
// first bytes are out, an error can only cut the document short; the
// reader's XML parser then refuses it.
func (f Feed) Write(w io.Writer, each func(fn func(store.FeedItem) error) error) error {
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
	if pub.LogoURL != nil {
		publisher.Favicon = *pub.LogoURL
	}
	if err := enc.EncodeElement(publisher, xml.StartElement{Name: xml.Name{Local: "publisher"}}); err != nil {
		return err
	}
	reviews := xml.StartElement{Name: xml.Name{Local: "reviews"}}
	if err := enc.EncodeToken(reviews); err != nil {
		return err
	}
	n := 0
	err := each(func(it store.FeedItem) error {
		if !inFeed(it) {
			return nil
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
	if err := enc.EncodeToken(reviews.End()); err != nil {
		return err
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
