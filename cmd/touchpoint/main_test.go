package main

import (
	"io"
	"os"
	"testing"
)

// runMainEnv makes the test binary run main() instead of the tests, so a
// test can start a real touchpoint process from its own binary:
//
//	cmd := exec.Command(os.Args[0], "worker") // os.Args of the child: [exe worker]
//	cmd.Env = append(os.Environ(), runMainEnv+"=1", …)
//	stdin, _ := cmd.StdinPipe() // keep it open: the child exits when it ends
//
// crash_test.go (startProcess) kills such a worker with SIGKILL in the
// middle of a send.
const runMainEnv = "TOUCHPOINT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		// The parent holds our stdin open: if it dies without cleaning up,
		// stdin ends and so does this process, instead of lingering.
		go func() {
			io.Copy(io.Discard, os.Stdin)
			os.Exit(2)
		}()
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
