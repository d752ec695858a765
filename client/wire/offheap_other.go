//go:build !linux

package wire

// Off-heap buffers are Linux's only here: elsewhere a pool asked for them uses Go's memory.
const offHeapSupported = false

func mapMemory(int) []byte { return nil }

func dropPages([]byte) {}
