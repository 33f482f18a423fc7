package publication_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/eventfixture"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/internal/testdb"
	"github.com/touchpoint/touchpoint/publication"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/storeset"
)

const testSecret = "publication-test-secret-key-0123456789abcdef"

func newKeys(t *testing.T, st *store.Store, secret string) *publication.Keys {
	t.Helper()
	k, err := publication.NewKeys(st.Reviews, secretkey.Derive(secret, secretkey.PublicationKey), nil)
	require.NoError(t, err)
	return k
}

// proofSetup is a fresh database with an account and its publication
// keys.
func proofSetup(t *testing.T) (*sqlx.DB, *store.Store, *eventfixture.Account, *publication.Keys) {
	t.Helper()
	db := testdb.New(t)
	st := storeset.New(db, "P7D")
	return db, st, eventfixture.NewAccount(t, db, eventfixture.Setting{}), newKeys(t, st, testSecret)
}

// reviewedFixture stores an event (transaction on 2026-11-20, invite sent
// on 2026-11-21) of acc and its review; it returns the public review.
func reviewedFixture(t *testing.T, st *store.Store, acc *eventfixture.Account, in reviewdb.ReviewInput) reviewdb.PublicReview {
	t.Helper()
	in.EventID = acc.Event(t, eventfixture.Event{FirstName: "Greta", LastName: "Zimmermann", Mobile: "+4915112345678",
		CustomerReference: "CUST-77", Status: "sent", SentAt: time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC),
		TransactionDate: time.Date(2026, 11, 20, 23, 30, 0, 0, time.UTC),
		Products:        []eventfixture.Product{{Name: "Rain jacket", SKU: "JKT-1", GTIN: "4006381333931"}, {Name: "Boots", SKU: "BOOT-2"}}})
	if in.Locale == "" {
		in.Locale = "en"
	}
	r, _, err := st.Reviews.SaveReview(context.Background(), in)
	require.NoError(t, err)
	pub, err := st.Reviews.PublicReviewByID(context.Background(), r.ID)
	require.NoError(t, err)
	return pub
}

// TestProofVerifiesWithAnotherJOSELibrary: a proof is checked with
// lestrrat-go/jwx, which shares no code with go-jose, the library that
// signs; the keys come from the JWKS as published, and the claims are
// exactly the documented ones.
func TestProofVerifiesWithAnotherJOSELibrary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, st, acc, keys := proofSetup(t)
	r := reviewedFixture(t, st, acc, reviewdb.ReviewInput{Rating: 4, Comment: "Dry & warm </script>", Products: []reviewdb.ProductRating{
		{Index: 0, Rating: 5, Comment: "Fits well & keeps dry"}, {Index: 1, Rating: 3}}})

	proof, err := keys.Sign(ctx, r)
	require.NoError(t, err)
	again, err := keys.Sign(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, proof, again, "EdDSA is deterministic: the same review gives the same proof")
	assert.Len(t, strings.Split(proof, "."), 3, "compact serialisation")

	set := jwksOf(t, keys, acc.AccountID)
	payload, err := jws.Verify([]byte(proof), jws.WithKeySet(set, jws.WithRequireKid(true)))
	require.NoError(t, err, "jwx verifies the proof with the published key set")
	msg, err := jws.Parse([]byte(proof))
	require.NoError(t, err)
	alg, ok := msg.Signatures()[0].ProtectedHeaders().Algorithm()
	require.True(t, ok)
	assert.Equal(t, jwa.EdDSA(), alg)

	var claims map[string]any
	require.NoError(t, json.Unmarshal(payload, &claims))
	assert.Equal(t, map[string]any{
		"reviewId": r.ID, "accountId": acc.AccountID, "rating": 4.0, "commentSha256": sha256Hex("Dry & warm </script>"),
		"products": []any{map[string]any{"gtin": "4006381333931", "rating": 5.0, "commentSha256": sha256Hex("Fits well & keeps dry")},
			map[string]any{"sku": "BOOT-2", "rating": 3.0, "commentSha256": sha256Hex("")}},
		"eventDate":  "2026-11-20",
		"invitedAt":  "2026-11-21T08:00:00.000Z",
		"reviewedAt": r.UpdatedAt.UTC().Format("2006-01-02T15:04:05.000Z"),
	}, claims)
	for _, banned := range []string{"Zimmermann", "Greta", "jane.doe", "+4915112345678", "CUST-77"} {
		assert.NotContains(t, string(payload), banned)
	}

	// A changed byte of the payload or signature fails in both libraries.
	parts := strings.Split(proof, ".")
	for i := 1; i < 3; i++ {
		bad := append([]string{}, parts...)
		b := []byte(bad[i])
		b[5] ^= 1
		bad[i] = string(b)
		tampered := strings.Join(bad, ".")
		_, err := jws.Verify([]byte(tampered), jws.WithKeySet(set))
		assert.Error(t, err, "jwx refuses a tampered part %d", i)
		_, _, err = keys.Verify(ctx, acc.AccountID, tampered)
		assert.ErrorIs(t, err, publication.ErrBadProof)
	}
	check, err := keys.Check(ctx, r, proof)
	require.NoError(t, err)
	assert.Equal(t, publication.ProofMatches, check)

	// Product ratings only: rating null.
	onlyProducts := reviewedFixture(t, st, acc, reviewdb.ReviewInput{Products: []reviewdb.ProductRating{{Index: 1, Rating: 2}}})
	proof, err = keys.Sign(ctx, onlyProducts)
	require.NoError(t, err)
	payload, err = jws.Verify([]byte(proof), jws.WithKeySet(set))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(payload, &claims))
	assert.Nil(t, claims["rating"])
	assert.Equal(t, []any{map[string]any{"sku": "BOOT-2", "rating": 2.0, "commentSha256": sha256Hex("")}}, claims["products"])
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestProofsCoverProductComments: a proof covers each product's comment
// by its hash, so a product comment changed after signing no longer
// matches; a proof issued before product comments were covered — made
// here the old way, its payload written by hand as it was documented —
// still verifies with both libraries and still matches the review, and
// says that it does not cover them.
func TestProofsCoverProductComments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, st, acc, keys := proofSetup(t)
	in := reviewdb.ReviewInput{EventID: acc.Event(t, eventfixture.Event{Status: "sent", SentAt: time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC),
		TransactionDate: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC), Products: []eventfixture.Product{
			{Name: "Rain jacket", SKU: "JKT-1", GTIN: "4006381333931"}, {Name: "Mug", SKU: "MUG-1", GTIN: "4006381333932"}}}),
		Locale: "en", Rating: 4, Comment: "Good shop", Products: []reviewdb.ProductRating{
			{Index: 0, Rating: 5, Comment: "Keeps me dry"}, {Index: 1, Rating: 2, Comment: "Chipped"}}}
	_, _, err := st.Reviews.SaveReview(ctx, in)
	require.NoError(t, err)
	rs, _, err := st.Reviews.PublicReviews(ctx, acc.AccountID, reviewdb.PublicReviewFilter{}, store.Page{Limit: 1})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	r := rs[0]

	proof, err := keys.Sign(ctx, r)
	require.NoError(t, err)
	c, _, err := keys.Verify(ctx, acc.AccountID, proof)
	require.NoError(t, err)
	assert.True(t, c.CoversProductComments())
	require.Len(t, c.Products, 2)
	assert.Equal(t, publication.ProductClaim{GTIN: "4006381333931", Rating: 5, CommentSha256: sha256Hex("Keeps me dry")}, c.Products[0])
	assert.Equal(t, publication.ProductClaim{SKU: "MUG-1", Rating: 2, CommentSha256: sha256Hex("Chipped")}, c.Products[1],
		"named by its sku: its GTIN fails the check digit, and a proof names what the public outputs name")

	// The old way: no comment hashes, the GTIN as the event gave it.
	rating := 4
	old, err := json.Marshal(map[string]any{"reviewId": r.ID, "accountId": acc.AccountID, "rating": rating,
		"commentSha256": sha256Hex("Good shop"),
		"products":      []any{map[string]any{"gtin": "4006381333931", "rating": 5}, map[string]any{"gtin": "4006381333932", "rating": 2}},
		"eventDate":     "2026-11-20", "invitedAt": "2026-11-21T08:00:00.000Z",
		"reviewedAt": r.UpdatedAt.UTC().Format("2006-01-02T15:04:05.000Z")})
	require.NoError(t, err)
	older, err := keys.SignPayload(ctx, acc.AccountID, old)
	require.NoError(t, err)
	_, err = jws.Verify([]byte(older), jws.WithKeySet(jwksOf(t, keys, acc.AccountID)))
	require.NoError(t, err, "jwx verifies an older proof")
	oc, _, err := keys.Verify(ctx, acc.AccountID, older)
	require.NoError(t, err)
	assert.False(t, oc.CoversProductComments())
	for proof, want := range map[string]publication.ProofCheck{proof: publication.ProofMatches, older: publication.ProofMatchesOlder} {
		got, err := keys.Check(ctx, r, proof)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	// An older proof whose rating is not the review's does not match.
	wrong := strings.Replace(string(old), `"rating":5`, `"rating":4`, 1)
	require.NotEqual(t, string(old), wrong)
	forged, err := keys.SignPayload(ctx, acc.AccountID, []byte(wrong))
	require.NoError(t, err)
	got, err := keys.Check(ctx, r, forged)
	require.NoError(t, err)
	assert.Equal(t, publication.ProofOutdated, got)

	// A product comment changes: the proof made before no longer matches.
	in.Products[1].Comment = "Chipped, but the shop replaced it"
	_, _, err = st.Reviews.SaveReview(ctx, in)
	require.NoError(t, err)
	now, err := st.Reviews.PublicReviewByID(ctx, r.ID)
	require.NoError(t, err)
	got, err = keys.Check(ctx, now, proof)
	require.NoError(t, err)
	assert.Equal(t, publication.ProofOutdated, got)
	// Even were the review's time of writing the same, the claims differ.
	now.UpdatedAt = r.UpdatedAt
	assert.NotEqual(t, publication.ClaimsOf(r), publication.ClaimsOf(now))
}

func jwksOf(t *testing.T, keys *publication.Keys, accountID string) jwk.Set {
	t.Helper()
	set, err := keys.JWKS(context.Background(), accountID)
	require.NoError(t, err)
	raw, err := json.Marshal(set)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), `"d"`, "no private part is published")
	parsed, err := jwk.Parse(raw)
	require.NoError(t, err)
	return parsed
}

// TestKeyRotation: a rotated key signs from then on, the old one stays
// published, and a proof made before the rotation still verifies, as a
// proof the reader brought that no longer matches a changed review is
// told apart from an invalid one.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, st, acc, keys := proofSetup(t)
	r := reviewedFixture(t, st, acc, reviewdb.ReviewInput{Rating: 5, Comment: "great"})

	before, err := keys.Sign(ctx, r)
	require.NoError(t, err)
	_, firstKID, err := keys.Verify(ctx, acc.AccountID, before)
	require.NoError(t, err)
	newKID, err := keys.Rotate(ctx, acc.AccountID)
	require.NoError(t, err)
	require.NotEqual(t, firstKID, newKID)

	after, err := keys.Sign(ctx, r)
	require.NoError(t, err)
	_, kid, err := keys.Verify(ctx, acc.AccountID, after)
	require.NoError(t, err)
	assert.Equal(t, newKID, kid, "the new key signs")
	again, err := keys.Sign(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, after, again, "a remembered proof")
	fresh, err := newKeys(t, st, testSecret).Sign(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, after, fresh, "is the one signing afresh gives (Ed25519 is deterministic)")

	// Another replica (its own cache) publishes both keys, newest first.
	other := newKeys(t, st, testSecret)
	set, err := other.JWKS(ctx, acc.AccountID)
	require.NoError(t, err)
	require.Len(t, set.Keys, 2)
	assert.Equal(t, newKID, set.Keys[0].KeyID)
	assert.Equal(t, firstKID, set.Keys[1].KeyID)
	parsed := jwksOf(t, other, acc.AccountID)
	_, err = jws.Verify([]byte(before), jws.WithKeySet(parsed))
	assert.NoError(t, err, "a proof made before the rotation still verifies")

	// The customer changes the review: the old proof is outdated.
	changed, _, err := st.Reviews.SaveReview(ctx, reviewdb.ReviewInput{EventID: r.EventID, Rating: 2, Comment: "changed my mind", Locale: "en"})
	require.NoError(t, err)
	now, err := st.Reviews.PublicReviewByID(ctx, changed.ID)
	require.NoError(t, err)
	check, err := other.Check(ctx, now, after)
	require.NoError(t, err)
	assert.Equal(t, publication.ProofOutdated, check)
	check, err = other.Check(ctx, now, "not.a.proof")
	require.NoError(t, err)
	assert.Equal(t, publication.ProofInvalid, check)

	// A proof of another account does not pass for this one's.
	acc2 := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	r2 := reviewedFixture(t, st, acc2, reviewdb.ReviewInput{Rating: 1})
	foreign, err := keys.Sign(ctx, r2)
	require.NoError(t, err)
	_, _, err = keys.Verify(ctx, acc.AccountID, foreign)
	assert.ErrorIs(t, err, publication.ErrBadProof)
}

// TestKeysAreSealed: the stored private key is sealed; under another
// TOUCHPOINT_SECRET_KEY it cannot be used, so a new key is made and signs
// while the old one stays published.
func TestKeysAreSealed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	st := storeset.New(db, "P7D")
	acc := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	r := reviewedFixture(t, st, acc, reviewdb.ReviewInput{Rating: 3})
	_, err := newKeys(t, st, testSecret).Sign(ctx, r)
	require.NoError(t, err)

	stored, err := st.Reviews.PublicationKeys(ctx, acc.AccountID)
	require.NoError(t, err)
	require.Len(t, stored, 1)
	assert.Equal(t, "EdDSA", stored[0].Algorithm)
	var pub map[string]any
	require.NoError(t, json.Unmarshal([]byte(stored[0].PublicJWK), &pub))
	assert.NotContains(t, pub, "d", "the public JWK holds no private part")

	changed := newKeys(t, st, "another-secret-key-0123456789abcdef-xyz")
	proof, err := changed.Sign(ctx, r)
	require.NoError(t, err)
	_, kid, err := changed.Verify(ctx, acc.AccountID, proof)
	require.NoError(t, err)
	assert.NotEqual(t, stored[0].KID, kid)
	set, err := changed.JWKS(ctx, acc.AccountID)
	require.NoError(t, err)
	assert.Len(t, set.Keys, 2, "the key it cannot unseal stays published")

	// Concurrent first uses of a new account agree on one key.
	acc3 := eventfixture.NewAccount(t, db, eventfixture.Setting{})
	done := make(chan string, 4)
	for range 4 {
		go func() {
			s, err := newKeys(t, st, testSecret).JWKS(ctx, acc3.AccountID)
			if err != nil || len(s.Keys) != 1 {
				done <- ""
				return
			}
			done <- s.Keys[0].KeyID
		}()
	}
	first := <-done
	for range 3 {
		assert.Equal(t, first, <-done)
	}
	assert.NotEmpty(t, first)

	_, err = newKeys(t, st, testSecret).JWKS(ctx, store.NewID("acc"))
	assert.ErrorIs(t, err, store.ErrNotFound, "no key for an account that does not exist")
}
