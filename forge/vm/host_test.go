package vm_test

import "github.com/genesis-toolchain/genesis/forge/vm"

// fakeHost is the host of the differential tests: its functions depend
// only on r0–r2, the imm and memory, so the fast interpreter and the
// reference see the same results, extra ticks and faults.
type fakeHost struct{}

func (fakeHost) HostCall(m *vm.Machine, imm uint32) (uint64, vm.Fault) {
	res, set, ticks, f := fakeCall(imm, m.Register(0), m.Register(1), m.Register(2), m.Memory())
	if set {
		m.SetRegister(0, res)
	}
	return ticks, f
}

// fakeCall is function imm of fakeHost on operands r0, r1, r2 and memory
// mem: the result for r0 (when set), the extra ticks and the fault.
func fakeCall(imm uint32, r0, r1, r2 uint64, mem []byte) (res uint64, set bool, ticks uint64, f vm.Fault) {
	switch imm % 6 {
	case 0: // free: a sum
		return r0 + r1 + r2, true, 0, vm.NoFault
	case 1: // costs what r2 says, up to 15 ticks
		return r0*31 ^ r1, true, r2 & 15, vm.NoFault
	case 2: // refuses an odd operand, after charging a tick
		if r0&1 != 0 {
			return 0, false, 1, vm.HostFault
		}
		return r0 >> 1, true, 0, vm.NoFault
	case 3: // costs r1 ticks, often far more than any budget
		return 7, true, r1, vm.NoFault
	case 4: // reads memory
		if len(mem) == 0 {
			return 0, false, 0, vm.HostFault
		}
		return uint64(mem[r1%uint64(len(mem))]), true, 1, vm.NoFault
	default: // refuses, with more ticks than the budget has when r1 is large
		return 0, false, r1 >> 56, vm.HostFault
	}
}
