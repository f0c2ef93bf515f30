package genesis

// walkFile calls fn for every expression of f, parents before children,
// including the names of declarations that are expressions (let names,
// parameters and pattern bindings are not visited: they declare).
func walkFile(f *File, fn func(Expr)) {
	for _, d := range f.Decls {
		if fd, ok := d.(*FuncDecl); ok {
			walkExpr(fd.Body, fn)
		}
	}
}

func walkStmt(s Stmt, fn func(Expr)) {
	switch s := s.(type) {
	case *LetStmt:
		walkExpr(s.Value, fn)
	case *AssignStmt:
		walkExpr(s.Target, fn)
		walkExpr(s.Value, fn)
	case *ExprStmt:
		walkExpr(s.X, fn)
	case *WhileStmt:
		walkExpr(s.Cond, fn)
		walkExpr(s.Body, fn)
	case *ReturnStmt:
		if s.Value != nil {
			walkExpr(s.Value, fn)
		}
	case *AsmStmt:
		for _, b := range s.Bindings {
			walkExpr(b.Value, fn)
		}
		for _, in := range s.Insts {
			for _, op := range in.Operands {
				if op.Kind == AsmName {
					walkExpr(op.Name, fn)
				}
			}
		}
	}
}

func walkExpr(e Expr, fn func(Expr)) {
	fn(e)
	switch e := e.(type) {
	case *UnaryExpr:
		walkExpr(e.X, fn)
	case *BinaryExpr:
		walkExpr(e.X, fn)
		walkExpr(e.Y, fn)
	case *CastExpr:
		walkExpr(e.X, fn)
	case *CallExpr:
		walkExpr(e.Fun, fn)
		for _, a := range e.Args {
			walkExpr(a, fn)
		}
	case *IndexExpr:
		walkExpr(e.X, fn)
		walkExpr(e.Index, fn)
	case *FieldExpr:
		walkExpr(e.X, fn)
	case *ArrayLit:
		walkExpr(e.Elem, fn)
	case *StructLit:
		for _, f := range e.Fields {
			walkExpr(f.Value, fn)
		}
	case *BlockExpr:
		for _, s := range e.Stmts {
			walkStmt(s, fn)
		}
		if e.Tail != nil {
			walkExpr(e.Tail, fn)
		}
	case *IfExpr:
		walkExpr(e.Cond, fn)
		walkExpr(e.Then, fn)
		if e.Else != nil {
			walkExpr(e.Else, fn)
		}
	case *MatchExpr:
		walkExpr(e.X, fn)
		for _, arm := range e.Arms {
			walkExpr(arm.Body, fn)
		}
	}
}
