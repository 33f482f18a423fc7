// Package auth verifies the API's bearer tokens: access tokens from the
// built-in issuer or from external OIDC providers, mapped to an account.
package auth

import (
	"context"
	"errors"
)

// Principal is who made an API request: the API client and the account
// and access group it maps to.
type Principal struct {
	AccountID   string
	ClientID    string // api_clients.id
	AccessGroup string // GroupFull, GroupEvents or GroupReadonly
	TokenID     string // jti
}

// Access groups of API clients: what the tokens of a client may do.
const (
	GroupFull     = "full"     // every endpoint
	GroupEvents   = "events"   // POST/GET events; read event types, channels, settings
	GroupReadonly = "readonly" // every GET
)

// ValidGroup reports whether g is a known access group.
func ValidGroup(g string) bool {
	return g == GroupFull || g == GroupEvents || g == GroupReadonly
}

var (
	// ErrInvalidToken: missing, malformed, forged, expired, idle, revoked,
	// or of the wrong type. Answered 401.
	ErrInvalidToken = errors.New("invalid token")
	// ErrUnavailable: the issuer's discovery or keys cannot be fetched yet,
	// or the database is down. Answered 503.
	ErrUnavailable = errors.New("token verification unavailable")
)

// Authenticator turns a raw bearer token into a Principal. Errors wrap
// ErrInvalidToken or ErrUnavailable.
type Authenticator interface {
	Authenticate(ctx context.Context, rawToken string) (Principal, error)
}
