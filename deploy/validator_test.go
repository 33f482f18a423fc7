package deploy_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withoutValidator ends a test whose validator (promtool, Compose) is not
// installed: skipped on a developer's machine, failed under CI=true, where
// .ci/run installs every validator and a skip would pass a file no tool
// has checked.
func withoutValidator(t *testing.T, missing string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(missing + ": CI=true requires every validator")
	}
	t.Skip(missing + ": skipping only the check by this tool")
}

// TestMissingValidatorFailsUnderCI runs the validators' tests again in a
// child process whose PATH holds no validator: skipped outside CI, failed
// under CI=true.
func TestMissingValidatorFailsUnderCI(t *testing.T) {
	t.Parallel()
	if os.Getenv("TOUCHPOINT_VALIDATOR_CHILD") != "" {
		t.Skip("a child of the test: runs only the validators' tests")
	}
	for _, test := range []string{"TestPrometheusConfigWithPromtool", "TestComposeConfigWithDockerCompose"} {
		t.Run(test, func(t *testing.T) {
			t.Parallel()
			run := func(ci string) (string, error) {
				cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
				cmd.Env = []string{"PATH=" + t.TempDir(), "CI=" + ci, "TOUCHPOINT_VALIDATOR_CHILD=1"}
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			out, err := run("")
			require.NoError(t, err, out)
			assert.Contains(t, out, "--- SKIP: "+test, out)

			out, err = run("true")
			require.Error(t, err, out)
			assert.Contains(t, out, "--- FAIL: "+test, out)
			assert.Contains(t, out, "CI=true requires every validator", out)
		})
	}
}
