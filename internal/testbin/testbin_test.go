package testbin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/touchpoint/touchpoint/internal/testbin"
)

const hello = "github.com/touchpoint/touchpoint/internal/testbin/testdata/hello"

func TestBuildRunsTheBuiltProgram(t *testing.T) {
	t.Setenv("TESTBIN_HELLO", "") // build it, whatever the caller's environment says
	path := testbin.Build(t, hello, "TESTBIN_HELLO")
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(cache, "touchpoint-test"), filepath.Dir(filepath.Dir(path)), "a directory of its own checkout in the cache")
	out, err := exec.Command(path, "a", "b").Output()
	require.NoError(t, err)
	assert.Equal(t, "hello a b\n", string(out))
	assert.Equal(t, path, testbin.Build(t, hello, "TESTBIN_HELLO"), "one build per process")
}

func TestBuildTakesTheBinaryOfTheVariable(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "prebuilt")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("TESTBIN_HELLO", bin)
	assert.Equal(t, bin, testbin.Build(t, hello, "TESTBIN_HELLO"))
}
