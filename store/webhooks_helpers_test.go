package store_test

import "github.com/touchpoint/touchpoint/internal/webhookfixture"

// The webhook helpers of internal/webhookfixture, by their names here.
var (
	webhookStore = webhookfixture.Store
	ticking      = webhookfixture.Ticking
	endpoint     = webhookfixture.Endpoint
	deliveries   = webhookfixture.Deliveries
	typesOf      = webhookfixture.TypesOf
)
