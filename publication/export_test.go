package publication

import "context"

// SignPayload signs any payload with the account's current publication
// key: the tests make proofs of an older shape of the claims with it.
func (k *Keys) SignPayload(ctx context.Context, accountID string, payload []byte) (string, error) {
	return k.sign(ctx, accountID, payload)
}
