package capacity

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LoadAverage is the machine's load average over the last minute, -1
// where it cannot be read.
func LoadAverage() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// userHZ is the unit of the times in /proc/<pid>/stat: Linux reports
// them in USER_HZ, 100 a second on every architecture Go supports.
const userHZ = 100

// procStat is what a run reads of /proc/<pid>/stat.
type procStat struct {
	ppid int
	// ticks is the CPU time of the process and of its children that
	// have ended (utime, stime, cutime, cstime).
	ticks int64
}

func readProcStat(path string) (procStat, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	// The command name, in parentheses, may hold spaces: the fields
	// start after the last ")".
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("%s: no command name", path)
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("%s: %d fields", path, len(f))
	}
	var s procStat
	if s.ppid, err = strconv.Atoi(f[1]); err != nil {
		return s, fmt.Errorf("%s: ppid: %w", path, err)
	}
	for _, field := range f[11:15] {
		v, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return s, fmt.Errorf("%s: times: %w", path, err)
		}
		s.ticks += v
	}
	return s, nil
}

// treeCPUSeconds is the CPU time, in seconds, of the process pid and of
// every process below it, those that have ended included: a PostgreSQL
// server's, with its backends.
func treeCPUSeconds(pid int) (float64, error) {
	root, err := readProcStat(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	paths, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, err
	}
	stats := map[int]procStat{}
	for _, p := range paths {
		id, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		if s, err := readProcStat(p); err == nil { // a process may end meanwhile
			stats[id] = s
		}
	}
	ticks := root.ticks
	var below func(parent int)
	below = func(parent int) {
		for id, s := range stats {
			if s.ppid == parent && id != parent {
				ticks += s.ticks
				below(id)
			}
		}
	}
	below(pid)
	return float64(ticks) / userHZ, nil
}
