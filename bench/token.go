package bench

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// tokenSource hands out the run's access token and gets a new one before
// it lapses. The issuer's tokens live expires_in (300 s) from their last
// use, and one hour at most (their exp); a run has long stretches without
// a call to the API — the baselines, the drain of a backfill, a loaded
// machine — so one token got at the start may be dead by the time the run
// reads its events back.
type tokenSource struct {
	t    Target
	http *http.Client
	now  func() time.Time

	mu      sync.Mutex
	token   string
	idle    time.Duration // expires_in: the sliding lifetime
	exp     time.Time     // the token's exp claim; zero when unknown
	lastUse time.Time
}

// get returns a token good for a request sent now: the current one, or a
// new one when the current one has been idle for half its lifetime or
// ends within half of it.
func (s *tokenSource) get(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.token == "" || now.Sub(s.lastUse) > s.idle/2 || (!s.exp.IsZero() && s.exp.Sub(now) < s.idle/2) {
		if err := s.fetchLocked(ctx); err != nil {
			return "", err
		}
	}
	s.lastUse = now
	return s.token, nil
}

// rejected tells the source that the API answered 401 to tok: unless
// another request got a new token already, the next get fetches one.
func (s *tokenSource) rejected(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == tok {
		s.token = ""
	}
}

// fetchLocked gets a new token by client credentials.
func (s *tokenSource) fetchLocked(ctx context.Context) error {
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {s.t.ClientID},
		"client_secret": {s.t.ClientSecret}, "audience": {s.t.BaseURL}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.t.AuthURL+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := roundTrip(s.http, req, http.StatusOK, &tok); err != nil {
		return fmt.Errorf("token: %w", err)
	}
	if tok.AccessToken == "" || tok.ExpiresIn <= 0 {
		return fmt.Errorf("token: no access_token and expires_in in the issuer's answer")
	}
	s.token, s.idle, s.exp = tok.AccessToken, time.Duration(tok.ExpiresIn)*time.Second, expiry(tok.AccessToken)
	return nil
}

// expiry reads the exp claim of a JWT without verifying it (the API does
// that); zero when the token is not a JWT with one.
func expiry(token string) time.Time {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil || claims.Exp == 0 {
		return time.Time{}
	}
	return time.Unix(claims.Exp, 0)
}
