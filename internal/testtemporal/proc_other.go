//go:build unix && !linux

package testtemporal

import "syscall"

// sysProcAttr puts the helper in its own process group. Without Linux's
// parent-death signal, the helper's -watch-stdin stops it when the test
// process dies.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
