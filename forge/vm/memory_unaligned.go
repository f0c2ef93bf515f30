//go:build amd64 || arm64 || ppc64le

package vm

import "unsafe"

// On little-endian machines that allow unaligned access, 8-byte memory
// operations are single machine loads and stores. Callers have checked
// that addr+8 <= len(mem); the Go compiler could not drop its own bounds
// check after that test, which costs a compare and a branch per access.

// load64 returns the little-endian 64-bit value at mem[addr:].
func load64(mem []byte, addr uint64) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(mem)), addr))
}

// store64 writes v little-endian at mem[addr:].
func store64(mem []byte, addr, v uint64) {
	*(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(mem)), addr)) = v
}
