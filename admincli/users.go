package admincli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/console/view"
	"github.com/touchpoint/touchpoint/people"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/persondb"
	"github.com/touchpoint/touchpoint/storeset"
)

const usersUsage = `usage:
  touchpoint users create --account acc-… --email ADDRESS --role owner|editor|viewer [--json]
  touchpoint users list --account acc-… [--json]
  touchpoint users update (--email ADDRESS | --id usr-…) [--role owner|editor|viewer] [--language LANG] [--json]
      --language: the console's language the person reads in (da, de, en, es, fr, nl), or browser
  touchpoint users disable (--email ADDRESS | --id usr-…)      ends the person's sessions at once
  touchpoint users sign-out (--email ADDRESS | --id usr-…)     ends every session of the person
  touchpoint users link (--email ADDRESS | --id usr-…) --issuer URL --subject SUB
      the person signs in to the console through that OpenID Connect provider's account
  touchpoint users erase (--email ADDRESS | --id usr-…)
      forgets the person's address and sign-ins; the audit trail keeps their usr-… id`

// usersFlags are the flags of every `users` subcommand.
type usersFlags struct {
	fs                                     *flag.FlagSet
	account, email, id, role, iss, subject string
	language                               string
	asJSON                                 bool
}

// RunUsers is `touchpoint users`: the people of the console.
func (env *Env) RunUsers(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(usersUsage)
	}
	sub := args[0]
	f := usersFlags{fs: env.flags("users " + sub)}
	f.fs.StringVar(&f.account, "account", "", "account id (acc-…)")
	f.fs.StringVar(&f.email, "email", "", "the person's email address")
	f.fs.StringVar(&f.id, "id", "", "the person's id (usr-…)")
	f.fs.StringVar(&f.role, "role", "", "owner, editor or viewer")
	f.fs.StringVar(&f.language, "language", "", "the console's language of the person, or browser for their browser's")
	f.fs.StringVar(&f.iss, "issuer", "", "the OpenID Connect provider, exactly as the iss of its ID tokens")
	f.fs.StringVar(&f.subject, "subject", "", "the person's sub at that provider")
	f.fs.BoolVar(&f.asJSON, "json", false, "print JSON")
	if err := f.fs.Parse(args[1:]); err != nil {
		return err
	}
	if f.fs.NArg() > 0 {
		return errors.New(usersUsage)
	}
	cfg, st, err := env.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	ps := storeset.People(st)
	switch sub {
	case "create":
		return env.createUser(ctx, st, ps, f)
	case "list":
		return env.listUsers(ctx, ps, f)
	case "update", "disable", "sign-out", "link", "erase":
		p, err := findUser(ctx, ps, sub, f)
		if err != nil {
			return err
		}
		return env.changeUser(ctx, cfg, ps, sub, p, f)
	}
	return errors.New(usersUsage)
}

func (env *Env) createUser(ctx context.Context, st *store.Store, ps *persondb.Store, f usersFlags) error {
	if !store.ValidID("acc", f.account) {
		return errors.New("users create: --account must be an account id (acc-…)")
	}
	email, err := people.NormalizeEmail(f.email)
	if err != nil {
		return fmt.Errorf("users create: --email %w", err)
	}
	role, ok := people.ParseRole(f.role)
	if !ok {
		return fmt.Errorf("users create: --role must be owner, editor or viewer")
	}
	if _, err := st.Accounts.Account(ctx, f.account); err != nil {
		return fmt.Errorf("users create: account %s: %w", f.account, err)
	}
	p, err := ps.CreatePerson(ctx, people.Operator, f.account, email, role)
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("users create: %q is already someone's address: %w", email, err)
	}
	if err != nil {
		return fmt.Errorf("users create: %w", err)
	}
	if f.asJSON {
		return jsonOut(env.Stdout).Encode(personOut(p))
	}
	fmt.Fprintf(env.Stdout, "person %s (%q) created in account %s as %s; they sign in at the console with a link sent to that address\n",
		p.ID, p.Email, p.AccountID, p.Role)
	return nil
}

// personJSON is a person as --json prints them.
type personJSON struct {
	ID         string     `json:"id"`
	AccountID  string     `json:"accountId"`
	Email      string     `json:"email"`
	Role       string     `json:"role"`
	Language   string     `json:"language"` // "" for the browser's
	DisabledAt *time.Time `json:"disabledAt"`
	CreatedAt  time.Time  `json:"createdAt"`
}

func personOut(p persondb.Person) personJSON {
	return personJSON{ID: p.ID, AccountID: p.AccountID, Email: p.Email, Role: string(p.Role), Language: p.Language,
		DisabledAt: p.DisabledAt, CreatedAt: p.CreatedAt}
}

func (env *Env) listUsers(ctx context.Context, ps *persondb.Store, f usersFlags) error {
	if !store.ValidID("acc", f.account) {
		return errors.New("users list: --account must be an account id (acc-…)")
	}
	list, err := ps.People(ctx, f.account)
	if err != nil {
		return fmt.Errorf("users list: %w", err)
	}
	if f.asJSON {
		out := make([]personJSON, len(list))
		for i, p := range list {
			out[i] = personOut(p)
		}
		return jsonOut(env.Stdout).Encode(out)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEMAIL\tROLE\tSTATUS\tCREATED")
	for _, p := range list {
		status := "active"
		if !p.Active() {
			status = "disabled " + p.DisabledAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%q\t%s\t%s\t%s\n", p.ID, p.Email, p.Role, status, p.CreatedAt.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

// findUser finds the person a command names by --email or --id.
func findUser(ctx context.Context, ps *persondb.Store, sub string, f usersFlags) (persondb.Person, error) {
	switch {
	case (f.email == "") == (f.id == ""):
		return persondb.Person{}, fmt.Errorf("users %s: give --email or --id", sub)
	case f.id != "":
		if !store.ValidID(people.IDPrefix, f.id) {
			return persondb.Person{}, fmt.Errorf("users %s: --id must be a person's id (usr-…)", sub)
		}
		p, err := ps.PersonByID(ctx, f.id)
		if err != nil {
			return p, fmt.Errorf("users %s: %w", sub, err)
		}
		return p, nil
	}
	email, err := people.NormalizeEmail(f.email)
	if err != nil {
		return persondb.Person{}, fmt.Errorf("users %s: --email %w", sub, err)
	}
	p, err := ps.PersonByEmail(ctx, email)
	if err != nil {
		return p, fmt.Errorf("users %s: nobody has the address %q: %w", sub, email, err)
	}
	return p, nil
}

// changeUser runs update, disable, sign-out, link and erase on a person.
func (env *Env) changeUser(ctx context.Context, cfg config.Config, ps *persondb.Store, sub string, p persondb.Person, f usersFlags) error {
	by := people.Operator
	switch sub {
	case "update":
		if f.role == "" && f.language == "" {
			return errors.New("users update: give --role, --language or both")
		}
		role, ok := people.ParseRole(f.role)
		if f.role != "" && !ok {
			return errors.New("users update: --role must be owner, editor or viewer")
		}
		langs := view.Languages()
		lang := f.language
		if lang == "browser" {
			lang = ""
		} else if lang != "" && !slices.Contains(langs, lang) {
			return fmt.Errorf("users update: --language must be one of %s, or browser", strings.Join(langs, ", "))
		}
		var err error
		if f.role != "" {
			if p, err = ps.SetRole(ctx, by, p.AccountID, p.ID, role); err != nil {
				return fmt.Errorf("users update: %w", err)
			}
		}
		if f.language != "" {
			if p, err = ps.SetLanguage(ctx, by, p.AccountID, p.ID, lang); err != nil {
				return fmt.Errorf("users update: %w", err)
			}
		}
		if f.asJSON {
			return jsonOut(env.Stdout).Encode(personOut(p))
		}
		language := p.Language
		if language == "" {
			language = "their browser's language"
		}
		fmt.Fprintf(env.Stdout, "person %s (%q) is %s, and reads the console in %s\n", p.ID, p.Email, p.Role, language)
	case "disable":
		p, ended, err := ps.Disable(ctx, by, p.AccountID, p.ID)
		if err != nil {
			return fmt.Errorf("users disable: %w", err)
		}
		fmt.Fprintf(env.Stdout, "person %s (%q) is disabled; %d sessions ended\n", p.ID, p.Email, ended)
	case "sign-out":
		ended, err := ps.SignOut(ctx, by, p.AccountID, p.ID)
		if err != nil {
			return fmt.Errorf("users sign-out: %w", err)
		}
		fmt.Fprintf(env.Stdout, "person %s (%q): %d sessions ended\n", p.ID, p.Email, ended)
	case "link":
		iss, subject := strings.TrimSpace(f.iss), f.subject
		if u, err := url.Parse(iss); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return errors.New("users link: --issuer must be an absolute http(s) URL, exactly the iss of the provider's ID tokens")
		}
		if err := checkName(subject, true); err != nil || len(subject) > 255 {
			return errors.New("users link: --subject must be 1 to 255 characters without control characters")
		}
		if cfg.Console.Issuer != "" && iss != cfg.Console.Issuer {
			fmt.Fprintf(env.Stderr, "warning: the console signs in through %s here (TOUCHPOINT_CONSOLE_OIDC_ISSUER), not %s\n", cfg.Console.Issuer, iss)
		}
		if err := ps.Link(ctx, by, p.AccountID, p.ID, iss, subject); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return fmt.Errorf("users link: %q of %s is linked to someone already: %w", subject, iss, err)
			}
			return fmt.Errorf("users link: %w", err)
		}
		fmt.Fprintf(env.Stdout, "person %s (%q) signs in as %q of %s\n", p.ID, p.Email, subject, iss)
	case "erase":
		if _, err := ps.Erase(ctx, by, p.AccountID, p.ID); err != nil {
			return fmt.Errorf("users erase: %w", err)
		}
		fmt.Fprintf(env.Stdout, "person %s erased: their address and sign-ins are gone; the audit trail keeps the id\n", p.ID)
	}
	return nil
}
