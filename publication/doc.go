// Package publication owns what Touchpoint shows of an account's reviews
// to anyone, without a token: which reviews and which of their fields are
// public (never an email address, mobile number, postal address,
// reference or full last name), the JSON list with its aggregate, the
// schema.org JSON-LD of the account and of a product, the server-rendered
// widget meant for an iframe, Google's Product Reviews Feed (streamed),
// and the proofs that make each public review verifiable: a compact JWS
// signed with the account's publication key, whose public keys it
// publishes as a JWKS, and the page that states what a proof says.
//
// Every output is made by the encoder of its format — html/template,
// encoding/json, encoding/xml — never by concatenation, so hostile text in
// a comment comes out escaped and intact. The store reads the rows; this
// package decides what of them goes out and how; publicapi's handlers
// only pass requests in and answers out.
package publication
