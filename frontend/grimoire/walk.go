package grimoire

import "reflect"

// Inspect walks the tree rooted at n depth-first, in source order: it
// calls f(n), then, when f returns true, walks each of n's children.
// Children that are absent (nil) are skipped. An imported spell
// (Import.Spell) is not a child: it is a tree of its own.
func Inspect(n Node, f func(Node) bool) {
	if isNil(n) || !f(n) {
		return
	}
	// The recursion keeps only this small frame per level, never
	// children's: a chain 1 + 1 + … + 1 is as deep as it is long.
	for _, c := range children(n) {
		Inspect(c, f)
	}
}

// children returns the children of n, in source order.
func children(n Node) (out []Node) {
	walk := func(ns ...Node) { out = append(out, ns...) }
	switch n := n.(type) {
	case *Spell:
		walk(n.Name)
		walk(entryNodes(n.Version, n.Description)...)
		walk(sectionNodes(n.Assets)...)
		walk(sectionNodes(n.Params)...)
		walk(sectionNodes(n.Limits)...)
		walk(sectionNodes(n.Venues)...)
		walk(sectionNodes(n.State)...)
		walk(sectionNodes(n.Skills)...)
		walk(sectionNodes(n.Advisors)...)
		walk(sectionNodes(n.Guards)...)
		walk(nodes(n.Imports)...)
		walk(nodes(n.Blocks)...)
		walk(nodes(n.Triggers)...)
	case *Asset:
		walk(n.Name, n.Chain, n.Address, n.Decimals)
		walk(nodes(n.Extra)...)
	case *Param:
		walk(n.Name, n.Type, n.Asset, n.Default, n.Min, n.Max)
		walk(nodes(n.Extra)...)
	case *Limit:
		walk(n.Name, n.Value)
	case *Venue:
		walk(n.Name)
		walk(nodes(n.Adapters)...)
	case *StateVar:
		walk(n.Name, n.Init)
	case *Skill:
		walk(n.Name, n.Type)
		walk(nodes(n.Adapters)...)
		walk(nodes(n.Defaults)...)
		walk(nodes(n.Extra)...)
	case *Advisor:
		walk(n.Name, n.Model, n.SystemPrompt)
		walk(nodes(n.Skills)...)
		walk(nodes(n.AllowedTools)...)
		walk(nodes(n.MCP)...)
		walk(n.Timeout, n.Fallback, n.MaxPerRun, n.MaxPerHour)
		walk(nodes(n.Extra)...)
	case *Guard:
		walk(n.Name, n.Check)
		walk(nodes(n.Meta)...)
	case *Import:
		walk(n.Path, n.Alias)
	case *Block:
		walk(n.Name)
		walk(nodes(n.Params)...)
		walk(nodes(n.Body)...)
	case *Trigger:
		walk(n.Cron, n.Cond, n.Every, n.Event, n.Where)
		walk(nodes(n.Body)...)

	case *AssignStmt:
		walk(n.Target, n.Value)
	case *ActionStmt:
		walk(n.Target, n.Venue, n.Action)
		walk(nodes(n.Args)...)
		walk(n.Using)
		walk(nodes(n.With)...)
	case *AdviseStmt:
		walk(n.Target, n.Advisor, n.Prompt, n.Output, n.Timeout, n.Fallback)
		walk(nodes(n.Context)...)
		walk(n.Within, n.OnViolation)
		walk(nodes(n.Extra)...)
	case *Schema:
		walk(nodes(n.Values)...)
		walk(n.Min, n.Max, n.MinLength, n.MaxLength, n.Pattern)
		walk(nodes(n.Fields)...)
		walk(n.Items)
		walk(nodes(n.Extra)...)
	case *SchemaField:
		walk(n.Name, n.Schema)
	case *PipelineStmt:
		walk(n.Target, n.Source)
		walk(nodes(n.Stages)...)
	case *Stage:
		walk(n.Op, n.Arg, n.By, n.Order)
		walk(nodes(n.Body)...)
	case *IfStmt:
		walk(n.Cond)
		walk(nodes(n.Then)...)
		walk(nodes(n.Elifs)...)
		walk(nodes(n.Else)...)
	case *Elif:
		walk(n.Cond)
		walk(nodes(n.Body)...)
	case *ForStmt:
		walk(n.Var, n.Iter)
		walk(nodes(n.Body)...)
	case *RepeatStmt:
		walk(n.Count)
		walk(nodes(n.Body)...)
	case *LoopStmt:
		walk(n.Until, n.Max)
		walk(nodes(n.Body)...)
	case *TryStmt:
		walk(nodes(n.Body)...)
		walk(nodes(n.Catches)...)
		walk(nodes(n.Finally)...)
	case *Catch:
		walk(n.Error, n.Retry, n.Action)
		walk(nodes(n.Body)...)
		walk(nodes(n.Extra)...)
	case *Retry:
		walk(n.MaxAttempts, n.Backoff, n.BackoffBase, n.MaxBackoff)
		walk(nodes(n.Extra)...)
	case *ParallelStmt:
		walk(n.Join, n.OnFail, n.Metric, n.Order, n.Count)
		walk(nodes(n.Branches)...)
	case *Branch:
		walk(n.Name)
		walk(nodes(n.Body)...)
	case *AtomicStmt:
		walk(n.Mode)
		walk(nodes(n.Body)...)
	case *EmitStmt:
		walk(n.Event)
		walk(nodes(n.Args)...)
	case *HaltStmt:
		walk(n.Reason)
	case *WaitStmt:
		walk(n.Duration)
	case *DoStmt:
		walk(nodes(n.Path)...)
		walk(nodes(n.Args)...)

	case *UnitLit:
		walk(n.Unit)
	case *Advisory:
		walk(n.Via)
	case *ListLit:
		walk(nodes(n.Elems)...)
	case *ObjectLit:
		walk(nodes(n.Entries)...)
	case *Entry:
		walk(n.Key, n.Value)
		walk(nodes(n.With)...)
	case *UnaryExpr:
		walk(n.X)
	case *BinaryExpr:
		walk(n.X, n.Y)
	case *CondExpr:
		walk(n.Cond, n.Then, n.Else)
	case *MemberExpr:
		walk(n.X, n.Name)
	case *IndexExpr:
		walk(n.X, n.Index)
	case *CallExpr:
		walk(n.Fun)
		walk(nodes(n.Args)...)
	case *Arg:
		walk(n.Name, n.Value)
	}
	return out
}

// nodes converts a slice of nodes of one type to []Node.
func nodes[T Node](s []T) []Node {
	out := make([]Node, len(s))
	for i, n := range s {
		out[i] = n
	}
	return out
}

// sectionNodes are the items of a section, none if it is absent; its
// header is a child too.
func sectionNodes[T Node](s *Section[T]) []Node {
	if s == nil {
		return nil
	}
	return append([]Node{s.Header}, nodes(s.Items)...)
}

// entryNodes are the given entries that are present.
func entryNodes(es ...*Entry) []Node {
	var out []Node
	for _, e := range es {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// isNil reports whether n is nil or a nil pointer in an interface (the
// optional fields of the tree that are pointers hold typed nils).
func isNil(n Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
