package stats

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Step is one line of the funnel: a count and its share of the accepted
// events.
type Step struct {
	Name  string
	Count int64
}

// Steps are the funnel's lines for c: the way from accepted to reviewed,
// then where the others went.
func (c Counts) Steps() []Step {
	return append(c.Way(), []Step{
		{"unsubscribed", c[Unsubscribed]},
		{"bounced", c[Bounced]},
		{"skipped", c.SkippedTotal()},
		{"failed", c[Failed]},
		{"cancelled", c[Cancelled]},
		{"waiting", c[Pending] + c[Scheduled]},
	}...)
}

// Way is the funnel's way from accepted to reviewed: accepted, sent,
// delivered, opened, reviewed.
func (c Counts) Way() []Step {
	return []Step{
		{"accepted", c[Accepted]},
		{"sent", c[Sent]},
		{"delivered", c[Delivered]},
		{"opened", c[Opened]},
		{"reviewed", c[Reviewed]},
	}
}

// barWidth is the length of the bar of all accepted events, in cells.
const barWidth = 40

// eighths draw the last cell of a bar to an eighth of a cell.
var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// Bar is n of total drawn as a bar of at most width cells, to an eighth
// of a cell; a count above zero always shows.
func Bar(n, total int64, width int) string {
	if n <= 0 || total <= 0 {
		return ""
	}
	n = min(n, total)
	units := int((n*int64(width)*8 + total/2) / total) // eighths of a cell, rounded
	units = max(units, 1)
	return strings.Repeat("█", units/8) + eighths[units%8]
}

// WriteFunnel draws the funnel of c for the period p of account as a
// table: each step's count, its share of the accepted events and a bar,
// then the review rate and the average rating.
func WriteFunnel(w io.Writer, account string, p Period, c Counts) error {
	fmt.Fprintf(w, "Funnel of %s, events accepted %s to %s (%s)\n\n", account,
		p.From.Format("2006-01-02"), p.To.Format("2006-01-02"), p.TimeZone())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\tcount\tshare\t")
	for _, s := range c.Steps() {
		share := "-"
		if c[Accepted] > 0 {
			share = strconv.FormatFloat(float64(s.Count)*100/float64(c[Accepted]), 'f', 1, 64) + "%"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t %s\n", s.Name, s.Count, share, Bar(s.Count, c[Accepted], barWidth))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rate := "-"
	if r, ok := c.ReviewRate(); ok {
		rate = strconv.FormatFloat(r*100, 'f', 1, 64) + "% of those sent"
	}
	ratings := c.Ratings()
	avg := "-"
	if a := ratings.AverageText(); a != "" {
		avg = a + " from " + strconv.FormatInt(ratings.Count, 10) + " ratings"
	}
	fmt.Fprintf(w, "\nreview rate     %s\naverage rating  %s\n", rate, avg)
	if skipped := c.Skipped(); len(skipped) > 0 {
		var parts []string
		for _, r := range slices.Sorted(maps.Keys(skipped)) {
			parts = append(parts, fmt.Sprintf("%s %d", r, skipped[r]))
		}
		fmt.Fprintf(w, "skipped, why    %s\n", strings.Join(parts, ", "))
	}
	_, err := fmt.Fprintln(w)
	return err
}
