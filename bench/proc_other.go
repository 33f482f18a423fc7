//go:build !linux

package bench

import "syscall"

// childProcAttr: only Linux can tie the child's life to ours.
func childProcAttr() *syscall.SysProcAttr { return nil }
