// Package searchattr registers custom search attributes on a Temporal
// namespace: `touchpoint migrate` does it on a cluster, the embedded dev
// server on itself.
package searchattr

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
)

// Register adds the attributes the namespace lacks. It is idempotent; an
// attribute registered with another type is an error, since changing it
// would break the search of existing workflows.
func Register(ctx context.Context, c client.Client, namespace string, want map[string]enumspb.IndexedValueType) (added []string, err error) {
	if len(want) == 0 {
		return nil, nil
	}
	op := c.OperatorService()
	have, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range want {
		got, ok := have.GetCustomAttributes()[name]
		switch {
		case !ok:
			missing[name] = typ
			added = append(added, name)
		case got != typ:
			return nil, fmt.Errorf("search attribute %s is registered as %s, want %s", name, got, typ)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	_, err = op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	if err != nil {
		return nil, fmt.Errorf("add search attributes: %w", err)
	}
	return added, nil
}
