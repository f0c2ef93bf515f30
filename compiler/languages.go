package compiler

import (
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
	"github.com/genesis-toolchain/genesis/frontend/genesis"
	"github.com/genesis-toolchain/genesis/frontend/grimoire"
	"github.com/genesis-toolchain/genesis/frontend/nanovm"
	"github.com/genesis-toolchain/genesis/frontend/plan"
	"github.com/genesis-toolchain/genesis/frontend/vvm"
	"github.com/genesis-toolchain/genesis/ir"
)

// languages are the languages genesisc reads: one explicit list, in the
// order their extensions are listed in messages, rather than frontends
// registering themselves from init functions (docs/decisions.md, "One
// frontend interface (issue 15.3)"). A language is added here, and
// nowhere else in the driver. NewRegistry fails on a list whose files
// cannot be told apart; TestLanguages checks it does not.
var languages = mustRegistry(
	genesis.Language,
	vvm.Language,
	grimoire.Language,
	nanovm.Language,
	plan.Language, // .json files HasPlanKeys claims, before nano-vm takes them
	fasm.Language,
	irLanguage,
)

func mustRegistry(langs ...*frontend.Language) *frontend.Registry {
	r, err := frontend.NewRegistry(langs...)
	if err != nil {
		panic("compiler: the list of languages: " + err.Error())
	}
	return r
}

// irLanguage is the printed IR (docs/ir.md) as an input language: its
// parser is ir.Parse, a check runs the verifier, and the module is its
// own lowering.
var irLanguage = &frontend.Language{
	Name:       "IR",
	Programs:   "IR modules",
	Extensions: []string{".ir"},
	OneFile:    "several .ir files: an IR file is a whole module",
	Check: func(in frontend.Input) (any, diag.List) {
		src := in.Entry()
		return ir.Parse(src.Name, src.Data)
	},
	CheckLowering: func(checked any) diag.List {
		return ir.Verify(checked.(*ir.Module))
	},
	Lower: func(checked any) (*ir.Module, diag.List) {
		return checked.(*ir.Module), nil
	},
}
