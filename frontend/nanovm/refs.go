package nanovm

import "github.com/genesis-toolchain/genesis/diag"

// Ref is one $reference of a program, where a tool that checks names
// (genesisc plan's lints) needs it: the step it is in, the reference,
// the string node it was written in and its position there.
type Ref struct {
	Step *Step
	Ref  *VarRef
	Node *Node    // the prompt, system, argument or condition string
	Pos  diag.Pos // the $ of the reference
}

// Refs returns every $reference of the program's steps and sub-steps:
// those of prompts, system messages and tool arguments (at any depth) in
// step order, then those of conditions. A condition that did not parse
// contributes none.
func (p *Program) Refs() []Ref {
	var out []Ref
	eachRef(p, func(s *Step, ref *VarRef, n *Node, _ refPlace) {
		out = append(out, Ref{Step: s, Ref: ref, Node: n, Pos: n.RunePos(ref.off)})
	})
	for _, s := range p.allSteps() {
		if s.Cond == nil || s.CondNode == nil {
			continue
		}
		walkExpr(s.Cond, func(e Expr) {
			if v, ok := e.(*VarRef); ok {
				out = append(out, Ref{Step: s, Ref: v, Node: s.CondNode, Pos: s.CondNode.RunePos(v.off)})
			}
		})
	}
	return out
}

// AllSteps returns every step of the program, each parallel step's
// sub-steps right after it.
func (p *Program) AllSteps() []*Step { return p.allSteps() }
