package e2e_test

import "syscall"

// sysProcAttr has the kernel kill a child when the test process dies,
// however it dies, so no process outlives a test run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
