package feedschema_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/feedschema"
)

// full is a feed with every element and attribute of the schema.
const full = `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns:vc="http://www.w3.org/2007/XMLSchema-versioning" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
 xsi:noNamespaceSchemaLocation="http://www.google.com/shopping/reviews/schema/product/2.3/product_reviews.xsd">
 <version>2.3</version>
 <aggregator><name>Reviews Co</name></aggregator>
 <publisher><name>Shop</name><favicon>https://shop.example/icon.png</favicon></publisher>
 <reviews>
  <review>
   <review_id>r1</review_id>
   <reviewer><name is_anonymous="true">Someone</name><reviewer_id>u1</reviewer_id></reviewer>
   <review_timestamp>2026-11-22T09:30:00Z</review_timestamp>
   <title>Fine</title>
   <content>Works.</content>
   <pros><pro>Light</pro><pro>Cheap</pro></pros>
   <cons><con>Loud</con></cons>
   <review_url type="singleton">https://shop.example/r/1</review_url>
   <reviewer_images><reviewer_image><url>https://shop.example/i.jpg</url></reviewer_image></reviewer_images>
   <ratings><overall min="1" max="5">4.5</overall></ratings>
   <products>
    <product>
     <product_ids>
      <gtins><gtin>4006381333931</gtin></gtins><mpns><mpn>M1</mpn></mpns><skus><sku>S1</sku></skus>
      <brands><brand>Acme</brand></brands><asins><asin>B000000000</asin></asins>
     </product_ids>
     <product_name>Thing</product_name>
     <product_url>https://shop.example/p/1</product_url>
    </product>
    <product><product_url>shop.example/p/2</product_url></product>
   </products>
   <is_spam>false</is_spam>
   <collection_method>post_fulfillment</collection_method>
   <transaction_id>t1</transaction_id>
  </review>
  <review>
   <reviewer><name>Other</name></reviewer>
   <review_timestamp>2026-11-22T09:30:00.123+01:00</review_timestamp>
   <content>Also.</content>
   <review_url type="group">http://shop.example/r</review_url>
   <ratings><overall min="0" max="10">7</overall></ratings>
   <products><product><product_url>https://shop.example/p/3</product_url></product></products>
  </review>
 </reviews>
 <deleted_reviews><review_id>r0</review_id></deleted_reviews>
</feed>`

func TestAFullFeedValidates(t *testing.T) {
	t.Parallel()
	require.NoError(t, feedschema.Validate(strings.NewReader(full)))
	minimal := `<feed><version>2.3</version><publisher><name>Shop</name></publisher></feed>`
	require.NoError(t, feedschema.Validate(strings.NewReader(minimal)))
}

// TestEachViolationIsFound: one change to the full feed at a time, each
// breaking one rule of the schema, and the error names it.
func TestEachViolationIsFound(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ old, new, want string }{
		"an empty gtins":         {"<gtins><gtin>4006381333931</gtin></gtins>", "<gtins></gtins>", "gtins[1]: lacks <gtin>"},
		"an empty mpns":          {"<mpns><mpn>M1</mpn></mpns>", "<mpns/>", "mpns[1]: lacks <mpn>"},
		"an empty brand":         {"<brand>Acme</brand>", "<brand> </brand>", "brand[1]: \" \" does not match the nonEmptyStringType"},
		"two product_ids":        {"<product_name>Thing", "<product_ids/><product_name>Thing", "product_ids[2]: occurs more than 1"},
		"a gtin of letters":      {"<gtin>4006381333931</gtin>", "<gtin>abc</gtin>", "gtin pattern"},
		"no content":             {"<content>Also.</content>", "", "lacks <content>"},
		"an empty content":       {"<content>Works.</content>", "<content>\n </content>", "does not match the nonEmptyStringType"},
		"no product_url":         {"<product_url>https://shop.example/p/3</product_url>", "", "lacks <product_url>"},
		"no products":            {"<products><product><product_url>https://shop.example/p/3</product_url></product></products>", "", "lacks <products>"},
		"no product":             {"<products><product><product_url>https://shop.example/p/3</product_url></product></products>", "<products></products>", "lacks <product>"},
		"a url without a dot":    {"https://shop.example/r/1", "http://localhost/r/1", "does not match the httpUrlType"},
		"is_spam after":          {"<is_spam>false</is_spam>\n   <collection_method>post_fulfillment</collection_method>", "<collection_method>post_fulfillment</collection_method><is_spam>false</is_spam>", "is_spam[1]: is not allowed here"},
		"an unknown element":     {"<title>Fine</title>", "<subtitle>Fine</subtitle>", "subtitle[1]: is not allowed here"},
		"another collection":     {">post_fulfillment<", ">after_delivery<", "is not one of"},
		"a bad review_url type":  {`type="singleton"`, `type="single"`, "attribute type"},
		"no review_url type":     {` type="group"`, "", "lacks the required attribute type"},
		"no max":                 {` max="10"`, "", "lacks the required attribute max"},
		"an unknown attribute":   {`<overall min="0"`, `<overall scale="x" min="0"`, "attribute scale"},
		"a rating of words":      {">4.5<", ">four<", "does not match the xs:decimal"},
		"a bad timestamp":        {"2026-11-22T09:30:00Z", "22.11.2026", "does not match the xs:dateTime"},
		"a bad boolean":          {"<is_spam>false</is_spam>", "<is_spam>no</is_spam>", "does not match the xs:boolean"},
		"another version":        {"<version>2.3</version>", "<version>2.2</version>", "fixed at"},
		"no publisher":           {"<publisher><name>Shop</name><favicon>https://shop.example/icon.png</favicon></publisher>", "", "lacks <publisher>"},
		"two publishers":         {"</publisher>", "</publisher><publisher><name>B</name></publisher>", "publisher[2]: occurs more than 1"},
		"a repeated review_id":   {"<reviewer><name>Other</name>", "<review_id>r1</review_id><reviewer><name>Other</name>", `review "r1" occurs twice`},
		"text among elements":    {"<ratings>", "<ratings>4", "holds text"},
		"an element in a string": {"<content>Works.</content>", "<content>Works <b>well</b></content>", "holds the element <b>"},
		"a namespaced element":   {"<title>Fine</title>", `<g:title xmlns:g="urn:x">Fine</g:title>`, "is in namespace"},
	} {
		doc := strings.Replace(full, c.old, c.new, 1)
		require.NotEqual(t, full, doc, name)
		err := feedschema.Validate(strings.NewReader(doc))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
	}
	for name, doc := range map[string]string{
		"an empty reviews element": `<feed><version>2.3</version><publisher><name>S</name></publisher><reviews></reviews></feed>`,
		"an empty deleted_reviews": `<feed><version>2.3</version><publisher><name>S</name></publisher><deleted_reviews/></feed>`,
		"not XML":                  `<feed><version>2.3</version>`,
		"another root":             `<rss/>`,
	} {
		assert.Error(t, feedschema.Validate(strings.NewReader(doc)), name)
	}
}
