package console

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/console/view"
)

// TestEveryRuleProblemIsSaidInEveryLanguage: each kind of problem the
// rules name has its text in each language of the console, with its
// values filled in; an error of no known kind keeps its own words.
func TestEveryRuleProblemIsSaidInEveryLanguage(t *testing.T) {
	v, err := view.Load(funcs, false)
	require.NoError(t, err)
	texts := v.Texts
	for _, lang := range view.Languages() {
		d := page{texts: texts[lang]}
		for _, p := range ruleProblems {
			s, err := d.T(p.key, p.pairs...)
			require.NoError(t, err, "%s: %s", lang, p.key)
			assert.NotContains(t, s, "{", "%s: %s has a value left unfilled", lang, p.key)
		}
	}
	en := func(key string, pairs ...any) string { s, _ := page{texts: texts["en"]}.T(key, pairs...); return s }
	assert.Equal(t, "At most 180 days.", sayProblem(en, ruleProblemOf(t, "problem_delay_too_long")))
	assert.Equal(t, "no kind", sayProblem(en, errors.New("no kind")))
}

// ruleProblemOf is an error of the kind whose text is key.
func ruleProblemOf(t *testing.T, key string) error {
	for _, p := range ruleProblems {
		if p.key == key {
			return p.kind
		}
	}
	t.Fatalf("no rule problem says %s", key)
	return nil
}

// TestEachKindOnce: a window with two wrong times says so once.
func TestEachKindOnce(t *testing.T) {
	err := errors.Join(ruleProblemOf(t, "problem_time_of_day"), ruleProblemOf(t, "problem_time_of_day"),
		ruleProblemOf(t, "problem_time_zone"))
	said := sayProblem(func(key string, _ ...any) string { return "<" + key + ">" }, err)
	assert.Equal(t, "<problem_time_of_day> <problem_time_zone>", said)
	assert.Equal(t, 1, strings.Count(said, "time_of_day"))
}
