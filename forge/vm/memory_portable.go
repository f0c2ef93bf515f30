//go:build !(amd64 || arm64 || ppc64le)

package vm

import "encoding/binary"

// load64 returns the little-endian 64-bit value at mem[addr:].
func load64(mem []byte, addr uint64) uint64 { return binary.LittleEndian.Uint64(mem[addr:]) }

// store64 writes v little-endian at mem[addr:].
func store64(mem []byte, addr, v uint64) { binary.LittleEndian.PutUint64(mem[addr:], v) }

// load32 returns the little-endian 32-bit value at mem[addr:].
func load32(mem []byte, addr uint64) uint32 { return binary.LittleEndian.Uint32(mem[addr:]) }

// store32 writes v little-endian at mem[addr:].
func store32(mem []byte, addr uint64, v uint32) { binary.LittleEndian.PutUint32(mem[addr:], v) }

// load16 returns the little-endian 16-bit value at mem[addr:].
func load16(mem []byte, addr uint64) uint16 { return binary.LittleEndian.Uint16(mem[addr:]) }

// store16 writes v little-endian at mem[addr:].
func store16(mem []byte, addr uint64, v uint16) { binary.LittleEndian.PutUint16(mem[addr:], v) }
