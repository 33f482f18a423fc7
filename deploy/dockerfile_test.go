package deploy_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct{ cmd, args string }

// stage is one FROM … [AS name] of a multi-stage Dockerfile.
type stage struct {
	base, name string
	instrs     []instruction
}

func (s stage) all(cmd string) []string {
	var out []string
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

func (s stage) last(cmd string) string {
	all := s.all(cmd)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1]
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	require.NoError(t, err)
	return string(b)
}

func parseDockerfile(t *testing.T) []stage {
	t.Helper()
	var stages []stage
	var line strings.Builder
	for _, l := range strings.Split(readFile(t, "Dockerfile"), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || (l == "" && line.Len() == 0) {
			continue // comments (and parser directives) and blank lines
		}
		if rest, ok := strings.CutSuffix(l, `\`); ok {
			line.WriteString(rest + " ")
			continue
		}
		line.WriteString(l)
		cmd, args, _ := strings.Cut(line.String(), " ")
		line.Reset()
		in := instruction{strings.ToUpper(cmd), strings.Join(strings.Fields(args), " ")}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") { // --platform=…
				f = f[1:]
			}
			require.NotEmpty(t, f, "FROM without an image")
			st := stage{base: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
			continue
		}
		require.NotEmpty(t, stages, "%s before the first FROM", in.cmd)
		stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, in)
	}
	return stages
}

// execForm reads an instruction in JSON (exec) form.
func execForm(t *testing.T, args string) []string {
	t.Helper()
	var v []string
	require.NoError(t, json.Unmarshal([]byte(args), &v), "not in exec form: %s", args)
	return v
}

// dockerfileEntrypoint is the path of the binary in the image.
func dockerfileEntrypoint(t *testing.T) string {
	t.Helper()
	stages := parseDockerfile(t)
	ep := execForm(t, stages[len(stages)-1].last("ENTRYPOINT"))
	require.Len(t, ep, 1, "the entrypoint is the touchpoint binary alone; the command is the subcommand")
	return ep[0]
}

// makeRecipe returns the commands of a Makefile target.
func makeRecipe(t *testing.T, target string) string {
	t.Helper()
	var recipe []string
	in := false
	for _, l := range strings.Split(readFile(t, "Makefile"), "\n") {
		switch {
		case strings.HasPrefix(l, target+":"):
			in = true
		case in && strings.HasPrefix(l, "\t"):
			recipe = append(recipe, strings.TrimSpace(l))
		case in:
			in = false
		}
	}
	require.NotEmpty(t, recipe, "Makefile has no target %s", target)
	return strings.Join(recipe, "\n")
}

func TestDockerfileBuildsTheMakefilesProductionBinary(t *testing.T) {
	t.Parallel()
	stages := parseDockerfile(t)
	require.GreaterOrEqual(t, len(stages), 2, "a multi-stage build")
	final := stages[len(stages)-1]

	// The final stage copies one file, the binary, from the build stage.
	copies := final.all("COPY")
	require.Len(t, copies, 1, "the final stage holds the binary only")
	m := regexp.MustCompile(`^--from=(\S+) (\S+) (\S+)$`).FindStringSubmatch(copies[0])
	require.NotNil(t, m, "COPY --from=<build stage> <binary> <path>: %s", copies[0])
	var build stage
	for _, st := range stages[:len(stages)-1] {
		if st.name == m[1] {
			build = st
		}
	}
	require.NotEmpty(t, build.base, "no build stage named %s", m[1])
	assert.Equal(t, dockerfileEntrypoint(t), m[3], "the entrypoint is the copied binary")

	// The build stage: Go from go.mod on bookworm, running `make build-prod`.
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(readFile(t, "go.mod"))
	require.NotNil(t, goVersion, "go.mod has no go directive")
	assert.True(t, strings.HasPrefix(build.base, "golang:"+goVersion[1]+"-bookworm"),
		"the builder %s runs the Go of go.mod (%s) on bookworm", build.base, goVersion[1])
	runs := strings.Join(build.all("RUN"), "\n")
	assert.Contains(t, runs, "make build-prod", "the image builds what `make build-prod` builds")
	assert.NotContains(t, runs, "go build", "building by hand could drift from the Makefile")
	assert.Contains(t, runs, "--mount=type=cache,target=/go/pkg/mod", "a cache for the modules")
	assert.Contains(t, runs, "--mount=type=cache,target=/root/.cache/go-build", "a cache for the build")

	// The Makefile target: static, without the embedded Temporal server
	// (nodev), written where the final stage copies it from.
	recipe := makeRecipe(t, "build-prod")
	assert.Contains(t, recipe, "CGO_ENABLED=0", "a static binary, for a base image without libc")
	assert.Regexp(t, `-tags[= ]["']?nodev\b`, recipe, "the production build leaves `touchpoint dev` out")
	out := regexp.MustCompile(`-o (\S+)`).FindStringSubmatch(recipe)
	require.NotNil(t, out, "build-prod names its output with -o")
	assert.Equal(t, path.Join(build.last("WORKDIR"), out[1]), m[2], "the final stage copies the binary build-prod writes")

	// The final stage: small, nothing run in it, not root.
	assert.NotContains(t, final.base, "golang", "the final stage is not the build image")
	assert.Empty(t, final.all("RUN"))
	user := final.last("USER")
	uid, _, _ := strings.Cut(user, ":")
	assert.False(t, user == "" || uid == "0" || uid == "root", "the image must run as a non-root user, not %q", user)

	// Configuration comes at run time; nothing secret in the image.
	for _, st := range stages {
		for _, in := range st.instrs {
			if in.cmd == "ENV" || in.cmd == "ARG" {
				assert.NotRegexp(t, `(?i)secret|password|token|key`, in.args, "%s in the Dockerfile", in.cmd)
			}
		}
	}

	ignored := strings.Fields(readFile(t, ".dockerignore"))
	for _, p := range []string{".git", "bin", ".touchpoint", ".env"} {
		assert.Contains(t, ignored, p, ".dockerignore must keep %s out of the build context", p)
	}
}

// TestProductionBuildLeavesTheDevServerOut checks what the nodev tag of
// build-prod does: no embedded Temporal server and no Temporal UI server
// in the binary (the default build, for `touchpoint dev`, has both).
func TestProductionBuildLeavesTheDevServerOut(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go") // `go test` puts its own go first in PATH
	if err != nil {
		t.Skip("no go command in PATH")
	}
	deps := func(tags ...string) string {
		cmd := exec.Command(goTool, append(append([]string{"list"}, tags...), "-deps", "./cmd/touchpoint")...)
		cmd.Dir = repoRoot
		out, err := cmd.Output()
		require.NoError(t, err, "go list %v", tags)
		return string(out)
	}
	embedded := regexp.MustCompile(`(?m)^(go\.temporal\.io/server/|github\.com/temporalio/ui-server/)`)
	assert.Regexp(t, embedded, deps(), "the default build embeds the dev server (else this test checks nothing)")
	prod := deps("-tags", "nodev")
	assert.NotRegexp(t, embedded, prod, "the nodev build must not contain the embedded Temporal server or UI")
	// The Kubernetes manifests' tests build with kustomize and the
	// Kubernetes API types; the binary must not.
	assert.NotRegexp(t, `(?m)^(k8s\.io/|sigs\.k8s\.io/)`, prod, "the nodev build must not link kustomize or the Kubernetes API")
	assert.Contains(t, prod, "github.com/touchpoint/touchpoint/apiserver\n")
}
