package authserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/touchpoint/touchpoint/internal/opaque"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/store/pg"
)

// codeResponse answers the authorization code grant. The access token is
// opaque and accepted nowhere: the relying party signs the person in with
// the ID token and keeps its own session.
type codeResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
	IDToken     string `json:"id_token"`
	Scope       string `json:"scope"`
}

// idClaims are the claims of an ID token (OpenID Connect Core §2): the
// person by their id, for the relying party that asked, with the nonce
// it sent.
type idClaims struct {
	Issuer        string `json:"iss"`
	Subject       string `json:"sub"`
	Audience      string `json:"aud"`
	AZP           string `json:"azp"`
	IssuedAt      int64  `json:"iat"`
	Expiry        int64  `json:"exp"`
	AuthTime      int64  `json:"auth_time"`
	Nonce         string `json:"nonce"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
}

// invalidGrant is the answer to a code that does not trade, whatever
// the reason: unknown, used, expired, another client's, another redirect
// URI's, or a verifier that does not match its challenge.
func invalidGrant(description string) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: "invalid_grant", description: description}
}

// codeGrant is grant_type=authorization_code (RFC 6749 §4.1.3) for a
// public relying party: client_id, the code, the redirect_uri it was sent
// to, and the PKCE code_verifier (RFC 7636) whose S256 challenge the
// authorization request carried. A code trades once: a second try, even
// a correct one, finds it spent.
func (s *Server) codeGrant(r *http.Request, form url.Values) (*codeResponse, error) {
	if s.people == nil {
		return nil, s.unsupportedGrant()
	}
	id := form.Get("client_id")
	if u, p, ok := r.BasicAuth(); ok {
		if p != "" || (id != "" && id != u) {
			return nil, &oauthError{status: http.StatusUnauthorized, code: "invalid_client", basic: true,
				description: "a public client authenticates with its code_verifier, not a secret"}
		}
		id = u
	}
	rp, ok := s.people.parties[id]
	switch {
	case !ok:
		return nil, &oauthError{status: http.StatusUnauthorized, code: "invalid_client", description: "unknown client"}
	case form.Get("client_secret") != "":
		return nil, &oauthError{status: http.StatusUnauthorized, code: "invalid_client",
			description: "a public client authenticates with its code_verifier, not a secret"}
	case form.Get("code") == "" || form.Get("redirect_uri") == "" || form.Get("code_verifier") == "":
		return nil, badRequest("code, redirect_uri and code_verifier are required")
	}
	verifier := form.Get("code_verifier")
	if len(verifier) < 43 || len(verifier) > 128 || !unreserved(verifier) {
		return nil, badRequest("code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~")
	}
	if !opaque.WellFormed(form.Get("code")) {
		return nil, invalidGrant("the code is not valid")
	}
	c, p, err := s.people.store.UseAuthCode(r.Context(), opaque.Hash(form.Get("code")))
	switch {
	case errors.Is(err, pg.ErrNotFound), errors.Is(err, persondb.ErrDisabled):
		return nil, invalidGrant("the code is not valid: unknown, used, expired, or its person is disabled")
	case err != nil:
		return nil, fmt.Errorf("use authorization code: %w", err)
	case c.ClientID != rp.ClientID || c.RedirectURI != form.Get("redirect_uri"):
		return nil, invalidGrant("the code was issued to another client or redirect_uri")
	case !pkceMatches(verifier, c.CodeChallenge):
		return nil, invalidGrant("code_verifier does not match the code_challenge")
	}
	now := s.opts.Now()
	idToken, err := s.sign(idClaims{Issuer: s.opts.Issuer, Subject: p.ID, Audience: rp.ClientID, AZP: rp.ClientID,
		IssuedAt: now.Unix(), Expiry: now.Add(IDTokenLifetime).Unix(), AuthTime: c.AuthTime.Unix(), Nonce: c.Nonce,
		Email: p.Email, EmailVerified: true}, now)
	if err != nil {
		return nil, err
	}
	return &codeResponse{AccessToken: opaque.New(), TokenType: "Bearer", ExpiresIn: int(IDTokenLifetime / time.Second),
		IDToken: idToken, Scope: "openid email"}, nil
}

// unsupportedGrant names the grants this issuer offers.
func (s *Server) unsupportedGrant() *oauthError {
	d := "only client_credentials is supported"
	if s.people != nil {
		d = "only client_credentials and authorization_code are supported"
	}
	return &oauthError{status: http.StatusBadRequest, code: "unsupported_grant_type", description: d}
}

// pkceMatches reports whether verifier's S256 challenge is challenge.
func pkceMatches(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// unreserved: only the characters RFC 7636 allows in a code_verifier.
func unreserved(s string) bool {
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// sign signs claims as a compact JWS with the key current at now.
func (s *Server) sign(claims any, now time.Time) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("marshal claims: %w", err)
	}
	key := s.keys.snapshot().current(now)
	if key == nil {
		return "", errors.New("no signing key loaded")
	}
	jws, err := key.signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("serialize token: %w", err)
	}
	return tok, nil
}
