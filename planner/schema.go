package planner

import (
	_ "embed"
	"sync"

	"github.com/genesis-toolchain/genesis/runtime"
)

// schemaJSON is the JSON schema of a nano-vm program: what the nano-vm
// frontend (frontend/nanovm) accepts, written from its decoder and from
// nano-vm's own schema (reference/nanovm/program.schema.json), with each
// step type's required fields. It is the one copy: the model gets it as
// structured output, the docs point at this file, and a test validates
// every program of the corpus against it.
//
//go:embed program.schema.json
var schemaJSON []byte

var schema = sync.OnceValue(func() runtime.Value {
	v, err := runtime.ParseJSON(schemaJSON)
	if err != nil {
		panic("planner: program.schema.json does not parse: " + err.Error())
	}
	return v
})

// SchemaJSON returns the JSON schema of a nano-vm program, as the
// planner sends it to the model.
func SchemaJSON() []byte { return append([]byte(nil), schemaJSON...) }

// Schema returns the JSON schema of a nano-vm program as a value.
func Schema() runtime.Value { return schema() }
