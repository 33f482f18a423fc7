// Package sealedjwk makes and opens the signing keys Touchpoint keeps in
// PostgreSQL — the issuer's token keys and the accounts' publication
// keys: a new key's public half as a JWK named by its RFC 7638
// thumbprint, its private half as PKCS #8 sealed in a secretkey.Box.
package sealedjwk

import (
	"crypto"
	_ "crypto/sha256" // crypto.SHA256, for thumbprints
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/go-jose/go-jose/v4"

	"github.com/touchpoint/touchpoint/internal/secretkey"
)

// Key is a new key as it is stored.
type Key struct {
	KID       string // the public key's RFC 7638 thumbprint, base64url
	PublicJWK string // the public key as a JWK (JSON)
	Sealed    []byte // the private key, PKCS #8, sealed for label(KID)
}

// Make seals priv, whose algorithm is alg, under box; label names the
// row the sealed key belongs to, by the key's id.
func Make(box *secretkey.Box, priv crypto.Signer, alg string, label func(kid string) []byte) (Key, error) {
	pub := jose.JSONWebKey{Key: priv.Public(), Algorithm: alg, Use: "sig"}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return Key{}, fmt.Errorf("thumbprint: %w", err)
	}
	pub.KeyID = base64.RawURLEncoding.EncodeToString(tp)
	jwk, err := json.Marshal(pub)
	if err != nil {
		return Key{}, fmt.Errorf("marshal jwk: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return Key{}, fmt.Errorf("marshal key: %w", err)
	}
	sealed, err := box.Seal(der, label(pub.KeyID))
	if err != nil {
		return Key{}, err
	}
	return Key{KID: pub.KeyID, PublicJWK: string(jwk), Sealed: sealed}, nil
}

// Signer opens a key that Make sealed for label and returns a signer
// that names it by kid.
func Signer(box *secretkey.Box, sealed, label []byte, alg, kid string, opts *jose.SignerOptions) (jose.Signer, error) {
	der, err := box.Open(sealed, label)
	if err != nil {
		return nil, err
	}
	priv, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parse key: %w", err)
	}
	return jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: jose.JSONWebKey{Key: priv, KeyID: kid}}, opts)
}
