package agentabi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Metadata is what an agent program's FRGP metadata holds: everything the
// host needs besides the code, as one JSON object (so that `forge disasm`
// shows it readably). A Forge program whose metadata does not parse as
// Metadata with Format "genesis-agent" is no agent program.
type Metadata struct {
	Format  string `json:"format"`  // Format
	Version int    `json:"version"` // Version
	// Program is the program's identity, which journals record and check
	// (the source file's base name, as on the Go target); ProgramHash
	// goes into the idempotency keys of its effects: the same on every
	// target (the hex sha256 of the optimized IR module's printed form).
	Program     string `json:"program"`
	ProgramHash string `json:"program_hash"`
	// Input is set when main takes the run's input: the host puts its
	// handle in r0 at start. Result is set when main returns a value,
	// whose handle is in r0 when the program halts; otherwise the run's
	// output is unit.
	Input  bool `json:"input"`
	Result bool `json:"result"`
	// Return is the symbol of a HALT instruction: the return address with
	// which the host calls a parallel branch's function.
	Return string `json:"return"`
	// Builtins are the IR names of the builtins the program calls, in
	// the order HCALL immediates number them.
	Builtins []string `json:"builtins"`
	// Constants are the values of the handles 1, 2, …: null for unit,
	// a bool, a (finite) number or a string.
	Constants []Constant `json:"constants"`
	// Sites are the step sites of the effects, numbered from 0 in the
	// requests.
	Sites []Site `json:"sites"`
	// Positions are the source positions of fallible builtins, numbered
	// from 1 in HCALL immediates (0 is none).
	Positions []Pos `json:"positions"`
}

// Constant is one constant value.
type Constant struct {
	Kind   string  // "unit", "bool", "number" or "string"
	Bool   bool    // for "bool"
	Number float64 // for "number"
	String string  // for "string"
}

// MarshalJSON encodes c as its JSON value.
func (c Constant) MarshalJSON() ([]byte, error) {
	switch c.Kind {
	case "unit":
		return []byte("null"), nil
	case "bool":
		return json.Marshal(c.Bool)
	case "number":
		if math.IsNaN(c.Number) || math.IsInf(c.Number, 0) {
			return nil, fmt.Errorf("constant %v is not a finite number", c.Number)
		}
		if c.Number == 0 && math.Signbit(c.Number) {
			return []byte(`{"number":"-0"}`), nil
		}
		return json.Marshal(c.Number)
	case "string":
		return json.Marshal(c.String)
	}
	return nil, fmt.Errorf("constant of unknown kind %q", c.Kind)
}

// UnmarshalJSON decodes a constant's JSON value.
func (c *Constant) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*c = Constant{Kind: "unit"}
	case bytes.Equal(b, []byte("true")), bytes.Equal(b, []byte("false")):
		*c = Constant{Kind: "bool", Bool: b[0] == 't'}
	case bytes.Equal(b, []byte(`{"number":"-0"}`)):
		*c = Constant{Kind: "number", Number: math.Copysign(0, -1)}
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = Constant{Kind: "string", String: s}
	default:
		var f float64
		if err := json.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("constant %s: %w", b, err)
		}
		*c = Constant{Kind: "number", Number: f}
	}
	return nil
}

// Site is a step site: the name and source position of a step identity
// (runtime.NewSite), and for a parallel block its branches.
type Site struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
	// Branches are the symbols of a parallel block's branch functions
	// (one for parallel.each); Waits, for a parallel block whose branches
	// wait for others, lists for each branch those it waits for (each
	// branch function then takes their results as a second argument).
	Branches []string `json:"branches,omitempty"`
	Waits    [][]int  `json:"waits,omitempty"`
}

// Pos is a source position.
type Pos struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// Marshal returns m's encoding, the same bytes for the same metadata.
func (m *Metadata) Marshal() ([]byte, error) {
	out := *m
	out.Format, out.Version = Format, Version
	return json.Marshal(&out)
}

// IsAgent reports whether meta, a Forge program's metadata, is an agent
// program's (it may still fail to Parse).
func IsAgent(meta []byte) bool {
	return bytes.HasPrefix(meta, []byte(`{"format":"`+Format+`"`))
}

// Parse decodes and checks an agent program's metadata.
func Parse(meta []byte) (*Metadata, error) {
	if !IsAgent(meta) {
		return nil, errors.New("not an agent program (its metadata is not genesis-agent)")
	}
	d := json.NewDecoder(bytes.NewReader(meta))
	d.DisallowUnknownFields()
	var m Metadata
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("agent metadata: %w", err)
	}
	if d.More() {
		return nil, errors.New("agent metadata: data after the object")
	}
	switch {
	case m.Version != Version:
		return nil, fmt.Errorf("agent metadata of ABI version %d; this host speaks version %d", m.Version, Version)
	case len(m.Builtins) > MaxBuiltins:
		return nil, fmt.Errorf("agent metadata names %d builtins, more than %d", len(m.Builtins), MaxBuiltins)
	case len(m.Positions) >= MaxPositions:
		return nil, fmt.Errorf("agent metadata has %d positions, more than %d", len(m.Positions), MaxPositions-1)
	case m.Return == "":
		return nil, errors.New("agent metadata names no return symbol")
	}
	for i, s := range m.Sites {
		if s.Name == "" {
			return nil, fmt.Errorf("agent metadata: site %d has no name", i)
		}
		for b, ws := range s.Waits {
			for _, w := range ws {
				if w < 0 || w >= b {
					return nil, fmt.Errorf("agent metadata: site %d: branch %d waits for branch %d, which does not come before it", i, b, w)
				}
			}
		}
		if len(s.Waits) > len(s.Branches) {
			return nil, fmt.Errorf("agent metadata: site %d has waits for %d branches but %d branches", i, len(s.Waits), len(s.Branches))
		}
	}
	return &m, nil
}
