package sms_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/sms"
)

func TestMaskNumber(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"+4915112345678":   "***5678",
		"+49 151 1234 567": "***4567",
		"12345":            "***2345",
		"1234":             "***",
		"":                 "***",
	} {
		assert.Equal(t, want, sms.MaskNumber(in), in)
	}
}
