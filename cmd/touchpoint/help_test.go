package main

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usageCommand is a command line a usage text shows: "touchpoint
// accounts create …" names the command accounts and its subcommand
// create.
var usageCommand = regexp.MustCompile(`touchpoint ([a-z][a-z-]*) ([a-z][a-z-]*)`)

// TestHelpListsEveryCommand: `touchpoint --help` lists every command, and
// for a command with subcommands, each subcommand that its own usage text
// (every `const …Usage` of this package and of package admincli) shows.
func TestHelpListsEveryCommand(t *testing.T) {
	t.Parallel()
	var help bytes.Buffer
	env := &environment{stdout: io.Discard, stderr: &help, getenv: func(string) string { return "" },
		logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	require.NoError(t, run(context.Background(), env, []string{"--help"}))
	summaries := map[string]string{}
	for _, line := range strings.Split(help.String(), "\n") {
		if name, summary, ok := strings.Cut(strings.TrimSpace(line), " "); ok && strings.HasPrefix(line, "  ") {
			summaries[name] = summary
		}
	}
	for _, c := range env.commands() {
		assert.Contains(t, summaries, c.name, "touchpoint --help lists %s", c.name)
	}

	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	adminFiles, err := filepath.Glob(filepath.Join("..", "..", "admincli", "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, adminFiles)
	files = append(files, adminFiles...)
	subs := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(gotoken.NewFileSet(), f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok || len(spec.Names) != 1 || !strings.HasSuffix(spec.Names[0].Name, "Usage") || len(spec.Values) != 1 {
				return true
			}
			lit, ok := spec.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != gotoken.STRING {
				return true
			}
			text, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			for _, m := range usageCommand.FindAllStringSubmatch(text, -1) {
				cmd, sub := m[1], m[2]
				summary, listed := summaries[cmd]
				if !assert.True(t, listed, "%s (%s) shows touchpoint %s, which --help does not list", spec.Names[0].Name, f, cmd) {
					continue
				}
				subs++
				assert.Regexp(t, `\b`+regexp.QuoteMeta(sub)+`\b`, summary,
					"%s (%s) shows touchpoint %s %s; --help's line of %s does not name %s", spec.Names[0].Name, f, cmd, sub, cmd, sub)
			}
			return true
		})
	}
	assert.Greater(t, subs, 10, "the usage texts were read")
}

// TestBadFlagsAreNamedOnStderr: every subcommand that takes flags refuses
// one it does not know before it does anything, and says which on the
// command's stderr (not the process's).
func TestBadFlagsAreNamedOnStderr(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"migrate"}, {"accounts", "create"}, {"accounts", "set-quota"}, {"accounts", "update"},
		{"accounts", "rotate-publication-key"}, {"clients", "create"}, {"customers", "erase"}, {"healthcheck"},
		{"invites", "show"}, {"keys", "list"}, {"reviews", "reported"}, {"reviews", "moderate"}, {"stats"},
		{"suppressions", "import"}, {"users", "create"}, {"worker", "versions"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			env := &environment{stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" },
				logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			err := run(context.Background(), env, append(args, "--no-such-flag"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "no-such-flag")
			assert.Contains(t, stderr.String(), "flag provided but not defined: -no-such-flag")
		})
	}
}
