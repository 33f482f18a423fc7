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

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store/reviewdb"
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
	// EventDate is the day of the transaction (YYYY-MM-DD, UTC), as the
	// review keeps it (null for a review whose event was gone before
	// reviews kept it).
	EventDate *string `json:"eventDate"`
	// InvitedAt is when the invite was sent; null when it was not (the
	// link works before).
	InvitedAt *Time `json:"invitedAt"`
	// ReviewedAt is when the customer wrote this version of the review.
	ReviewedAt Time `json:"reviewedAt"`
}

// ProductClaim is one product rating of the review, named by the
// product's gtin when it checks (review.PublicGTIN), else its sku
// (neither when the event gave neither), with its comment's hash.
type ProductClaim struct {
	GTIN   string `json:"gtin,omitempty"`
	SKU    string `json:"sku,omitempty"`
	Rating int    `json:"rating"`
	// CommentSha256 is the SHA-256 of the product's comment as published
	// (of "" when there is none). Proofs issued before product comments
	// were covered lack it (see CoversProductComments).
	CommentSha256 string `json:"commentSha256,omitempty"`
}

// sha256Hex is the lower-case hex SHA-256 of a text's UTF-8 bytes.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// ClaimsOf are the claims of a public review as it is now: every word the
// customer published (the review's comment and each product's) by its
// hash, and the ratings. The shop's reply is the shop's, and not covered.
func ClaimsOf(r reviewdb.PublicReview) Claims { return claimsOf(r, false) }

// legacyClaimsOf are the claims a proof of r stated before product
// comments were covered: products without their comment's hash, named by
// the gtin as the event gave it. Such proofs still verify and match.
func legacyClaimsOf(r reviewdb.PublicReview) Claims { return claimsOf(r, true) }

func claimsOf(r reviewdb.PublicReview, legacy bool) Claims {
	c := Claims{ReviewID: r.ID, AccountID: r.AccountID, CommentSha256: sha256Hex(r.Comment),
		Products: []ProductClaim{}, ReviewedAt: Time(r.UpdatedAt)}
	if r.Rating != 0 {
		c.Rating = &r.Rating
	}
	for _, p := range r.Products {
		pc := ProductClaim{Rating: p.Rating, GTIN: review.PublicGTIN(p.GTIN), CommentSha256: sha256Hex(p.Comment)}
		if legacy {
			pc.GTIN, pc.CommentSha256 = p.GTIN, ""
		}
		if pc.GTIN == "" {
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

// CoversProductComments reports whether the claims cover the products'
// comments: every product carries its comment's hash. A proof issued
// before they were covered has none; one of a review without products
// has nothing to cover.
func (c Claims) CoversProductComments() bool {
	for _, p := range c.Products {
		if p.CommentSha256 == "" {
			return false
		}
	}
	return true
}

// Sign is the proof of a public review: a compact JWS of its claims, signed
// with the account's current publication key.
func (k *Keys) Sign(ctx context.Context, r reviewdb.PublicReview) (string, error) {
	payload, err := json.Marshal(ClaimsOf(r))
	if err != nil {
		return "", fmt.Errorf("proof claims: %w", err)
	}
	return k.sign(ctx, r.AccountID, payload)
}

// sign signs a payload with the account's current publication key.
func (k *Keys) sign(ctx context.Context, accountID string, payload []byte) (string, error) {
	ring, err := k.ring(ctx, accountID)
	if err != nil {
		return "", err
	}
	key := proofKey(accountID+"/"+ring.kid, payload)
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
// now (ProofMatches; ProofMatchesOlder for one issued before product
// comments were covered, which covers the rest), a valid proof of r made
// before it changed (ProofOutdated), or anything else (ProofInvalid).
func (k *Keys) Check(ctx context.Context, r reviewdb.PublicReview, proof string) (ProofCheck, error) {
	c, _, err := k.Verify(ctx, r.AccountID, proof)
	switch {
	case errors.Is(err, ErrBadProof):
		return ProofInvalid, nil
	case err != nil:
		return ProofNone, err
	case c.ReviewID != r.ID:
		return ProofInvalid, nil
	}
	for _, m := range []struct {
		claims Claims
		check  ProofCheck
	}{{ClaimsOf(r), ProofMatches}, {legacyClaimsOf(r), ProofMatchesOlder}} {
		same, err := sameClaims(c, m.claims)
		if err != nil || same {
			return m.check, err
		}
	}
	return ProofOutdated, nil
}

// sameClaims reports whether a and b state the same, field by field.
func sameClaims(a, b Claims) (bool, error) {
	ja, err := json.Marshal(a)
	if err != nil {
		return false, err
	}
	jb, err := json.Marshal(b)
	return string(ja) == string(jb), err
}
