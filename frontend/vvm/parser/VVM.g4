// VVM is the grammar of VVM programs (.vvm): spec.md §16, with the
// additions of spec-newer.md (input declarations, parallel blocks, member
// and index access, `import * as m`). docs/vvm.md is the language as
// implemented, with every place where this grammar departs from the EBNF
// and why.
//
// The grammar fixes the shape of a program and is lenient where a precise
// message needs more than a parse error: a name may be any keyword (a
// reserved word used as a name is E010), a case pattern and a choose or
// require criterion may be any expression (E050 and its kin), argument
// lists mix positional and keyword arguments freely, a block may be
// missing (E002, E105), and comparisons chain. Package vvm checks all of
// these.
//
// Indentation: INDENT, DEDENT and NEWLINE come from the token source of
// package vvm (lex.go), which wraps the generated lexer. A NEWLINE ends a
// logical line, never inside brackets; blank and comment-only lines make
// no token.
//
// After editing this file, run `make generate` (scripts/antlr-generate.sh).

grammar VVM;

tokens { INDENT, DEDENT }

// ── Program structure ──

program
    : stmt* EOF
    ;

stmt
    : simpleStmt NEWLINE
    | compoundStmt
    ;

simpleStmt
    : IMPORT STRING FROM STRING                                   # skillImport
    | FROM STRING IMPORT importSpec                               # moduleImport
    | EXPORT (AT name | expr)                                     # exportStmt
    | AGENT name LPAREN argList? RPAREN                           # agentStmt
    | INPUT name (COLON STRING)? (ASSIGN expr)?                   # inputStmt
    | RETURN expr?                                                # returnStmt
    | RAISE expr?                                                 # raiseStmt
    | PASS                                                        # passStmt
    | BREAK                                                       # breakStmt
    | CONTINUE                                                    # continueStmt
    | name ASSIGN expr                                            # assignStmt
    | expr                                                        # exprStmt
    ;

// importSpec: `name`, `name as alias`, `@agent`, `@agent as alias`
// (spec.md 0.0.4) or `* as module` (spec-newer.md).
importSpec
    : AT? name (AS name)?
    | STAR AS name
    ;

compoundStmt
    : DEF name LPAREN (name (COMMA name)* COMMA?)? RPAREN COLON block  # defStmt
    | IF expr COLON block elifClause* elseClause?                        # ifStmt
    | WHILE expr COLON block                                             # whileStmt
    | FOR name IN expr COLON block                                       # forStmt
    | MATCH expr COLON (NEWLINE INDENT caseClause+ DEDENT | NEWLINE)     # matchStmt
    | CHOOSE expr BY expr AS name COLON (NEWLINE INDENT optionClause+ DEDENT | NEWLINE) # chooseStmt
    | CONSTRAIN name LPAREN argList? RPAREN COLON (NEWLINE INDENT requireClause+ DEDENT | NEWLINE) # constrainStmt
    | WITH INPUT expr COLON block                                        # withInputStmt
    | TRY COLON block exceptClause? finallyClause?                       # tryStmt
    | PARALLEL LPAREN argList? RPAREN AS name COLON block                # parallelStmt
    ;

// block: an indented statement list, or nothing at all after the line
// break, which package vvm reports (E002, or E105 for a parallel block).
block
    : NEWLINE INDENT stmt+ DEDENT
    | NEWLINE
    ;

elifClause    : ELIF expr COLON block ;
elseClause    : ELSE COLON block ;
caseClause    : CASE pattern COLON block ;
optionClause  : OPTION expr COLON block ;
requireClause : REQUIRE expr NEWLINE ;
exceptClause  : EXCEPT (AS name)? COLON block ;
finallyClause : FINALLY COLON block ;

// pattern: `error(...)`, whose arguments package vvm checks, or an
// expression, which must be `_` or a semantic predicate ?`...`.
pattern
    : ERROR LPAREN argList? RPAREN                                # errorPattern
    | expr                                                        # exprPattern
    ;

// ── Expressions (loosest first) ──

expr
    : lambdaParams ARROW expr                                     # lambdaExpr
    | orExpr                                                      # operatorExpr
    ;

// lambdaParams: `x => …`, `(x, y) => …` or `() => …` (a decision of
// docs/vvm.md: the corpus uses single-parameter lambdas). A parameter is
// an identifier: were it any name, a keyword where an expression should
// be would read as the start of a lambda.
lambdaParams
    : IDENT
    | LPAREN (IDENT (COMMA IDENT)*)? RPAREN
    ;

orExpr  : andExpr (OR andExpr)* ;
andExpr : notExpr (AND notExpr)* ;
notExpr : NOT notExpr | cmpExpr ;

// cmpExpr: comparisons parse as a chain, which package vvm rejects with
// a better message than a parse error could give.
cmpExpr : addExpr (cmpOp addExpr)* ;
cmpOp   : EQ | NE | LT | LE | GT | GE ;

addExpr : postfixExpr ((PLUS | MINUS) postfixExpr)* ;

postfixExpr : primary postfix* ;

// postfix: `.with(...)` derives an agent (a keyword after the dot, so
// never a member named with), `.name` reads a member (any word, keywords
// too: `value.error`), `[i]` an element.
postfix
    : DOT WITH LPAREN argList? RPAREN                             # withPostfix
    | DOT name                                                    # memberPostfix
    | LBRACK expr RBRACK                                          # indexPostfix
    ;

primary
    : LPAREN RPAREN                                               # unitLit
    | TRUE                                                        # trueLit
    | FALSE                                                       # falseLit
    | NUMBER                                                      # numberLit
    | STRING                                                      # stringLit
    | IT                                                          # itExpr
    | IDENT LPAREN argList? RPAREN                                # callExpr
    | IDENT                                                       # nameExpr
    | LBRACK (expr (COMMA expr)* COMMA?)? RBRACK                  # listLit
    | LBRACE (field (COMMA field)* COMMA?)? RBRACE                # objectLit
    | agentRef TEMPLATE LPAREN argList? RPAREN                    # agentCall
    | QUESTION TEMPLATE (LPAREN expr RPAREN)?                     # semPred
    | LPAREN expr RPAREN                                          # parenExpr
    ;

// agentRef: `@name`, `@name.with(k=v, …)` or an inline `@{k=v, …}`.
agentRef
    : AT name (DOT WITH LPAREN argList? RPAREN)?
    | AT LBRACE argList? RBRACE
    ;

argList : arg (COMMA arg)* COMMA? ;
arg     : name ASSIGN expr | expr ;

field : (name | STRING) COLON expr ;

// name: an identifier or any keyword. Where a name is declared, package
// vvm rejects a keyword (E010); as an object key, a keyword argument or
// a member, any word is fine.
name
    : IDENT
    | IMPORT | FROM | AS | EXPORT | AGENT | DEF | RETURN | MATCH | CASE
    | CHOOSE | BY | OPTION | CONSTRAIN | REQUIRE | WITH | INPUT | IF | ELIF
    | ELSE | WHILE | FOR | IN | PARALLEL | TRY | EXCEPT | FINALLY | RAISE
    | PASS | BREAK | CONTINUE | AND | OR | NOT | IT | TRUE | FALSE | ERROR
    ;

// ── Tokens (spec.md §0.4, §15.2.1) ──

// The reserved words of spec-newer.md §15.2.1.
IMPORT    : 'import' ;
FROM      : 'from' ;
AS        : 'as' ;
EXPORT    : 'export' ;
AGENT     : 'agent' ;
DEF       : 'def' ;
RETURN    : 'return' ;
MATCH     : 'match' ;
CASE      : 'case' ;
CHOOSE    : 'choose' ;
BY        : 'by' ;
OPTION    : 'option' ;
CONSTRAIN : 'constrain' ;
REQUIRE   : 'require' ;
WITH      : 'with' ;
INPUT     : 'input' ;
IF        : 'if' ;
ELIF      : 'elif' ;
ELSE      : 'else' ;
WHILE     : 'while' ;
FOR       : 'for' ;
IN        : 'in' ;
PARALLEL  : 'parallel' ;
TRY       : 'try' ;
EXCEPT    : 'except' ;
FINALLY   : 'finally' ;
RAISE     : 'raise' ;
PASS      : 'pass' ;
BREAK     : 'break' ;
CONTINUE  : 'continue' ;
AND       : 'and' ;
OR        : 'or' ;
NOT       : 'not' ;
IT        : 'it' ;
TRUE      : 'true' ;
FALSE     : 'false' ;
ERROR     : 'error' ;

IDENT : [a-zA-Z_] [a-zA-Z0-9_]* ;

// NUMBER takes every alphanumeric character after the digits, so that
// `12ab` or `1e5` is one malformed number, which package vvm reports as
// such, rather than a number and a name.
NUMBER : [0-9]+ ('.' [0-9]+)? [a-zA-Z0-9_]* ;

// A string literal may hold any escape; package vvm decodes it and
// reports an unknown one at its exact column (E005). A triple-quoted
// string may span lines; at the end of the input it is unterminated, and
// package vvm reports it so (E003).
STRING
    : '"""' ('\\' . | .)*? ('"""' | EOF)
    | '"' ('\\' ~[\r\n] | ~["\\\r\n])* '"'
    ;
// UNTERMINATED_STRING is a '"' without its closing quote on the line: it
// cannot match a quote, so a closed string is always the longer match.
UNTERMINATED_STRING : '"' ('\\' ~[\r\n] | ~["\\\r\n])* '\\'? ;

// TEMPLATE is a backtick template (spec.md §0.5.2). \` is a backtick and
// every other backslash stands for itself: a run of backslashes followed
// by a backtick ends in the escape, so only an unescaped backtick closes
// the template. At the end of the input it is unterminated (E004).
TEMPLATE : '`' (~[`\\] | '\\'+ ~'\\')* ('`' | '\\'* EOF) ;

ARROW    : '=>' ;
EQ       : '==' ;
NE       : '!=' ;
LE       : '<=' ;
GE       : '>=' ;
LT       : '<' ;
GT       : '>' ;
ASSIGN   : '=' ;
PLUS     : '+' ;
MINUS    : '-' ;
STAR     : '*' ;
DOT      : '.' ;
COMMA    : ',' ;
COLON    : ':' ;
LPAREN   : '(' ;
RPAREN   : ')' ;
LBRACK   : '[' ;
RBRACK   : ']' ;
LBRACE   : '{' ;
RBRACE   : '}' ;
AT       : '@' ;
QUESTION : '?' ;

// NEWLINE, WS and COMMENT are all seen by the token source, which turns
// line breaks into NEWLINE, INDENT and DEDENT (only a NEWLINE that ends a
// logical line reaches the parser) and rejects tabs in indentation. A
// lone carriage return is blank space: line endings are LF or CRLF.
NEWLINE : '\r'? '\n' ;
WS      : [ \t\f\r]+ -> channel(HIDDEN) ;
COMMENT : '#' ~[\r\n]* -> channel(HIDDEN) ;

// BAD_CHAR makes every input lex; the token source reports it and drops
// it.
BAD_CHAR : . ;
