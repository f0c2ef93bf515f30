package opt_test

import (
	"errors"
	"fmt"

	"github.com/genesis-toolchain/genesis/ir"
)

// This file is a reference evaluator for the integer subset of the IR:
// constants, integer and bool arithmetic, comparisons, casts, vars,
// direct calls and structured control flow. It is written from
// docs/ir.md independently of constfold (values are kept as unsigned
// words of their width, not as sign-extended int64), so that the
// property test compares the optimizer against a second reading of the
// semantics.

// errDivZero and errUnreachable are the faults of the subset; errSteps
// means the step limit was hit.
var (
	errDivZero     = errors.New("DIVIDE_BY_ZERO")
	errUnreachable = errors.New("unreachable")
	errSteps       = errors.New("step limit")
)

// machine evaluates functions of a module.
type machine struct {
	m     *ir.Module
	steps int
}

// frame is one call's state.
type frame struct {
	vals map[*ir.Value]uint64
	vars map[string]uint64
}

// signal says how a region was left.
type signal struct {
	kind  ir.Op // 0: fell off its end; else OpYield, OpBreak, OpContinue, OpReturn
	label string
	vals  []uint64
}

func mask(t ir.Type) uint64 {
	if b := t.Bits(); b < 64 {
		return 1<<uint(b) - 1
	}
	return ^uint64(0)
}

// signed reads the word x of type t as a signed number.
func signed(t ir.Type, x uint64) int64 {
	b := uint(t.Bits())
	return int64(x<<(64-b)) >> (64 - b)
}

// call runs f on args (words of the parameter types).
func (e *machine) call(f *ir.Func, args []uint64) ([]uint64, error) {
	fr := &frame{vals: map[*ir.Value]uint64{}, vars: map[string]uint64{}}
	for i, p := range f.Params {
		fr.vals[p] = args[i]
	}
	s, err := e.region(fr, f.Body)
	if err != nil {
		return nil, err
	}
	return s.vals, nil
}

func (e *machine) region(fr *frame, r *ir.Region) (signal, error) {
	for _, in := range r.Instrs {
		if e.steps++; e.steps > 1_000_000 {
			return signal{}, errSteps
		}
		args := make([]uint64, len(in.Args))
		for i, a := range in.Args {
			x, ok := fr.vals[a]
			if !ok {
				return signal{}, fmt.Errorf("value %s used before it is defined", a.Name)
			}
			args[i] = x
		}
		var res []uint64
		switch in.Op {
		case ir.OpYield, ir.OpBreak, ir.OpContinue, ir.OpReturn:
			return signal{kind: in.Op, label: in.Label, vals: args}, nil
		case ir.OpUnreachable:
			return signal{}, errUnreachable
		case ir.OpIf:
			reg := in.Regions[1]
			if args[0] != 0 {
				reg = in.Regions[0]
			}
			s, err := e.region(fr, reg)
			if err != nil {
				return s, err
			}
			if s.kind != 0 && s.kind != ir.OpYield {
				return s, nil
			}
			res = s.vals
		case ir.OpSwitch:
			reg := in.Regions[len(in.Regions)-1]
			x := signed(in.Args[0].Type, args[0])
		find:
			for i, vals := range in.Cases {
				for _, v := range vals {
					if v == x {
						reg = in.Regions[i]
						break find
					}
				}
			}
			s, err := e.region(fr, reg)
			if err != nil {
				return s, err
			}
			if s.kind != 0 && s.kind != ir.OpYield {
				return s, nil
			}
			res = s.vals
		case ir.OpBlock:
			s, err := e.region(fr, in.Regions[0])
			if err != nil {
				return s, err
			}
			if s.kind == ir.OpBreak && s.label != in.Label || s.kind == ir.OpContinue || s.kind == ir.OpReturn {
				return s, nil
			}
			res = s.vals
		case ir.OpLoop:
			body := in.Regions[0]
			params := args
			for {
				for i, p := range body.Params {
					fr.vals[p] = params[i]
				}
				s, err := e.region(fr, body)
				if err != nil {
					return s, err
				}
				if s.label == in.Label && s.kind == ir.OpContinue {
					params = s.vals
					continue
				}
				if s.label == in.Label && s.kind == ir.OpBreak {
					res = s.vals
					break
				}
				if s.kind == 0 {
					return s, errors.New("a loop body fell off its end")
				}
				return s, nil
			}
		case ir.OpCall:
			g := e.m.Func(in.Sym)
			out, err := e.call(g, args)
			if err != nil {
				return signal{}, err
			}
			res = out
		case ir.OpGet:
			res = []uint64{fr.vars[in.Local]}
		case ir.OpSet:
			fr.vars[in.Local] = args[0]
		case ir.OpConst:
			res = []uint64{uint64(in.Lit.Int) & mask(in.Type)}
		default:
			x, err := e.op(in, args)
			if err != nil {
				return signal{}, err
			}
			res = []uint64{x}
		}
		for i, v := range in.Results {
			fr.vals[v] = res[i]
		}
	}
	return signal{}, nil
}

// op evaluates a non-structured integer op.
func (e *machine) op(in *ir.Instr, args []uint64) (uint64, error) {
	t := in.Args[0].Type
	mk := mask(t)
	a := args[0]
	var b uint64
	if len(args) > 1 {
		b = args[1]
	}
	sa, sb := signed(t, a), signed(t, b)
	minT := uint64(1) << uint(t.Bits()-1) // the word of t's most negative value
	bit := func(c bool) (uint64, error) {
		if c {
			return 1, nil
		}
		return 0, nil
	}
	switch in.Op {
	case ir.OpAdd:
		return (a + b) & mk, nil
	case ir.OpSub:
		return (a - b) & mk, nil
	case ir.OpMul:
		return (a * b) & mk, nil
	case ir.OpDivS, ir.OpRemS:
		if b == 0 {
			return 0, errDivZero
		}
		if a == minT && b == mk { // MIN / -1
			if in.Op == ir.OpDivS {
				return a, nil
			}
			return 0, nil
		}
		if in.Op == ir.OpDivS {
			return uint64(sa/sb) & mk, nil
		}
		return uint64(sa%sb) & mk, nil
	case ir.OpDivU:
		if b == 0 {
			return 0, errDivZero
		}
		return a / b, nil
	case ir.OpRemU:
		if b == 0 {
			return 0, errDivZero
		}
		return a % b, nil
	case ir.OpAnd:
		return a & b, nil
	case ir.OpOr:
		return a | b, nil
	case ir.OpXor:
		return a ^ b, nil
	case ir.OpShl:
		return (a << (b % 64)) & mk, nil
	case ir.OpShrU:
		return a >> (b % 64), nil
	case ir.OpShrS:
		return uint64(sa>>(b%64)) & mk, nil
	case ir.OpNeg:
		return -a & mk, nil
	case ir.OpNot:
		return ^a & mk, nil
	case ir.OpEq:
		return bit(a == b)
	case ir.OpNe:
		return bit(a != b)
	case ir.OpLtS:
		return bit(sa < sb)
	case ir.OpLtU:
		return bit(a < b)
	case ir.OpLeS:
		return bit(sa <= sb)
	case ir.OpLeU:
		return bit(a <= b)
	case ir.OpGtS:
		return bit(sa > sb)
	case ir.OpGtU:
		return bit(a > b)
	case ir.OpGeS:
		return bit(sa >= sb)
	case ir.OpGeU:
		return bit(a >= b)
	case ir.OpSext:
		return uint64(sa) & mask(in.Type), nil
	case ir.OpZext:
		return a, nil
	case ir.OpTrunc:
		return a & mask(in.Type), nil
	}
	return 0, fmt.Errorf("the evaluator does not support %s", in.Op)
}
