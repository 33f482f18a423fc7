package testtemporal

import "syscall"

// sysProcAttr puts the helper in its own process group (so Stop reaches
// everything it runs) and has the kernel kill it when the test process
// dies, however it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
