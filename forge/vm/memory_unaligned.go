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

// load32 returns the little-endian 32-bit value at mem[addr:].
func load32(mem []byte, addr uint64) uint32 {
	return *(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(mem)), addr))
}

// store32 writes v little-endian at mem[addr:].
func store32(mem []byte, addr uint64, v uint32) {
	*(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(mem)), addr)) = v
}

// load16 returns the little-endian 16-bit value at mem[addr:].
func load16(mem []byte, addr uint64) uint16 {
	return *(*uint16)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(mem)), addr))
}

// store16 writes v little-endian at mem[addr:].
func store16(mem []byte, addr uint64, v uint16) {
	*(*uint16)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(mem)), addr)) = v
}
