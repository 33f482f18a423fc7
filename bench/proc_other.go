//go:build !linux

package bench

import (
	"errors"
	"syscall"
)

// childProcAttr: only Linux can tie the child's life to ours.
func childProcAttr() *syscall.SysProcAttr { return nil }

// loadAverage: only Linux tells it here.
func loadAverage() float64 { return -1 }

// treeCPUSeconds: only Linux tells it here.
func treeCPUSeconds(int) (float64, error) {
	return 0, errors.New("the CPU time of another process is read on Linux only")
}
