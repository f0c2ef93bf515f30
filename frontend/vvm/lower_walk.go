package vvm

// inspect walks the tree under n depth first, in source order, calling
// f for every node; when f returns false the node's children are
// skipped. The names a node refers to — a placeholder's, an agent
// reference's, an assignment's target — are visited as *Ident nodes.
func inspect(n Node, f func(Node) bool) {
	if n == nil || !f(n) {
		return
	}
	stmts := func(list []Stmt) {
		for _, s := range list {
			inspect(s, f)
		}
	}
	expr := func(e Expr) {
		if e != nil {
			inspect(e, f)
		}
	}
	ident := func(id *Ident) {
		if id != nil {
			inspect(id, f)
		}
	}
	kwargs := func(kws []*KwArg) {
		for _, kw := range kws {
			expr(kw.Value)
		}
	}
	template := func(t *Template) {
		if t == nil {
			return
		}
		for _, p := range t.Parts {
			if p.Kind == NamePart {
				ident(p.Name)
			}
		}
	}
	switch n := n.(type) {
	case *AgentStmt:
		kwargs(n.Config)
	case *InputStmt:
		expr(n.Default)
	case *ExportStmt:
		ident(n.Value)
	case *FuncDecl:
		stmts(n.Body)
	case *ReturnStmt:
		expr(n.Value)
	case *AssignStmt:
		ident(n.Target)
		expr(n.Value)
	case *ExprStmt:
		expr(n.X)
	case *IfStmt:
		expr(n.Cond)
		stmts(n.Then)
		for _, e := range n.Elifs {
			expr(e.Cond)
			stmts(e.Body)
		}
		stmts(n.Else)
	case *WhileStmt:
		expr(n.Cond)
		stmts(n.Body)
	case *ForStmt:
		ident(n.Var)
		expr(n.Iter)
		stmts(n.Body)
	case *MatchStmt:
		expr(n.Subject)
		for _, c := range n.Cases {
			inspect(c.Pattern, f)
			stmts(c.Body)
		}
	case *ChooseStmt:
		expr(n.Subject)
		template(n.Criterion)
		ident(n.As)
		for _, o := range n.Options {
			stmts(o.Body)
		}
	case *ConstrainStmt:
		ident(n.Target)
		kwargs(n.Options)
		for _, r := range n.Requires {
			template(r.Criterion)
		}
	case *WithInputStmt:
		expr(n.Input)
		stmts(n.Body)
	case *TryStmt:
		stmts(n.Body)
		if n.Except != nil {
			ident(n.Except.Var)
			stmts(n.Except.Body)
		}
		if n.Finally != nil {
			stmts(n.Finally.Body)
		}
	case *ParallelStmt:
		kwargs(n.Options)
		ident(n.As)
		for _, br := range n.Branches {
			expr(br.Value)
		}
	case *ErrorPattern:
		ident(n.Bind)
	case *PredPattern:
		template(n.Criterion)
	case *ListLit:
		for _, e := range n.Elems {
			expr(e)
		}
	case *ObjectLit:
		for _, fl := range n.Fields {
			expr(fl.Value)
		}
	case *UnaryExpr:
		expr(n.X)
	case *BinaryExpr:
		expr(n.X)
		expr(n.Y)
	case *CallExpr:
		ident(n.Fun)
		for _, a := range n.Args {
			expr(a)
		}
		kwargs(n.Kwargs)
	case *AgentCall:
		if n.Agent != nil {
			ident(n.Agent.Name)
			kwargs(n.Agent.Inline)
			kwargs(n.Agent.With)
		}
		template(n.Template)
		expr(n.Input)
		kwargs(n.Options)
	case *SemPred:
		template(n.Criterion)
		expr(n.Input)
	case *MemberExpr:
		expr(n.X)
	case *IndexExpr:
		expr(n.X)
		expr(n.Index)
	case *WithExpr:
		expr(n.X)
		kwargs(n.Args)
	case *LambdaExpr:
		expr(n.Body)
	}
}
