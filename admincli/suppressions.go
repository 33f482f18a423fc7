package admincli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/touchpoint/touchpoint/contact"
	"github.com/touchpoint/touchpoint/invite"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/suppressiondb"
)

const suppressionsUsage = `usage:
  touchpoint suppressions import --account acc-… [--reason manual|unsubscribed|bounced|complained] FILE
      (the flags may also follow FILE) FILE holds one address a line (an email, or a mobile number in E.164); "-" reads standard input.
      Blank lines and lines starting with # are skipped; addresses already on the list stay as they are`

// RunSuppressions is `touchpoint suppressions import`.
func (env *Env) RunSuppressions(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "import" {
		return errors.New(suppressionsUsage)
	}
	fs := env.flags("suppressions import")
	account := fs.String("account", "", "account id (acc-…, required)")
	reason := fs.String("reason", string(invite.Manual), "reason of the imported entries")
	files, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return err
	}
	switch {
	case !store.ValidID("acc", *account):
		return errors.New("suppressions import: --account must be an account id (acc-…)")
	case !invite.SuppressionReason(*reason).Valid():
		return fmt.Errorf("suppressions import: unknown reason %q (manual, unsubscribed, bounced or complained)", *reason)
	case len(files) != 1:
		return errors.New(suppressionsUsage)
	}
	in, err := openInput(files[0])
	if err != nil {
		return fmt.Errorf("suppressions import: %w", err)
	}
	defer in.Close()
	_, st, err := env.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	if _, err := st.Accounts.Account(ctx, *account); err != nil {
		return fmt.Errorf("suppressions import: account %s: %w", *account, err)
	}
	n, err := importSuppressions(ctx, st.Suppressions, *account, invite.SuppressionReason(*reason), in, env.Stderr)
	fmt.Fprintf(env.Stdout, "%d added, %d already listed, %d refused\n", n.added, n.existing, n.refused)
	return err
}

// importCounts is what an import did.
type importCounts struct{ added, existing, refused int }

// importSuppressions adds every address of in, one a line. An address
// that is not one is reported on errs with its line number and skipped;
// each entry commits on its own, so an interrupted import can be run again.
func importSuppressions(ctx context.Context, st *suppressiondb.Store, account string, reason invite.SuppressionReason,
	in io.Reader, errs io.Writer) (importCounts, error) {
	var n importCounts
	sc := bufio.NewScanner(in)
	for line := 1; sc.Scan(); line++ {
		raw := strings.TrimSpace(sc.Text())
		if raw == "" || strings.HasPrefix(raw, "#") {
			continue
		}
		addr, medium, err := contact.Normalize(raw)
		if err != nil {
			fmt.Fprintf(errs, "line %d: address %s\n", line, err)
			n.refused++
			continue
		}
		_, created, err := st.AddSuppressionBy(ctx, account, addr, medium, reason, suppressiondb.ActorOperator)
		if err != nil {
			return n, fmt.Errorf("line %d: %w", line, err)
		}
		if created {
			n.added++
		} else {
			n.existing++
		}
	}
	return n, sc.Err()
}

// openInput opens a named file, or standard input for "-".
func openInput(name string) (io.ReadCloser, error) {
	if name == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(name)
}
