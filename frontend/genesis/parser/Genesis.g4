// Genesis is the grammar of the Genesis language (.gen), from
// reference/kingdom/08-GENESIS.md §13. docs/genesis.md is the language as
// implemented, with every place where this grammar departs from the EBNF
// and why.
//
// The grammar fixes the shape of a program and nothing else: type names
// (u8, bool, ...), the contextual words `in`/`out` of asm bindings,
// registers and mnemonics are identifiers, which package genesis checks,
// so that they stay ordinary names everywhere else and every message about
// them can be precise.
//
// After editing this file, run `make generate` (scripts/antlr-generate.sh).

grammar Genesis;

// ── Program structure ──

program
    : item* EOF
    ;

item
    : function
    | typeAlias
    | structDef
    | enumDef
    ;

typeAlias
    : TYPE IDENT ASSIGN type SEMI
    ;

structDef
    : STRUCT IDENT LBRACE (field (COMMA field)* COMMA?)? RBRACE
    ;

field
    : IDENT COLON type
    ;

enumDef
    : ENUM IDENT LBRACE (variant (COMMA variant)* COMMA?)? RBRACE
    ;

variant
    : IDENT (LPAREN type (COMMA type)* RPAREN)?
    ;

function
    : FN IDENT LPAREN (param (COMMA param)*)? RPAREN ARROW type block
    ;

param
    : IDENT COLON type
    ;

// ── Types ──

type
    : STAR MUT? type                                          # pointerType
    | LBRACK type SEMI INTEGER RBRACK                         # arrayType
    | STAR FN LPAREN (type (COMMA type)*)? RPAREN ARROW type  # funcType
    | IDENT                                                   # namedType
    ;

// ── Blocks and statements ──

// block: a statement list whose last statement, when it is an
// expression without ';', is the block's value. The grammar reads every
// expression statement alike (an optional '=' and value, an optional
// ';'), so that each choice here is made from the next token or two:
// telling `x = 1;`, `x;` and a tail `x` apart any earlier would need the
// parser to look past the whole expression, which on nested input costs
// time quadratic in its depth. Package genesis then checks the ';' rules
// (only an `if` may end a statement without one) and the target of an
// assignment (§13's lvalue forms), and names the mistake precisely.
block
    : LBRACE statement* RBRACE
    ;

statement
    : letStmt
    | whileStmt
    | returnStmt
    | BREAK SEMI
    | CONTINUE SEMI
    | asmStmt
    | exprStmt
    ;

letStmt
    : LET MUT? IDENT COLON type ASSIGN expression SEMI
    ;

// exprStmt is an expression statement, an assignment or a block's tail.
exprStmt
    : expression (ASSIGN expression)? SEMI?
    ;

whileStmt
    : WHILE expression block SEMI?
    ;

returnStmt
    : RETURN expression? SEMI
    ;

// ── Inline assembly ──

asmStmt
    : ASM (LPAREN asmBinding (COMMA asmBinding)* RPAREN)? asmBody SEMI
    ;

// asmBinding is `in rN = expression` or `out lvalue = rN`. `in` and
// `out` are contextual, so both shapes are one rule here: the word, a
// unary (the register, or the lvalue), and an expression (the value, or
// the register). Package genesis tells them apart by the word.
asmBinding
    : IDENT unary ASSIGN expression
    ;

// asmBody holds instructions, each ended by a newline or ';'. The lexer
// skips newlines, so the line break is seen by the predicate: an
// instruction's operands start on its mnemonic's line (package genesis
// checks that two instructions do not share a line without ';').
asmBody
    : LBRACE (asmInstruction | SEMI)* RBRACE
    ;

asmInstruction
    : IDENT ({p.sameLine()}? asmOperand (COMMA asmOperand)*)?
    ;

asmOperand
    : IDENT
    | MINUS? INTEGER
    | BYTE
    ;

// ── Expressions, loosest first (§13's precedence table) ──

expression
    : orExpr
    | ifExpr
    | matchExpr
    | block
    ;

// ifExpr is an `if` statement or expression: package genesis requires
// the else where the if is used as a value.
ifExpr
    : IF expression block (ELSE (block | ifExpr))?
    ;

matchExpr
    : MATCH expression LBRACE matchArm (COMMA matchArm)* COMMA? RBRACE
    ;

matchArm
    : pattern FAT_ARROW expression
    ;

pattern
    : UNDERSCORE                                                        # wildcardPattern
    | MINUS? INTEGER                                                    # intPattern
    | BYTE                                                              # bytePattern
    | (TRUE | FALSE)                                                    # boolPattern
    | IDENT (LPAREN patternBinding (COMMA patternBinding)* RPAREN)?     # variantPattern
    ;

patternBinding
    : IDENT
    | UNDERSCORE
    ;

orExpr
    : andExpr (OROR andExpr)*
    ;

andExpr
    : cmpExpr (ANDAND cmpExpr)*
    ;

// cmpExpr is non-associative: `a < b < c` is a syntax error.
cmpExpr
    : bitorExpr (cmpOp bitorExpr)?
    ;

cmpOp
    : EQ | NE | LT | GT | LE | GE
    ;

bitorExpr
    : bitxorExpr (PIPE bitxorExpr)*
    ;

bitxorExpr
    : bitandExpr (CARET bitandExpr)*
    ;

bitandExpr
    : shiftExpr (AMP shiftExpr)*
    ;

shiftExpr
    : addExpr ((SHL | SHR) addExpr)*
    ;

addExpr
    : mulExpr ((PLUS | MINUS) mulExpr)*
    ;

mulExpr
    : castExpr ((STAR | SLASH | PERCENT) castExpr)*
    ;

castExpr
    : unary (AS type)*
    ;

unary
    : (BANG | MINUS | STAR | AMP | TILDE) unary
    | postfix
    ;

postfix
    : primary postfixOp*
    ;

postfixOp
    : LPAREN (expression (COMMA expression)*)? RPAREN   # callOp
    | LBRACK expression RBRACK                          # indexOp
    | DOT IDENT                                         # fieldOp
    | ARROW IDENT                                       # arrowOp
    ;

// primary: a struct literal `Name { field: value, ... }` is a Genesis
// addition (§13 has no way to build a struct value). IDENT comes first so
// that in the one ambiguous case, `if x {} ...`, the braces are the block
// of the `if`, as in Rust.
primary
    : INTEGER                                                   # intLit
    | BYTE                                                      # byteLit
    | STRING                                                    # stringLit
    | (TRUE | FALSE)                                            # boolLit
    | IDENT                                                     # identExpr
    | IDENT LBRACE (fieldInit (COMMA fieldInit)* COMMA?)? RBRACE # structLit
    | LPAREN expression RPAREN                                  # parenExpr
    | LBRACK expression SEMI INTEGER RBRACK                     # arrayLit
    ;

fieldInit
    : IDENT COLON expression
    ;

// ── Tokens (§3.2, §3.3) ──

// The 15 keywords of §3.3, and the literals true and false.
FN       : 'fn' ;
LET      : 'let' ;
MUT      : 'mut' ;
IF       : 'if' ;
ELSE     : 'else' ;
WHILE    : 'while' ;
RETURN   : 'return' ;
BREAK    : 'break' ;
CONTINUE : 'continue' ;
TYPE     : 'type' ;
STRUCT   : 'struct' ;
ENUM     : 'enum' ;
MATCH    : 'match' ;
AS       : 'as' ;
ASM      : 'asm' ;
TRUE     : 'true' ;
FALSE    : 'false' ;

UNDERSCORE : '_' ;

LPAREN    : '(' ;
RPAREN    : ')' ;
LBRACK    : '[' ;
RBRACK    : ']' ;
LBRACE    : '{' ;
RBRACE    : '}' ;
SEMI      : ';' ;
COLON     : ':' ;
COMMA     : ',' ;
DOT       : '.' ;
ARROW     : '->' ;
FAT_ARROW : '=>' ;
OROR      : '||' ;
ANDAND    : '&&' ;
EQ        : '==' ;
NE        : '!=' ;
LE        : '<=' ;
GE        : '>=' ;
SHL       : '<<' ;
SHR       : '>>' ;
LT        : '<' ;
GT        : '>' ;
ASSIGN    : '=' ;
BANG      : '!' ;
AMP       : '&' ;
PIPE      : '|' ;
CARET     : '^' ;
TILDE     : '~' ;
PLUS      : '+' ;
MINUS     : '-' ;
STAR      : '*' ;
SLASH     : '/' ;
PERCENT   : '%' ;
// '@' and '#' are symbols of §3.2 that no rule uses.
AT        : '@' ;
HASH      : '#' ;

// BYTE comes before INTEGER: `0yFF` matches both.
BYTE : '0y' HEX HEX ;

// INTEGER takes every alphanumeric character after the first digit, so
// that `0x1g` or `12ab` is one malformed number, which package genesis
// reports as such, rather than a number and a name.
INTEGER : [0-9] [0-9a-zA-Z_]* ;

IDENT : [a-zA-Z_] [a-zA-Z0-9_]* ;

// STRING accepts any escape; package genesis decodes it and reports a bad
// one at its exact column. A string may span lines.
STRING : '"' (~["\\] | '\\' .)* '"' ;

WS : [ \t\r\n]+ -> skip ;

LINE_COMMENT : '//' ~[\n]* -> skip ;

BLOCK_COMMENT : '/*' .*? '*/' -> skip ;

// UNTERMINATED_STRING, UNTERMINATED_COMMENT and BAD_CHAR are never
// accepted by the parser: they exist so that every input lexes, and the
// parser reports them with a precise message.
UNTERMINATED_STRING : '"' (~["\\] | '\\' .)* '\\'? ;

// UNTERMINATED_COMMENT is a '/*' never closed: it matches no '*/', so a
// closed comment is always the longer match.
UNTERMINATED_COMMENT : '/*' (~[*] | '*'+ ~[*/])* '*'* ;

BAD_CHAR : . ;

fragment HEX : [0-9a-fA-F] ;
