// Package webhook holds the building blocks of Touchpoint's outbound
// webhooks, which follow Standard Webhooks (https://www.standardwebhooks.com)
// so that a shop can verify them with any of that specification's libraries:
//
//   - secrets (NewSecret, ParseSecret): "whsec_" + base64 of random bytes;
//   - the signature (Sign): the value of the webhook-signature header;
//   - the message format (Message and its Payload types): the JSON body,
//     whose payload types carry IDs, statuses and the shop's own customer
//     reference but have no field that could hold the customer's email,
//     name, address or mobile;
//   - URL rules for the API (ValidateURL);
//   - an outbound HTTP client (Client.Deliver) that signs, posts once,
//     classifies the answer (Succeeded, Gone, Failed) and refuses to reach
//     private, loopback or link-local addresses at dial time.
//
// The package does no retrying and keeps no state: the outbox, the retry
// schedule and the endpoint records live with its callers.
package webhook
