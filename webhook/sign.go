package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The Standard Webhooks request headers.
const (
	// HeaderID carries the message ID, the same on every retry of one
	// delivery, so the receiver can drop duplicates.
	HeaderID = "webhook-id"
	// HeaderTimestamp carries the attempt's time in Unix seconds; the
	// receiver rejects stale ones to stop replays.
	HeaderTimestamp = "webhook-timestamp"
	// HeaderSignature carries Sign's result.
	HeaderSignature = "webhook-signature"
)

// signatureVersion identifies an HMAC-SHA256 signature in the header.
const signatureVersion = "v1"

// Sign returns the webhook-signature header value for one attempt:
// "v1,<base64 HMAC-SHA256(key, "{msgID}.{unix seconds}.{body}")>" for each
// secret, separated by spaces. During a rotation pass the new and the old
// secret: the receiver accepts the request if any entry verifies, so it can
// switch secrets at its own pace.
//
// body must be the exact bytes sent. msgID must be non-empty printable
// ASCII without '.', which separates the signed parts.
func Sign(msgID string, ts time.Time, body []byte, secrets ...string) (string, error) {
	if err := checkMsgID(msgID); err != nil {
		return "", err
	}
	if len(secrets) == 0 {
		return "", errors.New("sign webhook: no secret")
	}
	prefix := msgID + "." + strconv.FormatInt(ts.Unix(), 10) + "."
	entries := make([]string, 0, len(secrets))
	for i, s := range secrets {
		key, err := ParseSecret(s)
		if err != nil {
			return "", fmt.Errorf("sign webhook: secret %d: %w", i+1, err)
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(prefix))
		mac.Write(body)
		entries = append(entries, signatureVersion+","+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(entries, " "), nil
}

func checkMsgID(id string) error {
	if id == "" {
		return errors.New("sign webhook: empty message id")
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' || c == '.' {
			return fmt.Errorf("sign webhook: message id %q must be printable ASCII without '.'", id)
		}
	}
	return nil
}
