//go:build !linux

package e2e_test

import "syscall"

// sysProcAttr: outside Linux children are killed by the tests' cleanup.
func sysProcAttr() *syscall.SysProcAttr { return nil }
