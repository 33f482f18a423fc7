package senderr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/touchpoint/touchpoint/senderr"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	refused := &senderr.Error{Kind: senderr.Permanent, Recipient: senderr.RecipientRefused, Code: 550, Text: "smtp: 550 no such user"}
	tests := []struct {
		name      string
		err       error
		kind      senderr.Kind
		recipient senderr.Recipient
	}{
		{"refused, wrapped", fmt.Errorf("send: %w", refused), senderr.Permanent, senderr.RecipientRefused},
		{"opted out", &senderr.Error{Kind: senderr.Permanent, Recipient: senderr.RecipientOptedOut}, senderr.Permanent, senderr.RecipientOptedOut},
		{"the message refused", &senderr.Error{Kind: senderr.Permanent}, senderr.Permanent, senderr.RecipientNotAtFault},
		{"uncertain", &senderr.Error{Kind: senderr.Uncertain}, senderr.Uncertain, senderr.RecipientNotAtFault},
		// A transient failure says nothing lasting of the recipient, even
		// if an adapter marked it.
		{"transient", &senderr.Error{Kind: senderr.Transient, Recipient: senderr.RecipientRefused}, senderr.Transient, senderr.RecipientNotAtFault},
		{"anything else", context.DeadlineExceeded, senderr.Transient, senderr.RecipientNotAtFault},
		{"joined", errors.Join(errors.New("transport"), refused), senderr.Permanent, senderr.RecipientRefused},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.kind, senderr.KindOf(tt.err), tt.name)
		assert.Equal(t, tt.recipient, senderr.RecipientOf(tt.err), tt.name)
	}
	assert.Equal(t, "smtp: 550 no such user", refused.Error())
	assert.Equal(t, []string{"transient", "permanent", "uncertain"},
		[]string{senderr.Transient.String(), senderr.Permanent.String(), senderr.Uncertain.String()})
}

func TestUnwrap(t *testing.T) {
	t.Parallel()
	err := &senderr.Error{Kind: senderr.Transient, Text: "smtp client: dial", Err: context.DeadlineExceeded}
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}
