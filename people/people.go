// Package people is the vocabulary of the people who use the console: their
// roles, what each role may do (the one table of action → least role), who
// an action is recorded as (the actor), and how a person's email address
// is written. Pure: it does no I/O.
package people

import (
	"context"
	"errors"
	"net/mail"
	"slices"
	"strings"
)

// Role is what a person may do in their account. Each role may do what the
// one before it may, and more.
type Role string

const (
	// Viewer reads.
	Viewer Role = "viewer"
	// Editor also answers and reports reviews, edits templates, sends
	// tests to their own address, cancels and retries invites, and retries
	// and replays webhook deliveries.
	Editor Role = "editor"
	// Owner also manages people, API clients, webhook endpoints, branding,
	// invite settings, and lifts suppressions.
	Owner Role = "owner"
)

// Roles lists the roles from least to most.
func Roles() []Role { return []Role{Viewer, Editor, Owner} }

// ParseRole reads a role's name; ok is false for anything else.
func ParseRole(s string) (Role, bool) {
	r := Role(s)
	return r, slices.Contains(Roles(), r)
}

// AtLeast reports whether r is min or above it.
func (r Role) AtLeast(min Role) bool {
	i, j := slices.Index(Roles(), r), slices.Index(Roles(), min)
	return i >= 0 && j >= 0 && i >= j
}

// Action is something a person may be allowed to do.
type Action string

// The actions of the console. Every handler that reads or changes
// something names one; MinRole says who may.
const (
	Read           Action = "read"            // see anything of the account
	SignOut        Action = "sign_out"        // end one's own session
	ChooseLanguage Action = "self.language"   // the console's language one reads in
	ReplyReview    Action = "review.reply"    // write, change or delete a reply
	ReportReview   Action = "review.report"   // report a review
	EditTemplates  Action = "template.edit"   // change the shop's templates
	SendTest       Action = "template.test"   // a test send, to one's own address
	CancelInvite   Action = "invite.cancel"   // cancel an invite or reminder
	RetryInvite    Action = "invite.retry"    // retry a failed invite
	RetryWebhook   Action = "webhook.retry"   // retry a webhook delivery
	ReplayWebhook  Action = "webhook.replay"  // replay an endpoint's deliveries
	ManagePeople   Action = "people.manage"   // add people, change roles, disable, sign out
	ManageClients  Action = "clients.manage"  // API clients and their secrets
	ManageWebhooks Action = "webhook.manage"  // webhook endpoints
	EditBranding   Action = "branding.edit"   // display name, logo, colour, reply address
	EditSettings   Action = "settings.edit"   // invite settings, event types, channels
	Suppress       Action = "suppression.add" // put an address on the suppression list
	Unsuppress     Action = "suppression.lift"
	EraseCustomer  Action = "customer.erase"
)

// minRole is the one table of who may do what. An action missing from it
// is allowed to nobody.
var minRole = map[Action]Role{
	Read:           Viewer,
	SignOut:        Viewer,
	ChooseLanguage: Viewer,
	ReplyReview:    Editor,
	ReportReview:   Editor,
	EditTemplates:  Editor,
	SendTest:       Editor,
	CancelInvite:   Editor,
	RetryInvite:    Editor,
	RetryWebhook:   Editor,
	ReplayWebhook:  Editor,
	ManagePeople:   Owner,
	ManageClients:  Owner,
	ManageWebhooks: Owner,
	EditBranding:   Owner,
	EditSettings:   Owner,
	// Adding to the list and erasing a customer's data are not an
	// editor's tasks; until someone needs them to be, owners do them.
	Suppress:      Owner,
	Unsuppress:    Owner,
	EraseCustomer: Owner,
}

// MinRole is the least role that may do a; ok is false for an action
// nobody may do.
func MinRole(a Action) (Role, bool) {
	r, ok := minRole[a]
	return r, ok
}

// Actions lists every action of the table.
func Actions() []Action {
	out := make([]Action, 0, len(minRole))
	for a := range minRole {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// Allows reports whether a person of role r may do a.
func Allows(r Role, a Action) bool {
	min, ok := minRole[a]
	return ok && r.AtLeast(min)
}

// IDPrefix is the prefix of a person's id (usr-<uuid>).
const IDPrefix = "usr"

// Actor is who a change is recorded as: a person (usr-…), an API client
// (cli-…), Operator, the admin CLI, or Customer.
type Actor string

// Operator is the actor of the admin CLI: whoever runs `touchpoint` with
// the database's credentials.
const Operator Actor = "operator"

// Customer is the actor of a customer's own change: a review posted, an
// unsubscribe link followed, an SMS STOP.
const Customer Actor = "customer"

// ClientPrefix is the prefix of an API client's id (cli-<uuid>).
const ClientPrefix = "cli"

// PersonActor is the actor of a person's change.
func PersonActor(personID string) Actor { return Actor(personID) }

// ClientActor is the actor of an API client's change.
func ClientActor(clientID string) Actor { return Actor(clientID) }

type actorKey struct{}

// WithActor is ctx of a request made by a: the API sets its client, the
// console its person, so that whatever the request changes is recorded as
// theirs in the audit trail, in the change's own transaction.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorOf is the actor ctx was made for by WithActor; a change outside a
// request of the API or the console is the admin CLI's: Operator.
func ActorOf(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok && a != "" {
		return a
	}
	return Operator
}

// IsPerson reports whether the actor is a person.
func (a Actor) IsPerson() bool { return strings.HasPrefix(string(a), IDPrefix+"-") }

// IsClient reports whether the actor is an API client.
func (a Actor) IsClient() bool { return strings.HasPrefix(string(a), ClientPrefix+"-") }

// MaxEmail is the longest address a person may have: an email's path limit.
const MaxEmail = 254

// ErrBadEmail: the text is not one email address.
var ErrBadEmail = errors.New("must be an email address such as anna@shop.example")

// NormalizeEmail is an address as a person is known by: trimmed and in
// lower case. Anything but one bare address (no display name, no
// comments) is ErrBadEmail.
func NormalizeEmail(raw string) (string, error) {
	a := strings.TrimSpace(raw)
	if a == "" || len(a) > MaxEmail {
		return "", ErrBadEmail
	}
	p, err := mail.ParseAddress(a)
	if err != nil || p.Name != "" || p.Address != a || !strings.Contains(a[strings.LastIndexByte(a, '@')+1:], ".") {
		return "", ErrBadEmail
	}
	return strings.ToLower(a), nil
}
