// Package console is where a shop's people work: the pages at
// {base_url}/console/ where staff read and answer reviews, support finds
// an invite and follows it to its workflow, and owners run their account.
//
// The pages are server-rendered with html/template from files embedded in
// the binary (templates/), in one layout, with their texts in six
// languages (locales/) and one style sheet (assets/) that follows the
// reader's light or dark preference. Every page works without JavaScript;
// two small scripts, allowed by their hashes, add a live preview and
// confirmations. Nothing is loaded from elsewhere.
//
// Every route is a line of the table in routes(), with the action it
// performs: the signed-in person's role must allow it, and a request that
// changes anything must carry the session's CSRF token from the console's
// own origin. A person only ever sees their own account: another
// account's object answers 404, exactly as one that does not exist.
//
// The console reads and writes through small interfaces of the store
// calls each area needs (stores.go), and every rule it applies belongs to
// the package that owns it (review, stats, templates, brand, invite…):
// the console only shows and asks.
package console

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/console/view"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/templates"
	"github.com/touchpoint/touchpoint/webhook"
)

// Prefix is where the console is served, below the base URL.
const Prefix = "/console/"

// HomePath is the console's start page.
const HomePath = Prefix

// Person is who is signed in, as the pages need them.
type Person struct {
	ID        string // usr-…: who did what, in every history
	AccountID string // the only account they see
	Email     string // where their test sends go
	Role      string // viewer, editor or owner
	CSRFToken string // the session's token, put in every form
	Language  string // their choice of language; "" for the browser's
}

// SignedIn tells who signed in with the request. When nobody did (or the
// session is over), it answers the request itself — sends the browser to
// sign in — and returns false.
type SignedIn func(w http.ResponseWriter, r *http.Request) (Person, bool)

// Options are the console's dependencies.
type Options struct {
	// BaseURL is the public address of the API (TOUCHPOINT_BASE_URL):
	// the console is at BaseURL + "/console/", and a request that changes
	// anything must come from its origin. Required.
	BaseURL string
	// SignedIn tells who is signed in. Required.
	SignedIn SignedIn
	// Allows says whether a role may perform an action. Required.
	Allows func(role string, a Action) bool
	// SignOutPath is where the layout's sign-out button posts; "" leaves
	// the button out.
	SignOutPath string

	// The store, through one small interface per area (stores.go).
	// Required.
	Invites       InviteStore
	Accounts      AccountStore
	Stats         StatsStore // the funnel's counts of the overview
	Webhooks      WebhookStore
	Reviews       ReviewStore
	Suppressions  SuppressionStore
	TemplateStore TemplateStore // the shop's templates, which Templates renders
	Reports       ReportStore   // the complaints of the overview

	// People names the people in the histories. Optional.
	People Directory
	// Clients and PeopleStore are the API clients and the people owners
	// manage in the settings; NewClientSecret makes a client's secret and
	// the hash kept of it. Optional: without them the settings leave
	// those parts out.
	Clients         ClientStore
	PeopleStore     PeopleStore
	NewClientSecret func() (secret string, hash []byte)

	// Templates renders the template previews and test sends and checks
	// a shop's templates. Required.
	Templates *templates.Library
	// SampleFeedbackURL and SampleUnsubscribeURL are the signed links of
	// templates.SampleEventID, for previews: they look real and lead to
	// the page of a link whose event is gone.
	SampleFeedbackURL, SampleUnsubscribeURL string

	// WebhookSecrets seals the signing secrets of the endpoints owners
	// make. Required.
	WebhookSecrets *webhook.SecretBox
	// WebhookAllowPrivate admits endpoint URLs on http and on private
	// addresses (TOUCHPOINT_WEBHOOK_ALLOW_PRIVATE: development and tests).
	WebhookAllowPrivate bool

	// TemporalUIURL is the Temporal Web UI (TOUCHPOINT_TEMPORAL_UI_URL)
	// and Namespace the namespace of the invite workflows: an invite's
	// page links to its workflow there. "" leaves the link out.
	TemporalUIURL, Namespace string
	// Cancelled is told of every invite or reminder a person cancelled,
	// so its workflow hears of it at once (the API's signal delivery).
	// Optional: the workflow also finds the cancel in PostgreSQL before
	// it sends.
	Cancelled func(eventID string)
	// Retried is told after a person retried an invite, to wake the
	// outbox starter. Optional: it also sweeps.
	Retried func()

	// Reads sends the reads of a person's pages to the read replica where
	// it may (the lists and counts a page shows), and is told of their
	// changes, after which their pages read the primary for a while.
	// Optional: without it every read goes to the primary.
	Reads ReadRouter

	// Logger gets the internal errors behind a 500; nil discards.
	Logger *slog.Logger
	// Report hands the internal error behind an answer to the request
	// log of whoever serves the console. Optional.
	Report func(r *http.Request, err error)
	// HSTS: the base URL is https.
	HSTS bool
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Handler serves the console below Prefix.
type Handler struct {
	opts   Options
	origin string // scheme://host of BaseURL
	base   string // BaseURL without its trailing slash
	mux    *http.ServeMux
	views  *view.Views
	log    *slog.Logger
	now    func() time.Time
}

// New builds the console. It fails when a template or a locale table
// does not parse, and panics without its required options (a wiring
// mistake).
func New(opts Options) (*Handler, error) {
	if opts.SignedIn == nil || opts.Allows == nil || opts.Invites == nil || opts.Accounts == nil || opts.Stats == nil || opts.Webhooks == nil || opts.Reviews == nil ||
		opts.Suppressions == nil || opts.TemplateStore == nil || opts.Reports == nil || opts.BaseURL == "" ||
		opts.Templates == nil || opts.WebhookSecrets == nil {
		panic("console.New: BaseURL, SignedIn, Allows, Invites, Accounts, Stats, Webhooks, Reviews, Suppressions, TemplateStore, Reports, " +
			"Templates and WebhookSecrets are required")
	}
	u, err := url.Parse(opts.BaseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("console: base URL %q is not an absolute URL", opts.BaseURL)
	}
	h := &Handler{opts: opts, origin: u.Scheme + "://" + u.Host, base: strings.TrimRight(opts.BaseURL, "/"),
		mux: http.NewServeMux(), log: opts.Logger, now: opts.Now}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.views, err = view.Load(funcs, opts.HSTS); err != nil {
		return nil, err
	}
	for _, rt := range h.routes() {
		h.mux.Handle(rt.method+" "+strings.TrimSuffix(Prefix, "/")+rt.path, h.guard(rt))
	}
	h.mux.HandleFunc("GET "+Prefix+"assets/{name}", h.views.ServeAsset)
	h.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) { h.notFound(w, r) })
	return h, nil
}

// ServeHTTP serves a request below Prefix.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Action is what a route does, for the role check. The names are the
// actions of the people who sign in.
type Action string

// The console's actions.
const (
	Read           Action = "read"
	ChooseLanguage Action = "self.language"
	ReplyReview    Action = "review.reply"
	ReportReview   Action = "review.report"
	EditTemplates  Action = "template.edit"
	SendTest       Action = "template.test"
	CancelInvite   Action = "invite.cancel"
	RetryInvite    Action = "invite.retry"
	RetryWebhook   Action = "webhook.retry"
	ReplayWebhook  Action = "webhook.replay"
	ManagePeople   Action = "people.manage"
	ManageClients  Action = "clients.manage"
	ManageWebhooks Action = "webhook.manage"
	EditBranding   Action = "branding.edit"
	EditSettings   Action = "settings.edit"
	Suppress       Action = "suppression.add"
	Unsuppress     Action = "suppression.lift"
)

// Allows is the role check of the console's routes: the one table of
// package people.
func Allows(role string, a Action) bool { return people.Allows(people.Role(role), people.Action(a)) }

// route is one page or form of the console: the only list of what it
// answers and what each answer needs the person to be allowed.
type route struct {
	method, path string // path below the console, e.g. "/reviews/{id}"
	action       Action
	handle       func(w http.ResponseWriter, r *http.Request, p Person)
}

// guard runs a route's handler for a signed-in person whose role allows
// the route's action; a request that may change something must also come
// from the console's own origin with the session's CSRF token.
func (h *Handler) guard(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := h.opts.SignedIn(w, r)
		if !ok {
			return
		}
		r = r.WithContext(people.WithActor(context.WithValue(r.Context(), personKey{}, p), people.PersonActor(p.ID)))
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if !h.sameOrigin(r) || !ValidCSRF(r, p.CSRFToken) {
				h.forbidden(w, r)
				return
			}
		}
		if !h.opts.Allows(p.Role, rt.action) {
			h.forbidden(w, r)
			return
		}
		if rd := h.opts.Reads; rd != nil && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			r = r.WithContext(rd.Reads(r.Context(), p.ID))
		} else if rd != nil {
			// Once the change is made, the person's pages read the
			// primary for a while: they see what they changed.
			defer rd.Wrote(p.ID)
		}
		rt.handle(w, r, p)
	})
}

// ReadRouter is the part of the read replica (a *pg.Replica) the console
// uses, as the API does: it marks a request that only reads, for the
// person who made it, and is told of a person's changes.
type ReadRouter interface {
	Reads(ctx context.Context, client string) context.Context
	Wrote(client string)
}

type personKey struct{}

// personFrom is the person a guarded request was made by.
func personFrom(ctx context.Context) (Person, bool) {
	p, ok := ctx.Value(personKey{}).(Person)
	return p, ok
}

// sameOrigin reports whether a request that changes something comes from
// the console's own pages: its Origin header (which browsers send with
// every POST) is the base URL's origin.
func (h *Handler) sameOrigin(r *http.Request) bool {
	return r.Header.Get("Origin") == h.origin
}

// errNotFound is an object the person's account does not have.
var errNotFound = errors.New("not found")

// fail answers an error: 404 for errNotFound, else a 500 page that hides
// the error, which is logged.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errNotFound) {
		h.notFound(w, r)
		return
	}
	if h.opts.Report != nil {
		h.opts.Report(r, err)
	}
	h.log.ErrorContext(r.Context(), "console", "path", r.URL.Path, "error", err.Error())
	h.errorPage(w, r, http.StatusInternalServerError, "error_internal")
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.errorPage(w, r, http.StatusNotFound, "error_not_found")
}

func (h *Handler) forbidden(w http.ResponseWriter, r *http.Request) {
	h.errorPage(w, r, http.StatusForbidden, "error_forbidden")
}

// seeOther sends the browser on after a form did its work (Post/Redirect/
// Get), to path below the console with the notice done shown there.
func (h *Handler) seeOther(w http.ResponseWriter, r *http.Request, path string, done string) {
	u, fragment, _ := strings.Cut(strings.TrimSuffix(Prefix, "/")+path, "#")
	if done != "" {
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		u += sep + "done=" + url.QueryEscape(done)
	}
	if fragment != "" { // after the query, or the query would be part of it
		u += "#" + fragment
	}
	http.Redirect(w, r, u, http.StatusSeeOther)
}
