package plan

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/internal/jsontree"
)

// Plan is a decoded execution plan.
type Plan struct {
	File        string
	Root        *jsontree.Node
	Name        string // informational; "" when absent
	Description string // informational
	Inputs      []*Input
	Groups      []*Group
	// Order is the order the lowering runs the groups in: a topological
	// order of the dependencies, the smallest index first among the
	// groups that are ready (checkPlan sets it when the plan has no
	// error).
	Order []*Group

	byID map[string]*Group // the first group of each id
}

// Input is a name the run's input may bind: a placeholder {$Name}
// resolves to the input object's value at Name.
type Input struct {
	Name string
	Node *jsontree.Node
}

// Group is one operation group.
type Group struct {
	Node  *jsontree.Node
	Index int // in the plan's "groups" array
	// ID is the group's id: its "id", or its index in decimal ("0", "1",
	// …) when it has none, so that the seed's plans, which name groups by
	// index, read as they are.
	ID          string
	IDNode      *jsontree.Node // nil when the id is the index
	Description string
	Operations  []*Operation
	Deps        []*Dep
	Contracts   []*Contract

	fields map[string]*jsontree.Node
}

// Field returns the node of a key of the group's object, or nil.
func (g *Group) Field(key string) *jsontree.Node { return g.fields[key] }

// idNode is where a diagnostic about the group's id points: its "id"
// value, or the group's object.
func (g *Group) idNode() *jsontree.Node {
	if g.IDNode != nil {
		return g.IDNode
	}
	return g.Node
}

// Dep is one entry of a group's dependencies: a group index (a number)
// or id (a string).
type Dep struct {
	Node  *jsontree.Node
	Group *Group // nil when it names no group
}

// Operation is one operation of a group: an LLM step whose prompt is the
// operation's text with its placeholders replaced.
type Operation struct {
	Node     *jsontree.Node // the string, or the object
	TextNode *jsontree.Node // the string of the text
	Group    *Group
	Index    int // in the group's "operations" array
	Text     string
	Parts    []Part
	// Output is the name the operation's output is bound to ("" when
	// none): later operations of the group, and the operations of the
	// groups that depend on the group, read it as {$Output}.
	Output     string
	OutputNode *jsontree.Node
}

// Step is the step name of the operation's llm effect.
func (o *Operation) Step() string { return o.Group.ID + "." + strconv.Itoa(o.Index) }

// Part is literal text, or a placeholder when Name is not "".
type Part struct {
	Lit  string
	Name string
	Off  int // placeholder: the offset of its '{' in the text, in code points
	// Source is what binds the placeholder (set by the checks): an
	// *Operation or an *Input. A placeholder naming the operation's own
	// output has none: it is left as written, as the description of what
	// the operation computes.
	Source any
}

// Contract is one smart contract a group uses: the seed's (chain_id,
// address, name) tuple.
type Contract struct {
	Node    *jsontree.Node
	Index   int // in the group's "contracts" array
	ChainID string
	Address string
	Name    string
	// Dup is true for a repetition of an earlier contract of the group
	// (same chain and address): it is neither fetched nor listed again.
	Dup bool
}

// key identifies a contract: the chain and the address, whose case does
// not matter (EIP-55 checksums are mixed case).
func (c *Contract) key() string { return c.ChainID + ":" + strings.ToLower(c.Address) }

var (
	planKeys      = []string{"name", "description", "inputs", "groups"}
	groupKeys     = []string{"id", "description", "operations", "dependencies", "contracts"}
	operationKeys = []string{"operation", "output"}
	contractKeys  = []string{"chain_id", "address", "name"}
)

// synonyms are keys of other plan formats that mean one of ours.
var synonyms = map[string]string{
	"steps": "groups", "tasks": "groups", "stages": "groups",
	"name": "id", "title": "description", "desc": "description",
	"ops": "operations", "actions": "operations",
	"deps": "dependencies", "depends_on": "dependencies", "dependsOn": "dependencies",
	"after": "dependencies", "requires": "dependencies", "needs": "dependencies",
	"text": "operation", "op": "operation", "prompt": "operation", "action": "operation",
	"as": "output", "bind": "output", "binds": "output", "output_key": "output", "result": "output",
	"chain": "chain_id", "chainId": "chain_id", "addr": "address", "contract": "name",
}

var (
	// identPattern is the syntax of placeholder, output and input names.
	identPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// idPattern is the syntax of group ids.
	idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	// placeholderPattern is a placeholder: {$NAME}.
	placeholderPattern = regexp.MustCompile(`\{\$([A-Za-z_][A-Za-z0-9_]*)\}`)
	chainIDPattern     = regexp.MustCompile(`^[1-9][0-9]*$`)
	addressPattern     = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
)

func decodePlan(root *jsontree.Node, r *reporter) *Plan {
	if root.Kind != jsontree.Object {
		r.errorf(root, CodeSchema, "an execution plan is an object with a \"groups\" array, not %s", root.Describe())
		return nil
	}
	p := &Plan{File: root.Pos.File, Root: root, byID: map[string]*Group{}}
	var groups *jsontree.Node
	for _, f := range root.Fields {
		v := f.Value
		switch f.Key {
		case "name":
			p.Name, _ = optString(v, r)
		case "description":
			p.Description, _ = optString(v, r)
		case "inputs":
			p.Inputs = decodeInputs(v, r)
		case "groups":
			groups = v
		default:
			unknownKey(r, f, root.Path, "the plan", planKeys)
		}
	}
	if groups == nil {
		r.errorf(root, CodeSchema, "an execution plan needs a \"groups\" array")
		return p
	}
	if groups.Kind != jsontree.Array {
		r.errorf(groups, CodeSchema, "\"groups\" is an array of groups, not %s", groups.Describe())
		return p
	}
	if len(groups.Items) == 0 {
		r.warnf(groups, CodeNoEffect, "the plan has no groups: a run does nothing")
	}
	for i, n := range groups.Items {
		if g := decodeGroup(n, i, r); g != nil {
			p.Groups = append(p.Groups, g)
		}
	}
	return p
}

func decodeInputs(v *jsontree.Node, r *reporter) []*Input {
	if v.Kind == jsontree.Null {
		return nil
	}
	if v.Kind != jsontree.Array {
		r.errorf(v, CodeSchema, "\"inputs\" is an array of names, not %s", v.Describe())
		return nil
	}
	var ins []*Input
	for _, it := range v.Items {
		if it.Kind != jsontree.String || !identPattern.MatchString(it.Text) {
			r.errorf(it, CodeSchema, "an input is a name (letters, digits and _, not starting with a digit), not %s", it.Describe())
			continue
		}
		ins = append(ins, &Input{Name: it.Text, Node: it})
	}
	return ins
}

// optString decodes an optional string (null is absent).
func optString(v *jsontree.Node, r *reporter) (string, bool) {
	switch v.Kind {
	case jsontree.Null:
		return "", false
	case jsontree.String:
		return v.Text, true
	}
	r.errorf(v, CodeSchema, "expected a string, not %s", v.Describe())
	return "", false
}

// decodeGroup decodes the group at index i. A group that is not an
// object is reported and left out (so the indices of the others stay
// theirs: Index is the position in the array, not in Plan.Groups).
func decodeGroup(n *jsontree.Node, i int, r *reporter) *Group {
	if n.Kind != jsontree.Object {
		r.errorf(n, CodeSchema, "a group is an object with \"description\", \"operations\", \"dependencies\" and \"contracts\", not %s", n.Describe())
		return nil
	}
	g := &Group{Node: n, Index: i, ID: strconv.Itoa(i), fields: map[string]*jsontree.Node{}}
	for _, f := range n.Fields {
		g.fields[f.Key] = f.Value
		v := f.Value
		switch f.Key {
		case "id":
			if v.Kind == jsontree.Null {
				break
			}
			if v.Kind != jsontree.String || !idPattern.MatchString(v.Text) {
				r.errorf(v, CodeSchema, "a group id is a non-empty string of letters, digits, _ and -, not %s", v.Describe())
				break
			}
			g.ID, g.IDNode = v.Text, v
		case "description":
			g.Description, _ = optString(v, r)
		case "operations":
			g.Operations = decodeOperations(g, v, r)
		case "dependencies":
			g.Deps = decodeDeps(v, r)
		case "contracts":
			g.Contracts = decodeContracts(v, r)
		default:
			unknownKey(r, f, n.Path, "a group", groupKeys)
		}
	}
	if g.fields["operations"] == nil {
		r.errorf(n, CodeSchema, "a group needs an \"operations\" array")
	}
	return g
}

func decodeOperations(g *Group, v *jsontree.Node, r *reporter) []*Operation {
	if v.Kind != jsontree.Array {
		r.errorf(v, CodeSchema, "\"operations\" is an array of operations, not %s", v.Describe())
		return nil
	}
	if len(v.Items) == 0 {
		r.warnf(v, CodeNoEffect, "the group has no operations: it is Done as soon as it runs")
	}
	var ops []*Operation
	for i, n := range v.Items {
		op := &Operation{Node: n, Group: g, Index: i}
		switch n.Kind {
		case jsontree.String:
			op.TextNode = n
		case jsontree.Object:
			for _, f := range n.Fields {
				switch f.Key {
				case "operation":
					if f.Value.Kind != jsontree.String {
						r.errorf(f.Value, CodeSchema, "an operation's text is a string, not %s", f.Value.Describe())
						break
					}
					op.TextNode = f.Value
				case "output":
					o := f.Value
					if o.Kind == jsontree.Null {
						break
					}
					if o.Kind != jsontree.String || !identPattern.MatchString(o.Text) {
						r.errorf(o, CodeSchema, "\"output\" is a placeholder name (letters, digits and _, not starting with a digit; {$NAME} reads it), not %s", o.Describe())
						break
					}
					op.Output, op.OutputNode = o.Text, o
				default:
					unknownKey(r, f, n.Path, "an operation", operationKeys)
				}
			}
			if n.Get("operation") == nil {
				r.errorf(n, CodeSchema, "an operation object needs an \"operation\" string: its text")
			}
		default:
			r.errorf(n, CodeSchema, "an operation is a string, or an object with \"operation\" and \"output\", not %s", n.Describe())
		}
		if op.TextNode == nil {
			continue
		}
		op.Text = op.TextNode.Text
		if strings.TrimSpace(op.Text) == "" {
			r.errorf(op.TextNode, CodeSchema, "an operation's text is empty")
			continue
		}
		op.Parts = parseText(op.TextNode, r)
		ops = append(ops, op)
	}
	return ops
}

// parseText splits an operation's text into literal text and
// placeholders, warning about "{$" that does not start one.
func parseText(n *jsontree.Node, r *reporter) []Part {
	s := n.Text
	var parts []Part
	last := 0
	ms := placeholderPattern.FindAllStringSubmatchIndex(s, -1)
	for _, m := range ms {
		if m[0] > last {
			parts = append(parts, Part{Lit: s[last:m[0]]})
		}
		parts = append(parts, Part{Name: s[m[2]:m[3]], Off: utf8.RuneCountInString(s[:m[0]])})
		last = m[1]
	}
	if last < len(s) {
		parts = append(parts, Part{Lit: s[last:]})
	}
	// A "{$" that no match starts at.
	starts := map[int]bool{}
	for _, m := range ms {
		starts[m[0]] = true
	}
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '{' && s[i+1] == '$' && !starts[i] {
			end := strings.IndexByte(s[i:], '}')
			shown := s[i:]
			if end >= 0 {
				shown = s[i : i+end+1]
			}
			pos := n.RunePos(utf8.RuneCountInString(s[:i]))
			r.add(pos, warning, n.Path, CodeMalformed, "%q is not a placeholder and stays as written (a placeholder is {$NAME}, NAME letters, digits and _, not starting with a digit)", jsontree.Abbreviate(shown))
		}
	}
	return parts
}

func decodeDeps(v *jsontree.Node, r *reporter) []*Dep {
	if v.Kind == jsontree.Null {
		return nil
	}
	if v.Kind != jsontree.Array {
		r.errorf(v, CodeSchema, "\"dependencies\" is an array of group indices or ids, not %s", v.Describe())
		return nil
	}
	var deps []*Dep
	for _, it := range v.Items {
		switch {
		case it.Kind == jsontree.Number && it.IsInt && it.Int >= 0:
		case it.Kind == jsontree.String && it.Text != "":
		default:
			r.errorf(it, CodeSchema, "a dependency is a group's index (an integer from 0) or id (a string), not %s", it.Describe())
			continue
		}
		deps = append(deps, &Dep{Node: it})
	}
	return deps
}

func decodeContracts(v *jsontree.Node, r *reporter) []*Contract {
	if v.Kind == jsontree.Null {
		return nil
	}
	if v.Kind != jsontree.Array {
		r.errorf(v, CodeSchema, "\"contracts\" is an array of [chain_id, address, name] triples, not %s", v.Describe())
		return nil
	}
	var cs []*Contract
	for i, it := range v.Items {
		c := &Contract{Node: it, Index: i}
		var fields [3]*jsontree.Node
		switch it.Kind {
		case jsontree.Array:
			if len(it.Items) != 3 {
				r.errorf(it, CodeSchema, "a contract is a [chain_id, address, name] triple of strings, not an array of %d", len(it.Items))
				continue
			}
			copy(fields[:], it.Items)
		case jsontree.Object:
			for _, f := range it.Fields {
				if i := slices.Index(contractKeys, f.Key); i >= 0 {
					fields[i] = f.Value
				} else {
					unknownKey(r, f, it.Path, "a contract", contractKeys)
				}
			}
			missing := false
			for i, f := range fields {
				if f == nil {
					r.errorf(it, CodeSchema, "a contract object needs %q", contractKeys[i])
					missing = true
				}
			}
			if missing {
				continue
			}
		default:
			r.errorf(it, CodeSchema, "a contract is a [chain_id, address, name] triple of strings, not %s", it.Describe())
			continue
		}
		ok := true
		for i, f := range fields {
			if f.Kind != jsontree.String || strings.TrimSpace(f.Text) == "" {
				r.errorf(f, CodeSchema, "a contract's %s is a non-empty string, not %s", contractKeys[i], f.Describe())
				ok = false
			}
		}
		if !ok {
			continue
		}
		c.ChainID, c.Address, c.Name = fields[0].Text, fields[1].Text, fields[2].Text
		if !chainIDPattern.MatchString(c.ChainID) {
			r.warnf(fields[0], CodeContract, "chain id %q is not a decimal chain id (such as \"1\", Ethereum mainnet)", jsontree.Abbreviate(c.ChainID))
		}
		if !addressPattern.MatchString(c.Address) {
			r.warnf(fields[1], CodeContract, "address %q is not 0x and 40 hex digits", jsontree.Abbreviate(c.Address))
		}
		cs = append(cs, c)
	}
	return cs
}

// unknownKey reports a key the format does not have, suggesting the
// closest known key.
func unknownKey(r *reporter, f jsontree.Field, path, where string, known []string) {
	msg := fmt.Sprintf("unknown key %q in %s: it is ignored", f.Key, where)
	s := diag.Closest(f.Key, known)
	if syn, ok := synonyms[f.Key]; ok && s == "" && slices.Contains(known, syn) {
		s = syn
	}
	if s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	r.add(f.KeyPos, warning, jsontree.ChildPath(path, f.Key), CodeUnknownKey, "%s", msg)
}
