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

	"github.com/touchpoint/touchpoint/auth"
	"github.com/touchpoint/touchpoint/authserver"
	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/internal/secretkey"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/authdb"
	"github.com/touchpoint/touchpoint/text"
)

const clientsUsage = `usage:
  touchpoint clients create --account acc-… [--group full|events|readonly] [--name N] [--json]
  touchpoint clients link --account acc-… --issuer URL --client-id ID [--group full|events|readonly] [--name N] [--json]
  touchpoint clients list --account acc-… [--json]
  touchpoint clients delete cli-…
  touchpoint clients revoke-tokens cli-…`

// clientsFlags are the flags of every `clients` subcommand.
type clientsFlags struct {
	fs                   *flag.FlagSet
	account, group, name string
	asJSON               bool
	issuer, extID        string // link only
}

// RunClients is `touchpoint clients`.
func (env *Env) RunClients(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(clientsUsage)
	}
	sub, args := args[0], args[1:]
	f := clientsFlags{fs: env.flags("clients " + sub)}
	f.fs.StringVar(&f.account, "account", "", "account id (acc-…)")
	f.fs.StringVar(&f.group, "group", auth.GroupFull, "access group: full, events or readonly")
	f.fs.StringVar(&f.name, "name", "", "a name to recognise the client by")
	f.fs.BoolVar(&f.asJSON, "json", false, "print JSON")
	if sub == "link" {
		f.fs.StringVar(&f.issuer, "issuer", "", "the external issuer, exactly as the iss of its tokens")
		f.fs.StringVar(&f.extID, "client-id", "", "the client's id at that issuer (azp or client_id of its tokens)")
	}
	if err := f.fs.Parse(args); err != nil {
		return err
	}
	cfg, st, err := env.OpenStore(ctx, true)
	if err != nil {
		return err
	}
	defer st.DB().Close()

	switch sub {
	case "create":
		return env.createClient(ctx, cfg, st, f)
	case "link":
		return linkClient(ctx, env, cfg, st, f.account, strings.TrimSpace(f.issuer), strings.TrimSpace(f.extID), f.name, f.group, f.asJSON)
	case "list":
		return env.listClients(ctx, st, f)
	case "delete", "revoke-tokens":
		if f.fs.NArg() != 1 {
			return fmt.Errorf("usage: touchpoint clients %s cli-…", sub)
		}
		c, err := clientByAnyID(ctx, st, f.fs.Arg(0))
		if err != nil {
			return err
		}
		if sub == "delete" {
			if err := st.Auth.DeleteClient(ctx, c.ID); err != nil {
				return fmt.Errorf("delete client: %w", err)
			}
			fmt.Fprintf(env.Stdout, "client %s deleted\n", f.fs.Arg(0))
			return nil
		}
		nb, err := st.Auth.RevokeTokens(ctx, c.ID)
		if err != nil {
			return fmt.Errorf("revoke tokens: %w", err)
		}
		fmt.Fprintf(env.Stdout, "tokens of client %s issued before %s are revoked (not-before-policy %d)\n", f.fs.Arg(0), nb.Format(time.RFC3339), nb.Unix())
		return nil
	default:
		return errors.New(clientsUsage)
	}
}

// createClient is `clients create`: a built-in client with a new secret,
// printed once.
func (env *Env) createClient(ctx context.Context, cfg config.Config, st *store.Store, f clientsFlags) error {
	if !store.ValidID("acc", f.account) {
		return errors.New("clients create: --account must be an account id (acc-…)")
	}
	if !auth.ValidGroup(f.group) {
		return fmt.Errorf("clients create: unknown group %q (full, events or readonly)", f.group)
	}
	if err := checkName(f.name, false); err != nil {
		return fmt.Errorf("clients create: --name %w", err)
	}
	if _, err := st.Accounts.Account(ctx, f.account); err != nil {
		return fmt.Errorf("clients create: account %s: %w", f.account, err)
	}
	secret, hash := authserver.NewClientSecret(secretkey.Derive(cfg.SecretKey, secretkey.ClientSecret))
	c, err := st.Auth.CreateClient(ctx, f.account, f.name, f.group, hash)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	if f.asJSON {
		return jsonOut(env.Stdout).Encode(map[string]string{"accountId": c.AccountID, "clientId": c.ClientID, "clientSecret": secret})
	}
	fmt.Fprintf(env.Stdout, "client id:     %s\nclient secret: %s\naccess group:  %s\nThe secret is shown only now; store it safely.\n", c.ClientID, secret, c.AccessGroup)
	return nil
}

// listClients is `clients list`.
func (env *Env) listClients(ctx context.Context, st *store.Store, f clientsFlags) error {
	if !store.ValidID("acc", f.account) {
		return errors.New("clients list: --account must be an account id (acc-…)")
	}
	cs, err := st.Auth.ListClients(ctx, f.account)
	if err != nil {
		return fmt.Errorf("list clients: %w", err)
	}
	if f.asJSON {
		type row struct {
			ID          string    `json:"id"`
			ClientID    string    `json:"clientId"`
			Name        string    `json:"name"`
			AccessGroup string    `json:"accessGroup"`
			Issuer      string    `json:"issuer,omitempty"`
			NotBefore   time.Time `json:"notBefore"`
			CreatedAt   time.Time `json:"createdAt"`
		}
		rows := make([]row, 0, len(cs))
		for _, c := range cs {
			rows = append(rows, row{c.ID, c.ClientID, c.Name, c.AccessGroup, c.Issuer, c.NotBefore, c.CreatedAt})
		}
		return jsonOut(env.Stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCLIENT ID\tNAME\tGROUP\tISSUER\tCREATED")
	for _, c := range cs {
		issuer := c.Issuer
		if issuer == "" {
			issuer = "(built-in)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%q\t%s\t%s\t%s\n", c.ID, c.ClientID, c.Name, c.AccessGroup, issuer, c.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

// linkClient admits an external issuer's client to an account: its tokens
// are accepted when the API lists the issuer in TOUCHPOINT_OIDC_ISSUER.
func linkClient(ctx context.Context, env *Env, cfg config.Config, st *store.Store, account, issuer, extID, name, group string, asJSON bool) error {
	if !store.ValidID("acc", account) {
		return errors.New("clients link: --account must be an account id (acc-…)")
	}
	if u, err := url.Parse(issuer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("clients link: --issuer must be an absolute http(s) URL, exactly the iss of the issuer's tokens")
	}
	if strings.TrimRight(issuer, "/") == cfg.AuthURL {
		return fmt.Errorf("clients link: %s is the built-in issuer; use clients create", issuer)
	}
	if extID == "" {
		return errors.New("clients link: --client-id is required")
	}
	if !auth.ValidGroup(group) {
		return fmt.Errorf("clients link: unknown group %q (full, events or readonly)", group)
	}
	if err := checkName(name, false); err != nil {
		return fmt.Errorf("clients link: --name %w", err)
	}
	if err := text.Check(text.Identifier, extID); err != nil {
		return fmt.Errorf("clients link: --client-id %w", err)
	}
	if len(extID) > 255 {
		return errors.New("clients link: --client-id must be at most 255 bytes")
	}
	if _, err := st.Accounts.Account(ctx, account); err != nil {
		return fmt.Errorf("clients link: account %s: %w", account, err)
	}
	// The API's configuration may differ from this shell's: warn only.
	if !slices.Contains(cfg.OIDCIssuers, issuer) {
		fmt.Fprintf(env.Stderr, "warning: %s is not in TOUCHPOINT_OIDC_ISSUER here (%s); the API accepts its tokens only if it is in the API's, spelt exactly alike\n",
			issuer, strings.Join(cfg.OIDCIssuers, ", "))
	}
	c, err := st.Auth.LinkClient(ctx, account, issuer, extID, name, group)
	if errors.Is(err, store.ErrConflict) {
		if prev, perr := st.Auth.ClientByIssuer(ctx, issuer, extID); perr == nil {
			return fmt.Errorf("clients link: client %q of %s is already linked, as %s to account %s: %w", extID, issuer, prev.ID, prev.AccountID, store.ErrConflict)
		}
	}
	if err != nil {
		return fmt.Errorf("clients link: %w", err)
	}
	if asJSON {
		return jsonOut(env.Stdout).Encode(map[string]string{"accountId": c.AccountID, "clientId": c.ClientID, "issuer": c.Issuer, "id": c.ID})
	}
	fmt.Fprintf(env.Stdout, "client %q of %s linked to account %s as %s (access group %s)\n", c.ClientID, c.Issuer, c.AccountID, c.ID, c.AccessGroup)
	return nil
}

// clientByAnyID finds a client by its cli-… id (built-in and linked alike).
func clientByAnyID(ctx context.Context, st *store.Store, id string) (authdb.Client, error) {
	if !store.ValidID("cli", id) {
		return authdb.Client{}, fmt.Errorf("%q is not a client id (cli-…)", id)
	}
	c, err := st.Auth.Client(ctx, id)
	if err != nil {
		return c, fmt.Errorf("client %s: %w", id, err)
	}
	return c, nil
}
