package admincli

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/touchpoint/touchpoint/authserver"
)

const keysUsage = `usage:
  touchpoint keys list [--json]       the built-in issuer's signing keys, newest first, with their state
  touchpoint keys rotate [--json]     publish a new key now; it signs once every verifier has refetched the keys
  touchpoint keys retire KID          withdraw a key (compromise): no longer published or accepted`

// RunKeys is `touchpoint keys`: the built-in issuer's signing keys, run
// against PostgreSQL directly like the other admin commands (it needs
// TOUCHPOINT_SECRET_KEY to seal a new key).
func (env *Env) RunKeys(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(keysUsage)
	}
	sub, args := args[0], args[1:]
	fs := env.flags("keys " + sub)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	want := map[string]int{"list": 0, "rotate": 0, "retire": 1}
	if n, ok := want[sub]; !ok || fs.NArg() != n {
		return errors.New(keysUsage)
	}
	cfg, st, err := env.OpenStore(ctx, true)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	issuer, err := authserver.New(ctx, env.IssuerOptions(cfg, st.Auth))
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	switch sub {
	case "list":
		keys, err := issuer.Keys(ctx)
		if err != nil {
			return fmt.Errorf("keys list: %w", err)
		}
		if *asJSON {
			return jsonOut(env.Stdout).Encode(keys)
		}
		tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KID\tSTATE\tALG\tCREATED\tSIGNS FROM\tRETIRED")
		for _, k := range keys {
			state, retired := string(k.State), ""
			// A retired key is never unsealed again, so it is unusable
			// whatever secret key sealed it: say so only of the others.
			if !k.Usable && k.State != authserver.KeyRetired {
				state += " (sealed under another secret key)"
			}
			if k.RetiredAt != nil {
				retired = k.RetiredAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.KID, state, k.Algorithm, k.CreatedAt.Format(time.RFC3339),
				k.ActiveFrom.Format(time.RFC3339), retired)
		}
		return tw.Flush()
	case "rotate":
		k, err := issuer.Rotate(ctx)
		if err != nil {
			return fmt.Errorf("keys rotate: %w", err)
		}
		if *asJSON {
			return jsonOut(env.Stdout).Encode(k)
		}
		fmt.Fprintf(env.Stdout, "key %s is published now and signs from %s, once every verifier has refetched the keys\n",
			k.KID, k.ActiveFrom.Format(time.RFC3339))
		return nil
	default: // retire
		kid := fs.Arg(0)
		if err := issuer.Retire(ctx, kid); err != nil {
			return fmt.Errorf("keys retire: %w", err)
		}
		fmt.Fprintf(env.Stdout, "key %s is retired: no longer published or accepted. Running auth replicas stop publishing it "+
			"within their reload interval (30s), and the API rejects its tokens at its next key refresh (at most %s).\n",
			kid, cfg.JWKSRefresh)
		return nil
	}
}
