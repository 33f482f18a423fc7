package console

import (
	"errors"
	"strings"

	"github.com/touchpoint/touchpoint/brand"
	"github.com/touchpoint/touchpoint/sendtime"
	"github.com/touchpoint/touchpoint/webhook"
)

// ruleProblems are the kinds of problem that the rule packages name
// (errors.Is), each with the key of the text that says it in the
// person's language. The rules' own errors are English and written for
// API clients; a form shows these instead.
var ruleProblems = []struct {
	kind  error
	key   string
	pairs []any // the text's values
}{
	{sendtime.ErrDuration, "problem_duration", nil},
	{sendtime.ErrDelayTooLong, "problem_delay_too_long", []any{"days", int(sendtime.MaxDelay.Hours() / 24)}},
	{sendtime.ErrReminderTooLong, "problem_reminder_too_long", []any{"days", int(sendtime.MaxReminderDelay.Hours() / 24)}},
	{sendtime.ErrTimeOfDay, "problem_time_of_day", nil},
	{sendtime.ErrTimeZone, "problem_time_zone", nil},
	{sendtime.ErrWindowNoDuration, "problem_window_no_duration", nil},
	{webhook.ErrURLForm, "problem_url_form", []any{"max", webhook.MaxURLLength}},
	{webhook.ErrURLNotHTTPS, "problem_url_https", nil},
	{webhook.ErrURLNotPublic, "problem_url_public", nil},
	{brand.ErrDisplayNameEmpty, "problem_display_name_empty", nil},
	{brand.ErrDisplayNameTooLong, "problem_display_name_too_long", []any{"max", brand.MaxDisplayName}},
	{brand.ErrDisplayNameControls, "problem_display_name_controls", nil},
	{brand.ErrColor, "problem_color", nil},
	{brand.ErrLogoURL, "problem_logo_url", nil},
	{brand.ErrLogoURLTooLong, "problem_logo_url_too_long", []any{"max", brand.MaxURL}},
	{brand.ErrReplyTo, "problem_reply_to", nil},
}

// sayProblem says err in the person's language (t): the text of each of
// its kinds, once, in the order of ruleProblems. An error of no kind
// there keeps its own words.
func sayProblem(t func(key string, pairs ...any) string, err error) string {
	var said []string
	for _, p := range ruleProblems {
		if errors.Is(err, p.kind) {
			said = append(said, t(p.key, p.pairs...))
		}
	}
	if len(said) == 0 {
		return err.Error()
	}
	return strings.Join(said, " ")
}
