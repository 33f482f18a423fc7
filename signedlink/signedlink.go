// Package signedlink makes and checks the signed links in invites: the
// customer's way to the feedback page and to the unsubscribe page of one
// event. A link carries the event ID and an HMAC-SHA256 of it under the
// link's own purpose, so IDs cannot be guessed, swapped or reused. A link
// may also carry a value its page needs that is kept nowhere else, sealed
// for its ID.
package signedlink

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"

	"github.com/touchpoint/touchpoint/internal/secretkey"
)

// Purpose is the name to derive the signing key under:
// secretkey.Derive(master, feedback.Purpose).
const Purpose = "feedback-link"

// Query parameters of a link.
const (
	ParamEvent     = "event"
	ParamSignature = "sig"
	// ParamSealed carries a sealed value (SealedURL).
	ParamSealed = "to"
)

// sealPurpose derives the sealing key from the link's signing key.
const sealPurpose = "signedlink/sealed-value"

// MinKeyLen is the shortest key New accepts.
const MinKeyLen = 16

// Links makes signed feedback links under one base URL
// (TOUCHPOINT_FEEDBACK_URL).
type Links struct {
	base *url.URL
	key  []byte
	box  *secretkey.Box // seals the values links carry
}

// New checks the base URL and keeps a copy of the key.
func New(baseURL string, key []byte) (*Links, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("feedback URL %q must be an absolute http(s) URL", baseURL)
	}
	if len(key) < MinKeyLen {
		return nil, errors.New("feedback link key is too short")
	}
	box, err := secretkey.NewBox(secretkey.Derive(string(key), sealPurpose))
	if err != nil {
		return nil, err
	}
	return &Links{base: u, key: append([]byte(nil), key...), box: box}, nil
}

// Path is the path of the base URL, where the page that checks the links
// is served ("/" when the base URL has none).
func (l *Links) Path() string {
	if l.base.Path == "" {
		return "/"
	}
	return l.base.Path
}

// URL returns the event's feedback link: the base URL with the event ID
// and its signature added to any query it already has.
func (l *Links) URL(eventID string) string {
	u := *l.base
	q := u.Query()
	q.Set(ParamEvent, eventID)
	q.Set(ParamSignature, Sign(l.key, eventID))
	u.RawQuery = q.Encode()
	return u.String()
}

// SealedURL is URL(id) carrying value sealed for id (AES-256-GCM under a
// key derived from the link's): a value the page needs that is kept
// nowhere else, such as the address a template test went to, which is
// forgotten once the test is sent. Only the key's holder reads it, and it
// opens with no other ID.
func (l *Links) SealedURL(id, value string) (string, error) {
	sealed, err := l.box.Seal([]byte(value), []byte(id))
	if err != nil {
		return "", err
	}
	u, err := url.Parse(l.URL(id))
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set(ParamSealed, base64.RawURLEncoding.EncodeToString(sealed))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Unseal returns the value a link's query carries sealed for id (the ID
// Verify returned); false when it carries none or it does not open.
func (l *Links) Unseal(query url.Values, id string) (string, bool) {
	sealed, err := base64.RawURLEncoding.DecodeString(query.Get(ParamSealed))
	if err != nil || len(sealed) == 0 {
		return "", false
	}
	plain, err := l.box.Open(sealed, []byte(id))
	if err != nil {
		return "", false
	}
	return string(plain), true
}

// Verify checks a link's query (as received by the feedback page) and
// returns the event ID it was made for.
func (l *Links) Verify(query url.Values) (eventID string, ok bool) {
	eventID = query.Get(ParamEvent)
	if eventID == "" || !Verify(l.key, eventID, query.Get(ParamSignature)) {
		return "", false
	}
	return eventID, true
}

// Sign returns the signature of an event ID: the HMAC-SHA256 in base64url
// without padding (RFC 4648 §5), 43 characters.
func Sign(key []byte, eventID string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(eventID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Verify reports, in constant time, whether sig is the signature of
// eventID, spelt exactly as Sign spells it. A signature has one accepted
// spelling: a decoder would also take padding, line breaks, or a last
// character that differs in the bits the encoding leaves unused, and a
// link that verifies under several spellings is several links.
func Verify(key []byte, eventID, sig string) bool {
	return subtle.ConstantTimeCompare([]byte(sig), []byte(Sign(key, eventID))) == 1
}
