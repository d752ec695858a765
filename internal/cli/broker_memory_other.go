//go:build !linux && !darwin

package cli

// machineMemory is unknown here: the default budget is then none (0).
func machineMemory() int64 { return 0 }
