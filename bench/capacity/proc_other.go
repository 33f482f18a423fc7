//go:build !linux

package capacity

import "errors"

// LoadAverage: only Linux tells it here.
func LoadAverage() float64 { return -1 }

// treeCPUSeconds: only Linux tells it here.
func treeCPUSeconds(int) (float64, error) {
	return 0, errors.New("the CPU time of another process is read on Linux only")
}
