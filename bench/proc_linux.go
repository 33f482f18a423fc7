package bench

import "syscall"

// childProcAttr makes the kernel end the dev child with SIGTERM when the
// thread that started it dies, so a killed bench (or test) leaves no
// stack running behind it.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
