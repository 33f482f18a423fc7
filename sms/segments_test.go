package sms_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/sms"
)

func TestSegments(t *testing.T) {
	t.Parallel()
	r := strings.Repeat
	tests := []struct {
		name     string
		text     string
		encoding string
		segments int
	}{
		{"empty", "", sms.EncodingGSM7, 0},
		{"one character", "a", sms.EncodingGSM7, 1},
		{"160 septets", r("a", 160), sms.EncodingGSM7, 1},
		{"161 septets", r("a", 161), sms.EncodingGSM7, 2},
		{"306 septets", r("a", 306), sms.EncodingGSM7, 2},
		{"307 septets", r("a", 307), sms.EncodingGSM7, 3},
		{"459 septets", r("a", 459), sms.EncodingGSM7, 3},
		{"460 septets", r("a", 460), sms.EncodingGSM7, 4},
		{"the whole basic set", "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./09:;<=>?¡AZÄÖÑÜ§¿azäöñüà", sms.EncodingGSM7, 1},
		{"German, Danish, Spanish letters", "Grüße, Straße, Ærø, año, ¿qué?", sms.EncodingGSM7, 1},
		{"extension characters count twice", r("€", 80), sms.EncodingGSM7, 1},
		{"one more escape is 162 septets", r("€", 80) + "a", sms.EncodingGSM7, 2},
		{"159 + an escape", r("a", 159) + "^", sms.EncodingGSM7, 2},
		{"158 + an escape", r("a", 158) + "^", sms.EncodingGSM7, 1},
		{"all of the extension", "^{}\\[~]|€\f", sms.EncodingGSM7, 1},
		// 152 septets and then an escape pair: it does not fit in the
		// 153 of the first part, so it starts the second.
		{"an escape not split", r("a", 152) + "{" + r("a", 152), sms.EncodingGSM7, 3},
		{"an escape at the end of a part", r("a", 151) + "{" + r("a", 153), sms.EncodingGSM7, 2},
		{"ç is not GSM", "ça va", sms.EncodingUCS2, 1},
		{"a typographic apostrophe is not GSM", "it’s", sms.EncodingUCS2, 1},
		{"70 units", r("á", 70), sms.EncodingUCS2, 1},
		{"71 units", r("á", 71), sms.EncodingUCS2, 2},
		{"134 units", r("á", 134), sms.EncodingUCS2, 2},
		{"135 units", r("á", 135), sms.EncodingUCS2, 3},
		{"one non-GSM character turns all", r("a", 69) + "ó", sms.EncodingUCS2, 1},
		{"one non-GSM character turns all, 71", r("a", 70) + "ó", sms.EncodingUCS2, 2},
		{"emoji take two units", r("😀", 35), sms.EncodingUCS2, 1},
		{"36 emoji", r("😀", 36), sms.EncodingUCS2, 2},
		// 66 units and then a pair: the pair starts the second part.
		{"a surrogate pair not split", r("á", 66) + "😀" + r("á", 66), sms.EncodingUCS2, 3},
		{"a surrogate pair at the end of a part", r("á", 65) + "😀" + r("á", 67), sms.EncodingUCS2, 2},
	}
	for _, tt := range tests {
		enc, n := sms.Segments(tt.text)
		assert.Equal(t, tt.encoding, enc, tt.name)
		assert.Equal(t, tt.segments, n, tt.name)
	}
}
