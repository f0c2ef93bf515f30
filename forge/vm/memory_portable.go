//go:build !(amd64 || arm64 || ppc64le)

package vm

import "encoding/binary"

// load64 returns the little-endian 64-bit value at mem[addr:].
func load64(mem []byte, addr uint64) uint64 { return binary.LittleEndian.Uint64(mem[addr:]) }

// store64 writes v little-endian at mem[addr:].
func store64(mem []byte, addr, v uint64) { binary.LittleEndian.PutUint64(mem[addr:], v) }
