package host

import (
	"encoding/binary"
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// builder assembles test programs with labels, without the assembler
// (package host must not depend on the frontend).
type builder struct {
	code   []byte
	data   []byte
	labels map[string]uint64
	fixups map[int]string // offset of a jump -> label of its target
}

func newBuilder() *builder {
	return &builder{labels: map[string]uint64{}, fixups: map[int]string{}}
}

// op appends an instruction.
func (b *builder) op(op bc.Opcode, a, bb, c uint8, imm uint64) *builder {
	b.code = bc.Inst{Op: op, A: a, B: bb, C: c, Imm: imm}.Append(b.code)
	return b
}

// jump appends a jump or call to label.
func (b *builder) jump(op bc.Opcode, a, bb uint8, label string) *builder {
	b.fixups[len(b.code)] = label
	return b.op(op, a, bb, 0, 0)
}

// label defines a label at the current code address.
func (b *builder) label(name string) *builder {
	b.labels[name] = uint64(len(b.code))
	return b
}

func (b *builder) program(t testing.TB) *bc.Program {
	t.Helper()
	for off, name := range b.fixups {
		addr, ok := b.labels[name]
		if !ok {
			t.Fatalf("undefined label %s", name)
		}
		binary.LittleEndian.PutUint32(b.code[off+4:], uint32(addr))
	}
	p := &bc.Program{Code: b.code, Data: b.data}
	if err := p.Verify(); err != nil {
		t.Fatal(err)
	}
	return p
}

func (b *builder) image(t testing.TB) *vm.Image {
	t.Helper()
	img, err := vm.NewImage(b.program(t))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

const (
	heap = 0x10000 // a buffer address well inside the heap of the test programs
)

// catProgram copies channel 2 to channel 0, a byte at a time, until end
// of input (an empty message), then halts. It reads with the idiom
// POLL (wait for the next message and give its size; 0 means the empty
// one), RECV 2, buf, size.
func catProgram(t testing.TB) *vm.Image {
	b := newBuilder()
	b.op(bc.LI, 1, 0, 0, heap) // r1 = buffer
	b.op(bc.LI, 5, 0, 0, 1)    // r5 = 1
	b.label("next")
	b.op(bc.POLL, 2, 0, 2, 0)         // r2 = the next message's size
	b.jump(bc.JZ, 2, 0, "eof")        // empty: end of input
	b.op(bc.RECV, 1, 0, 2, ChunkSize) // copy it to the buffer
	b.op(bc.OR, 3, 1, 1, 0)           // r3 = cursor
	b.op(bc.ADD, 4, 1, 2, 0)          // r4 = end
	b.label("send")                   //
	b.op(bc.SEND, 3, 0, 0, 1)         // one byte
	b.op(bc.ADD, 3, 3, 5, 0)          //
	b.jump(bc.JLT, 3, 4, "send")      //
	b.jump(bc.JMP, 0, 0, "next")      //
	b.label("eof")                    //
	b.op(bc.HALT, 0, 0, 0, 0)         //
	return b.image(t)
}
