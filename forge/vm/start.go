package vm

// What a machine tells the program when it starts (docs/forge.md,
// Registers at start), and what a program needs to start.

// The registers that are not zero when a program starts: the bounds of
// its writable heap. Everything else is zero.
const (
	RegHeapStart = 254 // heap_start: the first multiple of 8 after the data
	RegHeapEnd   = 255 // heap_end = memory − stack: where the machine stack's region begins
)

// startRegisters gives a new machine's program the bounds of its heap:
// code compiled for no particular quota keeps its own stacks inside
// [RegHeapStart, RegHeapEnd) and so runs under any quota and stack size
// that hold it.
func (m *Machine) startRegisters() {
	m.regs[RegHeapStart] = m.img.heapStart
	m.regs[RegHeapEnd] = m.heapEnd
}

// Need returns the smallest memory quota that holds img's code and data
// and a machine stack of stack bytes (creation with less faults
// OUT_OF_MEMORY), and false when no quota up to MaxMemory does.
func Need(img *Image, stack uint64) (uint64, bool) {
	need := img.heapStart + stack
	return need, need >= stack && need <= MaxMemory
}
