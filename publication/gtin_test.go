package publication

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

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
	} {
		assert.Equal(t, want, validGTIN(s), s)
	}
}
