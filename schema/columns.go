package schema

import (
	"strings"

	"github.com/touchpoint/touchpoint/text"
)

// The registry of personal data and written text: every column of every
// table that can hold text or bytes (text, JSON and arrays of text,
// bytea, and any other type a value could be written in) is listed here
// once, with what it may hold of a customer and, where someone other
// than Touchpoint wrote its text, the kind of field that text is
// (package text). Erasing a customer's data works from this list and
// nothing else, so did cleaning the text stored before package text
// decided what each field may hold, and a test holds it to the migrated
// database's own catalogue: a column added by a migration and not listed
// here, or listed and gone, fails it. A new table or column is added here
// in the change that creates it.

// Class is what a column may hold of a customer.
type Class string

const (
	// Personal columns hold the customer's data itself (an address, a
	// name, a provider's diagnostic text about their mailbox, a hash of
	// their address). An erasure clears or redacts them as their Erase
	// says.
	Personal Class = "personal"
	// FreeText columns hold words someone wrote (the customer, the shop,
	// a provider) or a product's text the shop sent, which may contain
	// one of the customer's values: an erasure replaces each value found
	// by "[erased]".
	FreeText Class = "free_text"
	// None columns never hold a customer's data: identifiers, codes,
	// statuses, hashes and secrets of the shop's, the shop's own texts.
	None Class = "none"
)

// Erase is what an erasure does to a personal column in the customer's
// rows.
type Erase string

const (
	// SetNull clears the value.
	SetNull Erase = "set_null"
	// SetEmpty clears the value of a column that may not be NULL.
	SetEmpty Erase = "set_empty"
	// Redact is for a JSON document: its customer object's members go,
	// its customerReference members become null, and every string in it
	// is redacted like free text.
	Redact Erase = "redact"
	// DeleteRow deletes the rows: they are the customer's data.
	DeleteRow Erase = "delete_row"
	// Keep keeps the value on purpose: the suppression list is the record
	// of a wish not to be contacted (or of an address that bounces);
	// dropping it would let the next event invite the customer again.
	Keep Erase = "keep"
	// KeepWhileSuppressed keeps the rows while their address is on the
	// suppression list, and deletes them once it is not.
	KeepWhileSuppressed Erase = "keep_while_suppressed"
)

// Owner says how an erasure finds the rows of one customer in a table.
// At most one of its columns is set; none: the table holds no customer's
// rows, and all its columns are None.
type Owner struct {
	// Event is the column that holds the ID of the customer's event.
	Event string
	// Address is the column that holds the customer's address as the
	// suppression list spells it (an email address in lower case, a
	// mobile number in E.164), in the table's account_id.
	Address string
	// AddressHash is the column that holds the SHA-256 of the customer's
	// address as the send counters spell it, in the table's account_id.
	AddressHash string
}

// Column is a column that may hold a customer's data, or text that
// someone other than Touchpoint wrote.
type Column struct {
	Name  string
	Class Class // Personal, FreeText, or None for text that is no customer's
	Erase Erase // for a Personal column
	// Kind is the kind of field (package text) of the text that a shop, a
	// customer, a provider or the operator wrote in the column, as every
	// input checks or cleans it; 0 where Touchpoint makes every value
	// (ids, codes, statuses, hashes, its own messages) or a stricter rule
	// of its own checks it (an idempotency key). Of a JSON document it is
	// the kind of every string value that Fields does not name.
	Kind text.Kind
	// Fields are the kinds of the string values of a JSON document that
	// are not Kind, by path: member names from the top joined by ".",
	// "*" for every element of an array or member of an object.
	Fields map[string]text.Kind
}

// KindAt is the kind of the string value at path (member names, "*" for
// an element of an array) of the JSON document the column holds.
func (c Column) KindAt(path []string) text.Kind {
	for pattern, k := range c.Fields {
		if matchPath(strings.Split(pattern, "."), path) {
			return k
		}
	}
	return c.Kind
}

func matchPath(pattern, path []string) bool {
	if len(pattern) != len(path) {
		return false
	}
	for i, p := range pattern {
		if p != "*" && p != path[i] {
			return false
		}
	}
	return true
}

// Table is a table with the columns of it that can hold text or bytes.
type Table struct {
	Name string
	Rows Owner
	// Columns may hold a customer's data (Personal, FreeText) or text
	// someone wrote (None with a Kind).
	Columns []Column
	// None are the columns that hold neither.
	None []string
}

// Customer are the columns of t that may hold a customer's data: what an
// erasure goes through.
func (t Table) Customer() []Column {
	var out []Column
	for _, c := range t.Columns {
		if c.Class != None {
			out = append(out, c)
		}
	}
	return out
}

func personal(name string, e Erase, k text.Kind) Column {
	return Column{Name: name, Class: Personal, Erase: e, Kind: k}
}
func freeText(name string, k text.Kind) Column { return Column{Name: name, Class: FreeText, Kind: k} }

// written is a column of text someone wrote that holds nothing of a
// customer's.
func written(name string, k text.Kind) Column { return Column{Name: name, Class: None, Kind: k} }

// Tables is the registry: every table of the schema and its columns of
// text or bytes, in the order an erasure goes through them.
func Tables() []Table {
	return []Table{
		{Name: "schema_migrations", None: []string{"name"}},
		// The operator names an account; the shop writes its branding
		// (the colour is "#RRGGBB" or nothing, by a rule of its own).
		{Name: "accounts", Columns: []Column{
			written("name", text.Name),
			written("display_name", text.Name),
			written("logo_url", text.URL),
			written("reply_to", text.Identifier),
		}, None: []string{"id", "brand_color"}},
		// An external client's id and issuer are matched by their bytes
		// to its tokens; the verifier takes no id that text.Identifier
		// refuses, and the issuer is the operator's configuration.
		{Name: "api_clients", Columns: []Column{
			written("name", text.Name),
			written("client_id", text.Identifier),
		}, None: []string{"id", "account_id", "access_group", "issuer", "secret_hash"}},
		{Name: "signing_keys", None: []string{"kid", "algorithm", "private_key", "public_jwk"}},
		{Name: "publication_keys", None: []string{"kid", "account_id", "algorithm", "private_key", "public_jwk"}},
		{Name: "publication_versions", None: []string{"account_id"}},
		{Name: "token_uses", None: []string{"jti"}},
		{Name: "event_types", Columns: []Column{written("name", text.Name)}, None: []string{"id", "account_id"}},
		{Name: "channels", Columns: []Column{written("name", text.Name)}, None: []string{"id", "account_id", "type"}},
		{Name: "invite_settings", None: []string{"id", "account_id", "channel_id", "event_type_id", "medium", "delay",
			"delay_from", "send_window", "reminder_delay"}},
		{Name: "account_quotas", None: []string{"account_id"}},
		{Name: "account_daily_sends", None: []string{"account_id"}},
		{Name: "account_daily_events", None: []string{"account_id"}},
		// A template's one-line fields are names, its body and an SMS's
		// text multi-line.
		{Name: "message_templates", Columns: []Column{templateContent()},
			None: []string{"id", "account_id", "event_type_id", "kind", "locale"}},
		{Name: "message_template_versions", Columns: []Column{templateContent()},
			None: []string{"account_id", "scope", "kind", "locale", "created_by"}},
		{Name: "webhook_endpoints", Columns: []Column{
			written("url", text.URL),
			written("description", text.Multiline),
		}, None: []string{"id", "account_id", "events", "secret", "previous_secret"}},
		{Name: "invite_rollups", None: []string{"account_id", "event_type_id", "channel_id", "locale", "medium"}},
		{Name: "invite_rollup_slots", None: []string{"account_id", "event_type_id", "channel_id", "locale", "medium"}},
		{Name: "invite_rollup_changes", None: []string{"account_id", "event_type_id", "channel_id", "locale", "medium"}},
		{Name: "review_aggregates", None: []string{"account_id"}},
		// A product's identifiers are the shop's, shared by every buyer.
		{Name: "product_aggregates", Columns: []Column{written("key_value", text.Identifier)},
			None: []string{"account_id", "key_kind"}},
		{Name: "mail_event_nonces", None: []string{"provider", "nonce"}},

		{Name: "events", Rows: Owner{Event: "id"}, Columns: []Column{
			personal("customer_email", SetEmpty, text.Identifier),
			personal("customer_mobile", SetNull, text.Identifier),
			personal("customer_reference", SetNull, text.Identifier),
			eventPayload(), // the event as sent: customer, metadata, products
			personal("last_error", SetNull, text.Diagnostic), // a mail server's words about the mailbox
			freeText("transaction_reference", text.Identifier),
			written("type", text.Name), // its event type's name
		}, None: []string{"id", "account_id", "event_type_id", "channel_id", "delay", "delay_from", "send_window",
			"invite_setting_id", "invite_status", "invite_reason", "invite_medium", "reminder_status", "reminder_reason", "locale"}},
		{Name: "send_attempts", Rows: Owner{Event: "event_id"}, Columns: []Column{
			personal("detail", SetNull, text.Diagnostic), // the server's words, the address masked: no search would find it
		}, None: []string{"event_id", "kind", "medium", "outcome", "template_source"}},
		{Name: "mail_events", Rows: Owner{Event: "event_id"}, Columns: []Column{
			personal("detail", SetNull, text.Diagnostic), // the provider's diagnostic: names, numbers, references
		}, None: []string{"provider", "provider_id", "event_id", "account_id", "message", "outcome"}},
		{Name: "mail_deliveries", None: []string{"event_id", "message", "status", "provider"}},
		{Name: "sms_deliveries", None: []string{"message_sid", "event_id", "message", "status"}},
		{Name: "outbox", None: []string{"event_id", "kind", "last_error"}},
		// The client's key often names the customer; its hash covers a
		// request that carried their data.
		{Name: "idempotency_keys", Rows: Owner{Event: "event_id"}, Columns: []Column{
			personal("key", DeleteRow, 0), // printable ASCII, by a rule of its own
			personal("request_hash", DeleteRow, 0),
		}, None: []string{"account_id", "event_id"}},
		{Name: "reviews", Rows: Owner{Event: "event_id"}, Columns: []Column{
			freeText("comment", text.Multiline),
			freeText("reply_text", text.Multiline), // a shop may answer "we have written to you at …"
			// The names the public author is made from, kept (with the
			// customer's consent) so that the page outlives the event.
			personal("author_first_name", SetNull, text.Name),
			personal("author_last_name", SetNull, text.Name),
		}, None: []string{"id", "account_id", "event_id", "event_type_id", "channel_id", "locale", "status", "report_reason"}},
		// A product review keeps its own copy of the product as the event
		// named it, which the public outputs show: a personalised product
		// ("Engraved mug for Greta") carries the customer's values.
		{Name: "product_reviews", Rows: Owner{Event: "event_id"}, Columns: []Column{
			freeText("comment", text.Multiline),
			freeText("name", text.Name),
			freeText("brand", text.Name),
			freeText("url", text.URL),
			freeText("image_url", text.URL),
			written("sku", text.Identifier),
			written("gtin", text.Identifier),
			written("mpn", text.Identifier),
		}, None: []string{"id", "account_id", "review_id", "event_id", "status", "report_reason"}},
		{Name: "review_history", Rows: Owner{Event: "event_id"}, Columns: []Column{
			freeText("note", text.Multiline), // a report's or a decision's note
		}, None: []string{"review_id", "account_id", "event_id", "action", "status", "reason", "actor"}},
		// A delivery's body carries the customer reference, the product
		// keys and the texts of a review (its other strings are ids and
		// words of the vocabulary); its errors are the shop's receiver's
		// answers as Touchpoint words them.
		{Name: "webhook_deliveries", Rows: Owner{Event: "event_id"}, Columns: []Column{
			{Name: "payload", Class: Personal, Erase: Redact, Kind: text.Identifier, Fields: map[string]text.Kind{
				"data.comment": text.Multiline, "data.products.*.comment": text.Multiline,
				"data.note": text.Multiline, "data.reply.text": text.Multiline,
			}},
			freeText("last_error", 0),
			// The log's errors are last_error's words, one per attempt; a
			// document is redacted string by string.
			{Name: "attempt_log", Class: Personal, Erase: Redact},
		}, None: []string{"id", "endpoint_id", "account_id", "type", "status", "reason", "start_error", "event_id"}},
		{Name: "recipient_daily_sends", Rows: Owner{AddressHash: "address_hash"}, Columns: []Column{
			personal("address_hash", DeleteRow, 0), // tells whoever has the address that it was sent to
		}, None: []string{"account_id"}},
		{Name: "suppressions", Rows: Owner{Address: "address"}, Columns: []Column{
			personal("address", Keep, text.Identifier),
		}, None: []string{"account_id", "medium", "reason", "event_id", "added_by"}},
		{Name: "suppression_history", Rows: Owner{Address: "address"}, Columns: []Column{
			personal("address", KeepWhileSuppressed, text.Identifier),
		}, None: []string{"account_id", "action", "reason", "by"}},
		// A test send to the customer's address (the address is cleared
		// once the test has ended, leaving only its mask).
		// The people of the console and their sign-ins hold a person's
		// address and the ways they sign in, never a customer's data: a
		// person is erased by `touchpoint users erase`, which clears the
		// address (the row stays, so the trail's usr-… names someone) and
		// deletes the rest. Tokens, codes and cookies are kept as hashes.
		{Name: "people", Columns: []Column{written("email", text.Identifier)}, None: []string{"id", "account_id", "role", "language"}},
		{Name: "person_identities", None: []string{"issuer", "subject", "person_id"}},
		{Name: "sign_in_links", None: []string{"id", "token_hash", "browser_hash", "person_id", "client_id", "redirect_uri",
			"state", "nonce", "code_challenge"}},
		{Name: "authorization_codes", None: []string{"code_hash", "person_id", "client_id", "redirect_uri", "nonce",
			"code_challenge"}},
		{Name: "console_sessions", None: []string{"token_hash", "id", "person_id", "csrf_token", "issuer"}},
		// Who did what, in ids and the vocabulary's words: a person's
		// address is read from people when the trail is shown, so erasing
		// the person clears it from the trail too.
		{Name: "audit_trail", None: []string{"id", "account_id", "actor", "action", "target", "detail"}},
		{Name: "template_test_sends", Rows: Owner{Address: "address"}, Columns: []Column{
			personal("address", DeleteRow, text.Identifier),
			personal("masked_address", DeleteRow, 0), // Touchpoint's mask of the address
			personal("error", DeleteRow, text.Diagnostic),
		}, None: []string{"id", "account_id", "event_type_id", "kind", "locale", "status", "template_source", "created_by",
			"start_error"}},
	}
}

// eventPayload is an event as its client sent it: names but for the
// identifiers, the URLs and the multi-line postal address and metadata
// values, as the API checks each field.
func eventPayload() Column {
	return Column{Name: "payload", Class: Personal, Erase: Redact, Kind: text.Name, Fields: map[string]text.Kind{
		"customer.email": text.Identifier, "customer.mobile": text.Identifier, "customer.reference": text.Identifier,
		"customer.address": text.Multiline, "transaction.reference": text.Identifier,
		"products.*.sku": text.Identifier, "products.*.gtin": text.Identifier, "products.*.mpn": text.Identifier,
		"products.*.parentProduct.sku": text.Identifier,
		"products.*.url":               text.URL, "products.*.imageUrl": text.URL,
		"metadata.*": text.Multiline,
	}}
}

// templateContent is a shop's template: its one-line fields are names,
// its body and an SMS's text multi-line.
func templateContent() Column {
	return Column{Name: "content", Class: None, Kind: text.Name,
		Fields: map[string]text.Kind{"body": text.Multiline, "text": text.Multiline}}
}
