package admincli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/stats"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/statsdb"
)

const statsUsage = `usage:
  touchpoint stats --account acc-… [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--time-zone Europe/Berlin]
      the funnel of the events accepted from --from to --to (both included; default the last
      30 days up to today) in the time zone (default UTC): each step's count, its share of the
      accepted events and a bar`

// RunStats is `touchpoint stats`: the funnel of an account.
func (env *Env) RunStats(ctx context.Context, args []string) error {
	fs := env.flags("stats")
	account := fs.String("account", "", "account id (acc-…, required)")
	from := fs.String("from", "", "first day, YYYY-MM-DD (default: 29 days before --to)")
	to := fs.String("to", "", "last day, YYYY-MM-DD, included (default: today)")
	tz := fs.String("time-zone", "", "IANA time zone the days are cut in (default UTC)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return errors.New(statsUsage)
	}
	if !store.ValidID("acc", *account) {
		return errors.New("stats: --account must be an account id (acc-…)")
	}
	if *to == "" {
		loc, err := time.LoadLocation(*tz)
		if err != nil {
			loc = time.UTC // ParsePeriod names the problem
		}
		*to = time.Now().In(loc).Format(time.DateOnly)
	}
	if *from == "" {
		if t, err := time.Parse(time.DateOnly, *to); err == nil {
			*from = t.AddDate(0, 0, -29).Format(time.DateOnly)
		}
	}
	p, problems := stats.ParsePeriod(*from, *to, *tz)
	if len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, pr := range problems {
			msgs[i] = "--" + map[string]string{"from": "from", "to": "to", "timeZone": "time-zone"}[pr.Param] + " " + pr.Message
		}
		return fmt.Errorf("stats: %s", strings.Join(msgs, "; "))
	}
	_, st, err := env.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	if _, err := st.Accounts.Account(ctx, *account); err != nil {
		return fmt.Errorf("stats: account %s: %w", *account, err)
	}
	groups, err := st.Stats.InviteStats(ctx, statsdb.Query{AccountID: *account, From: p.Start(), To: p.End(),
		TimeZone: p.TimeZone(), GroupBy: stats.GroupDay})
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	return stats.WriteFunnel(env.Stdout, *account, p, stats.Total(groups))
}
