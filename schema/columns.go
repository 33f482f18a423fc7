package schema

// The registry of personal data: every column of every table that can
// hold text or bytes (text, JSON and arrays of text, bytea, and any other
// type a value could be written in) is listed here once, with what it may
// hold of a customer. Erasing a customer's data works from this list and
// nothing else, and a test holds it to the migrated database's own
// catalogue: a column added by a migration and not listed here, or
// listed and gone, fails it. A new table or column is added here in the
// change that creates it.

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

// Column is a column that may hold a customer's data.
type Column struct {
	Name  string
	Class Class // Personal or FreeText
	Erase Erase // for a Personal column
}

// Table is a table with the columns of it that can hold text or bytes.
type Table struct {
	Name string
	Rows Owner
	// Columns may hold a customer's data.
	Columns []Column
	// None are the columns that never do.
	None []string
}

func personal(name string, e Erase) Column { return Column{Name: name, Class: Personal, Erase: e} }
func freeText(name string) Column          { return Column{Name: name, Class: FreeText} }

// Tables is the registry: every table of the schema and its columns of
// text or bytes, in the order an erasure goes through them.
func Tables() []Table {
	return []Table{
		{Name: "schema_migrations", None: []string{"name"}},
		{Name: "accounts", None: []string{"id", "name", "display_name", "logo_url", "brand_color", "reply_to"}},
		{Name: "api_clients", None: []string{"id", "account_id", "name", "access_group", "issuer", "client_id", "secret_hash"}},
		{Name: "signing_keys", None: []string{"kid", "algorithm", "private_key", "public_jwk"}},
		{Name: "publication_keys", None: []string{"kid", "account_id", "algorithm", "private_key", "public_jwk"}},
		{Name: "publication_versions", None: []string{"account_id"}},
		{Name: "token_uses", None: []string{"jti"}},
		{Name: "event_types", None: []string{"id", "account_id", "name"}},
		{Name: "channels", None: []string{"id", "account_id", "name", "type"}},
		{Name: "invite_settings", None: []string{"id", "account_id", "channel_id", "event_type_id", "medium", "delay",
			"delay_from", "send_window", "reminder_delay"}},
		{Name: "account_quotas", None: []string{"account_id"}},
		{Name: "account_daily_sends", None: []string{"account_id"}},
		{Name: "account_daily_events", None: []string{"account_id"}},
		{Name: "message_templates", None: []string{"id", "account_id", "event_type_id", "kind", "locale", "content"}},
		{Name: "message_template_versions", None: []string{"account_id", "scope", "kind", "locale", "content", "created_by"}},
		{Name: "webhook_endpoints", None: []string{"id", "account_id", "url", "events", "description", "secret", "previous_secret"}},
		{Name: "invite_rollups", None: []string{"account_id", "event_type_id", "channel_id", "locale", "medium"}},
		{Name: "invite_rollup_slots", None: []string{"account_id", "event_type_id", "channel_id", "locale", "medium"}},
		{Name: "invite_rollup_changes", None: []string{"account_id", "event_type_id", "channel_id", "locale", "medium"}},
		{Name: "review_aggregates", None: []string{"account_id"}},
		// A product's identifiers are the shop's, shared by every buyer.
		{Name: "product_aggregates", None: []string{"account_id", "key_kind", "key_value"}},
		{Name: "mail_event_nonces", None: []string{"provider", "nonce"}},

		{Name: "events", Rows: Owner{Event: "id"}, Columns: []Column{
			personal("customer_email", SetEmpty),
			personal("customer_mobile", SetNull),
			personal("customer_reference", SetNull),
			personal("payload", Redact),     // the event as sent: customer, metadata, products
			personal("last_error", SetNull), // a mail server's words about the mailbox
			freeText("transaction_reference"),
		}, None: []string{"id", "account_id", "event_type_id", "channel_id", "type", "delay", "delay_from", "send_window",
			"invite_setting_id", "invite_status", "invite_reason", "invite_medium", "reminder_status", "reminder_reason", "locale"}},
		{Name: "send_attempts", Rows: Owner{Event: "event_id"}, Columns: []Column{
			personal("detail", SetNull), // the server's words, the address masked: no search would find it
		}, None: []string{"event_id", "kind", "medium", "outcome", "template_source"}},
		{Name: "mail_events", Rows: Owner{Event: "event_id"}, Columns: []Column{
			personal("detail", SetNull), // the provider's diagnostic: names, numbers, references
		}, None: []string{"provider", "provider_id", "event_id", "account_id", "message", "outcome"}},
		{Name: "mail_deliveries", None: []string{"event_id", "message", "status", "provider"}},
		{Name: "sms_deliveries", None: []string{"message_sid", "event_id", "message", "status"}},
		{Name: "outbox", None: []string{"event_id", "kind", "last_error"}},
		// The client's key often names the customer; its hash covers a
		// request that carried their data.
		{Name: "idempotency_keys", Rows: Owner{Event: "event_id"}, Columns: []Column{
			personal("key", DeleteRow),
			personal("request_hash", DeleteRow),
		}, None: []string{"account_id", "event_id"}},
		{Name: "reviews", Rows: Owner{Event: "event_id"}, Columns: []Column{
			freeText("comment"),
			freeText("reply_text"), // a shop may answer "we have written to you at …"
		}, None: []string{"id", "account_id", "event_id", "event_type_id", "channel_id", "locale", "status", "report_reason"}},
		// A product review keeps its own copy of the product as the event
		// named it, which the public outputs show: a personalised product
		// ("Engraved mug for Greta") carries the customer's values.
		{Name: "product_reviews", Rows: Owner{Event: "event_id"}, Columns: []Column{
			freeText("comment"),
			freeText("name"),
			freeText("brand"),
			freeText("url"),
			freeText("image_url"),
		}, None: []string{"id", "account_id", "review_id", "event_id", "sku", "gtin", "mpn", "status", "report_reason"}},
		{Name: "review_history", Rows: Owner{Event: "event_id"}, Columns: []Column{
			freeText("note"), // a report's or a decision's note
		}, None: []string{"review_id", "account_id", "event_id", "action", "status", "reason", "actor"}},
		// A delivery's body carries the customer reference and the texts
		// of a review; its error is the shop's receiver's answer.
		{Name: "webhook_deliveries", Rows: Owner{Event: "event_id"}, Columns: []Column{
			personal("payload", Redact),
			freeText("last_error"),
		}, None: []string{"id", "endpoint_id", "account_id", "type", "status", "reason", "start_error", "event_id"}},
		{Name: "recipient_daily_sends", Rows: Owner{AddressHash: "address_hash"}, Columns: []Column{
			personal("address_hash", DeleteRow), // tells whoever has the address that it was sent to
		}, None: []string{"account_id"}},
		{Name: "suppressions", Rows: Owner{Address: "address"}, Columns: []Column{
			personal("address", Keep),
		}, None: []string{"account_id", "medium", "reason", "event_id", "added_by"}},
		{Name: "suppression_history", Rows: Owner{Address: "address"}, Columns: []Column{
			personal("address", KeepWhileSuppressed),
		}, None: []string{"account_id", "action", "reason", "by"}},
		// A test send to the customer's address (the address is cleared
		// once the test has ended, leaving only its mask).
		// The people of the console and their sign-ins hold a person's
		// address and the ways they sign in, never a customer's data: a
		// person is erased by `touchpoint users erase`, which clears the
		// address (the row stays, so the trail's usr-… names someone) and
		// deletes the rest. Tokens, codes and cookies are kept as hashes.
		{Name: "people", None: []string{"id", "account_id", "email", "role"}},
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
			personal("address", DeleteRow),
			personal("masked_address", DeleteRow),
			personal("error", DeleteRow),
		}, None: []string{"id", "account_id", "event_type_id", "kind", "locale", "status", "template_source", "created_by",
			"start_error"}},
	}
}
