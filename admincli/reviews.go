package admincli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/touchpoint/touchpoint/review"
	"github.com/touchpoint/touchpoint/store"
	"github.com/touchpoint/touchpoint/store/reviewdb"
	"github.com/touchpoint/touchpoint/text"
)

const reviewsUsage = `usage:
  touchpoint reviews reported [--account acc-…] [--limit N] [--json]
      The operator's queue: reviews a shop has reported, oldest report first, with the report's
      reason and note, the review's texts and whether the public still sees it (a report of
      personal data hides it at once; any other leaves it public until you decide)
  touchpoint reviews moderate --id rev-… --decision publish|remove --note TEXT [--json]
      Decide on a review (reported or not): publish shows it again and settles it (the shop
      cannot report it again until the customer changes it); remove takes it out of public view.
      The decision and its note go into the review's history and to the shop's review.moderated
      webhooks`

// RunReviews is `touchpoint reviews`: the operator's moderation.
func (env *Env) RunReviews(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(reviewsUsage)
	}
	switch args[0] {
	case "reported":
		return env.reviewsReported(ctx, args[1:])
	case "moderate":
		return env.reviewsModerate(ctx, args[1:])
	}
	return errors.New(reviewsUsage)
}

// reportedJSON is an entry of `reviews reported --json`.
type reportedJSON struct {
	ID           string                `json:"id"`
	AccountID    string                `json:"accountId"`
	EventID      string                `json:"eventId"`
	ReportReason review.Reason         `json:"reportReason"`
	ReportNote   string                `json:"reportNote"`
	ReportedAt   string                `json:"reportedAt"`
	Public       bool                  `json:"public"`
	Rating       *int                  `json:"rating"`
	Comment      string                `json:"comment"`
	Products     []reportedProductJSON `json:"products"`
}

type reportedProductJSON struct {
	Name    string `json:"name"`
	SKU     string `json:"sku,omitempty"`
	GTIN    string `json:"gtin,omitempty"`
	MPN     string `json:"mpn,omitempty"`
	Rating  int    `json:"rating"`
	Comment string `json:"comment"`
}

func (env *Env) reviewsReported(ctx context.Context, args []string) error {
	fs := env.flags("reviews reported")
	account := fs.String("account", "", "only this account's reviews (acc-…)")
	limit := fs.Int("limit", 100, "at most this many, 1–1000")
	asJSON := fs.Bool("json", false, "print one JSON object per review")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return errors.New(reviewsUsage)
	case *account != "" && !store.ValidID("acc", *account):
		return errors.New("reviews reported: --account must be an account id (acc-…)")
	case *limit < 1 || *limit > 1000:
		return errors.New("reviews reported: --limit must be from 1 to 1000")
	}
	_, st, err := env.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	rs, err := st.Reviews.ReportedReviews(ctx, *account, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := jsonOut(env.Stdout)
		for _, r := range rs {
			if err := enc.Encode(reportedOut(r)); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rs) == 0 {
		fmt.Fprintln(env.Stdout, "no reported reviews")
		return nil
	}
	for _, r := range rs {
		printReported(env.Stdout, r)
	}
	return nil
}

func reportedOut(r reviewdb.ReportedReview) reportedJSON {
	out := reportedJSON{ID: r.ID, AccountID: r.AccountID, EventID: r.EventID, ReportReason: r.ReportReason, ReportNote: r.Note,
		Public: r.Public, Comment: r.Comment, Products: []reportedProductJSON{}}
	if r.ReportedAt != nil {
		out.ReportedAt = r.ReportedAt.UTC().Format(time.RFC3339Nano)
	}
	if r.Rating != 0 {
		out.Rating = &r.Rating
	}
	for _, p := range r.Products {
		out.Products = append(out.Products, reportedProductJSON{Name: p.Name, SKU: p.SKU, GTIN: p.GTIN, MPN: p.MPN,
			Rating: p.Rating, Comment: p.Comment})
	}
	return out
}

// printReported writes one entry of the queue. Every text and key is
// quoted: they are the customer's and the shop's, and a terminal is no
// place to run them.
func printReported(out io.Writer, r reviewdb.ReportedReview) {
	shown := "still public until you decide"
	if !r.Public {
		shown = "hidden until you decide"
	}
	at := ""
	if r.ReportedAt != nil {
		at = r.ReportedAt.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(out, "%s  account %s  reported %s for %s (%s)\n", r.ID, r.AccountID, at, r.ReportReason, shown)
	if r.Note != "" {
		fmt.Fprintf(out, "  shop's note: %s\n", strconv.Quote(r.Note))
	}
	if r.Rating != 0 {
		fmt.Fprintf(out, "  rating %d/5: %s\n", r.Rating, strconv.Quote(r.Comment))
	} else if r.Comment != "" {
		fmt.Fprintf(out, "  comment: %s\n", strconv.Quote(r.Comment))
	}
	for _, p := range r.Products {
		var keys []string
		for _, k := range p.Keys() {
			keys = append(keys, string(k.Kind)+" "+strconv.Quote(k.Value))
		}
		fmt.Fprintf(out, "  product %s (%s) %d/5: %s\n", strconv.Quote(p.Name), strings.Join(keys, ", "), p.Rating, strconv.Quote(p.Comment))
	}
}

func (env *Env) reviewsModerate(ctx context.Context, args []string) error {
	fs := env.flags("reviews moderate")
	id := fs.String("id", "", "the review (rev-…, required)")
	decision := fs.String("decision", "", "publish or remove (required)")
	note := fs.String("note", "", "why: kept in the review's history and sent to the shop (required)")
	asJSON := fs.Bool("json", false, "print the outcome as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cleaned := text.Clean(text.Multiline, *note)
	switch d := review.Decision(*decision); {
	case fs.NArg() > 0:
		return errors.New(reviewsUsage)
	case !store.ValidID("rev", *id):
		return errors.New("reviews moderate: --id must be a review id (rev-…)")
	case !d.Valid():
		return errors.New("reviews moderate: --decision must be publish or remove")
	case cleaned == "":
		return errors.New("reviews moderate: --note is required: say why, for the shop and for whoever looks later")
	case review.TooLong(cleaned):
		return fmt.Errorf("reviews moderate: --note must be at most %d characters", review.MaxText)
	}
	_, st, err := env.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer st.DB().Close()
	after, changed, err := st.Reviews.ModerateReview(ctx, *id, review.Decision(*decision), cleaned)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("reviews moderate: no review %s", *id)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return jsonOut(env.Stdout).Encode(map[string]any{"id": after.ID, "status": after.Status,
			"public": after.Public, "changed": changed})
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "%s is %s already; nothing changed\n", after.ID, after.Status)
		return nil
	}
	shown := "the public sees it"
	if !after.Public {
		shown = "the public does not see it"
	}
	fmt.Fprintf(env.Stdout, "%s is now %s: %s\n", after.ID, after.Status, shown)
	return nil
}
