package apiserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
)

// FuzzDecodeEvent feeds arbitrary bytes to the strict decoder and the
// event validation: they must never panic, must answer 400 for what they
// refuse, and what they accept must survive the trip through the stored
// payload unchanged.
func FuzzDecodeEvent(f *testing.F) {
	for _, seed := range []string{
		`{"customer":{"email":"ann@example.com"},"type":"checkout","channel":{"id":"chl-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b"},"transaction":{"reference":"o-1","date":"2026-11-22T06:00:00.000Z"},"system":"shop","systemVersion":"1"}`,
		`{"customer":{"email":"a@b.c","firstName":"Å"},"type":"t","channel":{"id":"chl-0b5e8f3c-8a3e-4f3e-9a57-1c2d3e4f5a6b","type":"shopify"},"transaction":{"reference":"r","date":"2026-01-01T00:00:00+14:00"},"system":"s","systemVersion":"v","defaultLocale":"de_AT","estimatedDeliveryDate":"2026-02-28","products":[{"name":"n","url":"https://x.example/p","parentProduct":{"sku":"p"},"categories":["a"]}],"metadata":{"k":"v"}}`,
		`{"system_version":"1"}`,
		`{"customer":null}`,
		`{"products":[null,{},[]]}`,
		`{"metadata":{"a":"b","a":"c"}}`,
		`{"transaction":{"date":"not a date"}}`,
		`[]`, `"x"`, `{`, `{"a":1}}`, "\xff", `{"type":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in eventIn
		if err := decodeStrict(data, &in); err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.status != http.StatusBadRequest {
				t.Fatalf("decode error is not a 400: %v", err)
			}
			return
		}
		if len(in.validate()) > 0 {
			return
		}
		stored, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("marshal a valid event: %v", err)
		}
		var again eventIn
		if err := decodeStrict(stored, &again); err != nil {
			t.Fatalf("the stored payload does not decode: %v\n%s", err, stored)
		}
		if errs := again.validate(); len(errs) > 0 {
			t.Fatalf("the stored payload does not validate: %v\n%s", errs, stored)
		}
		restored, _ := json.Marshal(again)
		if string(restored) != string(stored) {
			t.Fatalf("payload changed on a round trip:\n%s\n%s", stored, restored)
		}
	})
}
