package main

import (
	"context"

	"github.com/touchpoint/touchpoint/metrics"
	"github.com/touchpoint/touchpoint/store/reportdb"
)

// mailLastDay is reportdb's MailLastDay as the metrics read it.
func mailLastDay(st *reportdb.Store) func(ctx context.Context) ([]metrics.AccountMail, error) {
	return func(ctx context.Context) ([]metrics.AccountMail, error) {
		accounts, err := st.MailLastDay(ctx)
		out := make([]metrics.AccountMail, len(accounts))
		for i, a := range accounts {
			out[i] = metrics.AccountMail{Account: a.AccountID, Sent: a.Sent, Complaints: a.Complaints}
		}
		return out, err
	}
}
