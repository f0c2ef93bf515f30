package vm_test

import (
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// TestRegistersAtStart checks the ABI of docs/forge.md, Registers at
// start: a program starts with heap_start in r254 and heap_end (memory −
// stack) in r255, every other register zero, under any quota and stack
// that hold it; a machine that does not start (OUT_OF_MEMORY) has none
// set. The program copies the two to r0 and r1 and halts, so what it saw
// is what it ran with.
func TestRegistersAtStart(t *testing.T) {
	p := &bc.Program{Code: []byte{
		byte(bc.OR), 0, 254, 254, 0, 0, 0, 0,
		byte(bc.OR), 1, 255, 255, 0, 0, 0, 0,
		byte(bc.HALT), 0, 0, 0, 0, 0, 0, 0,
	}, Data: []byte("abc")}
	img := image(t, p)
	const heapStart = 24 + 8 // code, then 3 bytes of data rounded up to 8
	if img.HeapStart() != heapStart {
		t.Fatalf("heap_start %d, want %d", img.HeapStart(), heapStart)
	}
	for _, c := range []struct{ memory, stack uint64 }{
		{16 << 20, 64 << 10}, {1 << 20, 128 << 10}, {heapStart, 0}, {heapStart + 7, 3}, {1000001, 999969},
	} {
		m := vm.New(img, vm.Config{Ticks: 100, Memory: c.memory, Stack: c.stack}, nil)
		if m.Register(254) != heapStart || m.Register(255) != c.memory-c.stack {
			t.Errorf("memory %d, stack %d: r254 %d, r255 %d at creation; want %d, %d", c.memory, c.stack,
				m.Register(254), m.Register(255), heapStart, c.memory-c.stack)
		}
		if s := m.Run(); s != vm.Halted || m.Register(0) != heapStart || m.Register(1) != c.memory-c.stack {
			t.Errorf("memory %d, stack %d: %v with r0 %d, r1 %d; want HALTED, %d, %d", c.memory, c.stack,
				s, m.Register(0), m.Register(1), heapStart, c.memory-c.stack)
		}
		for r := 2; r < 254; r++ {
			if v := m.Register(uint8(r)); v != 0 {
				t.Errorf("memory %d, stack %d: r%d = %d, want 0", c.memory, c.stack, r, v)
			}
		}
	}
	for _, c := range []struct{ memory, stack uint64 }{{heapStart - 1, 0}, {heapStart + 7, 8}, {vm.MaxMemory + 8, 8}} {
		m := vm.New(img, vm.Config{Ticks: 100, Memory: c.memory, Stack: c.stack}, nil)
		if m.State() != vm.Faulted || m.Fault() != vm.OutOfMemory || m.Register(254) != 0 || m.Register(255) != 0 {
			t.Errorf("memory %d, stack %d: %v %v, r254 %d, r255 %d; want FAULTED OUT_OF_MEMORY and no registers set",
				c.memory, c.stack, m.State(), m.Fault(), m.Register(254), m.Register(255))
		}
		need, ok := vm.Need(img, c.stack)
		if ok && need <= c.memory && c.memory <= vm.MaxMemory {
			t.Errorf("memory %d, stack %d: Need says %d fits", c.memory, c.stack, need)
		}
	}
	if need, ok := vm.Need(img, 100); !ok || need != heapStart+100 {
		t.Errorf("Need(100) = %d, %v; want %d, true", need, ok, heapStart+100)
	}
	if _, ok := vm.Need(img, vm.MaxMemory); ok {
		t.Error("Need(MaxMemory): no quota holds code, data and a stack of 4 GiB")
	}
}
