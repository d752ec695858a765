package cli

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// machineMemory is the memory this process may use: the machine's, or its cgroup's limit when
// that is lower (a container). 0 when unknown.
func machineMemory() int64 {
	var info syscall.Sysinfo_t
	total := int64(0)
	if syscall.Sysinfo(&info) == nil {
		total = int64(info.Totalram) * int64(info.Unit)
	}
	if limit := cgroupMemoryLimit(); limit > 0 && (total == 0 || limit < total) {
		total = limit
	}
	return total
}

// cgroupMemoryLimit reads the memory limit of this process's cgroup, v2 or v1; 0 when there
// is none.
func cgroupMemoryLimit() int64 {
	for _, path := range []string{
		"/sys/fs/cgroup/memory.max",                   // cgroup v2
		"/sys/fs/cgroup/memory/memory.limit_in_bytes", // cgroup v1
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0
		}
		// v1 says "no limit" with a huge number, which is never below the machine's memory.
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 0
}
