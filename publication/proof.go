package publication

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/touchpoint/touchpoint/store"
)

// Claims are what a proof states of a review: the payload of its JWS,
// documented in docs/api.md. Anyone can check it offline with any JOSE
// library and the account's JWKS.
type Claims struct {
	ReviewID  string `json:"reviewId"`
	AccountID string `json:"accountId"`
	// Rating is the shop rating; null when the customer rated products
	// only.
	Rating *int `json:"rating"`
	// CommentSha256 is the SHA-256 of the comment's UTF-8 bytes as
	// published, in lower-case hex (of "" when there is none).
	CommentSha256 string         `json:"commentSha256"`
	Products      []ProductClaim `json:"products"`
	// EventDate is the day of the transaction (YYYY-MM-DD, UTC); null
	// when the event is gone.
	EventDate *string `json:"eventDate"`
	// InvitedAt is when the invite was sent; null when it was not (the
	// link works before) or the event is gone.
	InvitedAt *Time `json:"invitedAt"`
	// ReviewedAt is when the customer wrote this version of the review.
	ReviewedAt Time `json:"reviewedAt"`
}

// ProductClaim is one product rating of the review, named by the
// product's gtin, else its sku (neither when the event gave neither).
type ProductClaim struct {
	GTIN   string `json:"gtin,omitempty"`
	SKU    string `json:"sku,omitempty"`
	Rating int    `json:"rating"`
}

// ClaimsOf are the claims of a public review as it is now.
func ClaimsOf(r store.PublicReview) Claims {
	sum := sha256.Sum256([]byte(r.Comment))
	c := Claims{ReviewID: r.ID, AccountID: r.AccountID, CommentSha256: hex.EncodeToString(sum[:]),
		Products: []ProductClaim{}, ReviewedAt: Time(r.UpdatedAt)}
	if r.Rating != 0 {
		c.Rating = &r.Rating
	}
	for _, p := range r.Products {
		pc := ProductClaim{Rating: p.Rating}
		if p.GTIN != "" {
			pc.GTIN = p.GTIN
		} else {
			pc.SKU = p.SKU
		}
		c.Products = append(c.Products, pc)
	}
	if r.TransactionDate != nil {
		d := r.TransactionDate.UTC().Format(time.DateOnly)
		c.EventDate = &d
	}
	if r.InvitedAt != nil {
		t := Time(*r.InvitedAt)
		c.InvitedAt = &t
	}
	return c
}

// Sign is the proof of a public review: a compact JWS of its claims, signed
// with the account's current publication key.
func (k *Keys) Sign(ctx context.Context, r store.PublicReview) (string, error) {
	ring, err := k.ring(ctx, r.AccountID)
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(ClaimsOf(r))
	if err != nil {
		return "", fmt.Errorf("proof claims: %w", err)
	}
	key := proofKey(r.AccountID+"/"+ring.kid, payload)
	if proof, ok := k.proofs.get(key); ok {
		return proof, nil
	}
	jws, err := ring.signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("sign proof: %w", err)
	}
	proof, err := jws.CompactSerialize()
	if err != nil {
		return "", err
	}
	k.proofs.put(key, proof)
	return proof, nil
}

// ErrBadProof: the text given is not a proof signed by a key of the
// account.
var ErrBadProof = errors.New("not a valid proof of this account")

// maxProof bounds a proof given to Verify: a review's claims with ten
// products are well under 2 KiB.
const maxProof = 8 << 10

// Verify checks a compact JWS against the account's published keys and
// returns its claims and the kid that signed it (ErrBadProof when it does
// not verify, is not EdDSA, or names another account).
func (k *Keys) Verify(ctx context.Context, accountID, proof string) (Claims, string, error) {
	if len(proof) > maxProof {
		return Claims{}, "", ErrBadProof
	}
	jwks, err := k.JWKS(ctx, accountID)
	if err != nil {
		return Claims{}, "", err
	}
	jws, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{Algorithm})
	if err != nil || len(jws.Signatures) != 1 {
		return Claims{}, "", ErrBadProof
	}
	kid := jws.Signatures[0].Header.KeyID
	keys := jwks.Key(kid)
	if len(keys) != 1 {
		return Claims{}, "", ErrBadProof
	}
	payload, err := jws.Verify(keys[0])
	if err != nil {
		return Claims{}, "", ErrBadProof
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil || c.AccountID != accountID {
		return Claims{}, "", ErrBadProof
	}
	return c, kid, nil
}

// Time is a timestamp as every public answer writes it: UTC with exactly
// three fractional digits (2026-11-22T06:00:00.000Z), like the API.
type Time time.Time

const timeLayout = "2006-01-02T15:04:05.000Z"

// MarshalJSON writes t in timeLayout.
func (t Time) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(timeLayout) + `"`), nil
}

// UnmarshalJSON reads an RFC 3339 timestamp.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	*t = Time(v)
	return err
}

// String is t in timeLayout.
func (t Time) String() string { return time.Time(t).UTC().Format(timeLayout) }

// Check says what a proof the reader brought is worth for the public
// review r: a valid proof of its account whose claims are r's as it is
// now (ProofMatches), a valid proof of r made before it changed
// (ProofOutdated), or anything else (ProofInvalid).
func (k *Keys) Check(ctx context.Context, r store.PublicReview, proof string) (ProofCheck, error) {
	c, _, err := k.Verify(ctx, r.AccountID, proof)
	switch {
	case errors.Is(err, ErrBadProof):
		return ProofInvalid, nil
	case err != nil:
		return ProofNone, err
	case c.ReviewID != r.ID:
		return ProofInvalid, nil
	}
	got, err := json.Marshal(c)
	if err != nil {
		return ProofNone, err
	}
	want, err := json.Marshal(ClaimsOf(r))
	if err != nil {
		return ProofNone, err
	}
	if string(got) == string(want) {
		return ProofMatches, nil
	}
	return ProofOutdated, nil
}
