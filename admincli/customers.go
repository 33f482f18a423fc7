package admincli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/touchpoint/touchpoint/config"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/workflows"
)

const customersUsage = `usage:
  touchpoint customers erase --account acc-… (--email ADDRESS | --reference REF) [--json]
      Erases the customer's data as POST /customers/erase does: pending invites and reminders are
      cancelled, the customer's email, names, address, mobile and reference leave their events, the
      review comments and the webhook messages about them; reviews and the suppression list are kept`

// RunCustomers is `touchpoint customers erase`.
func (env *Env) RunCustomers(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "erase" {
		return errors.New(customersUsage)
	}
	fs := env.flags("customers erase")
	account := fs.String("account", "", "account id (acc-…, required)")
	email := fs.String("email", "", "the email address of the customer's events")
	reference := fs.String("reference", "", "the client's customer reference of the customer's events")
	asJSON := fs.Bool("json", false, "print the counts as JSON")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	switch {
	case !store.ValidID("acc", *account):
		return errors.New("customers erase: --account must be an account id (acc-…)")
	case (*email == "") == (*reference == "") || fs.NArg() > 0:
		return errors.New(customersUsage)
	}
	cfg, st, err := env.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	if _, err := st.Accounts.Account(ctx, *account); err != nil {
		return fmt.Errorf("customers erase: account %s: %w", *account, err)
	}
	e, err := st.EraseCustomer(ctx, *account, store.CustomerKey{Email: *email, Reference: *reference})
	if err != nil {
		return err
	}
	told := signalCancels(ctx, cfg, env, e.Cancelled)
	if *asJSON {
		return jsonOut(env.Stdout).Encode(map[string]int{"events": e.Events, "invitesCancelled": e.InvitesCancelled,
			"remindersCancelled": e.RemindersCancelled, "invitesInFlight": e.InvitesInFlight,
			"reviewsKept": e.ReviewsKept, "suppressionsKept": e.SuppressionsKept})
	}
	printErasure(env.Stdout, e, told)
	return nil
}

func printErasure(out io.Writer, e store.Erasure, told int) {
	fmt.Fprintf(out, "erased the customer's data from %d events\n", e.Events)
	fmt.Fprintf(out, "cancelled %d invites and %d reminders", e.InvitesCancelled, e.RemindersCancelled)
	if n := len(e.Cancelled); n > 0 {
		fmt.Fprintf(out, " (%d of %d workflows told now; the others find out before they would send)", told, n)
	}
	fmt.Fprintln(out)
	if e.InvitesInFlight > 0 {
		fmt.Fprintf(out, "%d invites were being sent at that moment and could not be called back\n", e.InvitesInFlight)
	}
	fmt.Fprintf(out, "kept: %d reviews, %d suppression list entries\n", e.ReviewsKept, e.SuppressionsKept)
}

// signalCancels tells the cancelled invites' workflows, when Temporal
// answers; it returns how many were told. A workflow not told finds the
// cancel in PostgreSQL before it would send, so this only ends the runs
// sooner.
func signalCancels(ctx context.Context, cfg config.Config, env *Env, eventIDs []string) int {
	if len(eventIDs) == 0 {
		return 0
	}
	tc, err := env.DialTemporal(cfg)
	if err != nil {
		return 0
	}
	defer tc.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	hctx, hcancel := context.WithTimeout(ctx, 3*time.Second)
	defer hcancel()
	if _, err := tc.CheckHealth(hctx, &client.CheckHealthRequest{}); err != nil {
		return 0 // Temporal is not reachable from here; the workflows find out in PostgreSQL
	}
	told := 0
	for _, id := range eventIDs {
		if tc.SignalWorkflow(ctx, workflows.WorkflowID(id), "", workflows.CancelSignal, workflows.CancelRequest{Source: "cli"}) == nil {
			told++
		}
	}
	return told
}
