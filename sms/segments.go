package sms

import "strings"

// Encodings a text is sent in.
const (
	EncodingGSM7 = "GSM-7" // 7-bit GSM 03.38: 160 characters, 153 per part
	EncodingUCS2 = "UCS-2" // 16-bit: 70 characters, 67 per part
)

// gsmBasic is the GSM 03.38 basic character set (one septet each) and
// gsmExtension the characters reached through its escape (two septets).
const (
	gsmBasic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
		"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
	gsmExtension = "\f^{}\\[~]|€"
)

// Segments tells how a text is sent and how many messages (segments) it
// costs. A text of GSM-7 characters only goes as GSM-7: up to 160 septets
// in one message, else 153 per segment (the rest carries the header that
// joins them); ^{}\[~]|€ take two septets each and are never split across
// segments. Any other character makes the whole text UCS-2: up to 70
// UTF-16 units in one message, else 67 per segment, a character outside
// the Basic Multilingual Plane (most emoji) taking two units that are
// never split. The empty text is 0 segments.
func Segments(text string) (encoding string, segments int) {
	if text == "" {
		return EncodingGSM7, 0
	}
	sizes := make([]int, 0, len(text))
	gsm := true
	for _, r := range text {
		switch {
		case strings.ContainsRune(gsmBasic, r):
			sizes = append(sizes, 1)
		case strings.ContainsRune(gsmExtension, r):
			sizes = append(sizes, 2)
		default:
			gsm = false
		}
		if !gsm {
			break
		}
	}
	single, multi := 160, 153
	encoding = EncodingGSM7
	if !gsm {
		single, multi = 70, 67
		encoding = EncodingUCS2
		sizes = sizes[:0]
		for _, r := range text {
			if r > 0xFFFF {
				sizes = append(sizes, 2) // a surrogate pair
			} else {
				sizes = append(sizes, 1)
			}
		}
	}
	return encoding, pack(sizes, single, multi)
}

// pack counts the segments units of the given sizes fill: one if they
// all fit in single, else as many multi-sized ones as needed when no unit
// is split between two.
func pack(sizes []int, single, multi int) int {
	total := 0
	for _, s := range sizes {
		total += s
	}
	if total <= single {
		return 1
	}
	segments, used := 1, 0
	for _, s := range sizes {
		if used+s > multi {
			segments++
			used = 0
		}
		used += s
	}
	return segments
}
