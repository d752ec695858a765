package cli

import (
	"encoding/binary"
	"syscall"
)

// machineMemory is the machine's memory (hw.memsize), 0 when unknown.
func machineMemory() int64 {
	s, err := syscall.Sysctl("hw.memsize")
	if err != nil {
		return 0
	}
	// The value is a raw little-endian uint64, from which Sysctl dropped a trailing zero byte.
	b := append([]byte(s), make([]byte, 8)...)[:8]
	return int64(binary.LittleEndian.Uint64(b))
}
