// Grimoire is the grammar of Grimoire spells (.spell), both the
// indentation syntax of reference/grimoire/grimoire-dsl-spec.md and the
// later brace syntax of the same language. docs/grimoire.md is the
// language as implemented; docs/grimoire-decisions-draft.md says why it
// departs from or goes beyond the specification where it does.
//
// One grammar reads both syntaxes into one tree. The lexer below does not
// see indentation: package grimoire puts a token source between it and
// the parser that turns line structure into NEWLINE, INDENT and DEDENT
// (tokens.go):
//
//   - Directly inside ( ) and [ ], line breaks are ignored.
//   - Directly inside { }, a line break separates (NEWLINE); indentation
//     is ignored. The whole of a brace-syntax spell is inside its braces.
//   - Outside all brackets, a deeper line opens a block (INDENT), a
//     shallower one closes blocks (DEDENT ... then NEWLINE), a line at the
//     same depth is a NEWLINE.
//
// The token source never emits NEWLINE first, last, twice in a row, after
// '{', ',' or INDENT, or before '}' or DEDENT, so every list below is
// "item (NEWLINE item)*" without optional separators. Blocks of either
// syntax thus have the same shape: ':' INDENT ... DEDENT or '{' ... '}'.
//
// The grammar fixes the shape of a spell and little more: section names,
// trigger kinds, pipeline stages and the values of options are names,
// which package grimoire checks, so that its messages can be precise and
// the words stay ordinary names everywhere else.
//
// After editing this file, run `make generate` (scripts/antlr-generate.sh).

grammar Grimoire;

tokens { INDENT, DEDENT }

// ── Spell ──

spell
    : SPELL name spellBody? EOF
    ;

spellBody
    : INDENT items DEDENT
    | NEWLINE? LBRACE items? RBRACE
    | NEWLINE items
    ;

items
    : item (NEWLINE item)*
    ;

item
    : importDecl
    | blockDecl
    | trigger
    | entry
    ;

importDecl
    : IMPORT STRING (AS name)?
    ;

blockDecl
    : BLOCK blockName=name (LPAREN (params+=name (COMMA params+=name)* COMMA?)? RPAREN)? suite
    ;

// trigger: `on manual:`, `on hourly:`, `on daily:`, `on "<cron>":`,
// `on condition <expr> [every <expr>]:`, `on event "<name>" [where <expr>]:`.
// The name after `on` says which; package grimoire checks the rest fits.
trigger
    : ON triggerSpec COLON block
    ;

triggerSpec
    : STRING                                                    # cronTrigger
    | name cond=expression? (EVERY every=expression)? (WHERE where=expression)?  # namedTrigger
    ;

// ── Entries: sections, mappings and object literals ──

// entry is `key: value`. A value is an expression, a mapping (an indented
// block of entries; in the brace syntax the same is an object literal), or
// a keyword used as a word (`action: halt`). Only guards take `with`
// metadata; package grimoire rejects it elsewhere.
entry
    : key COLON entryValue
    ;

key
    : name
    | STRING
    ;

entryValue
    : INDENT entries DEDENT         # mappingValue
    | expression withClause?        # exprValue
    | word                          # wordValue
    ;

entries
    : entry (NEWLINE entry)*
    ;

// ── Blocks of statements ──

// suite is the body of a compound statement: ':' and an indented block,
// or a braced block with or without the ':'.
suite
    : COLON block
    | braceBlock
    ;

block
    : INDENT statements DEDENT
    | braceBlock
    ;

braceBlock
    : LBRACE statements? RBRACE
    ;

statements
    : statement (NEWLINE statement)*
    ;

statement
    : ifStmt
    | forStmt
    | repeatStmt
    | loopStmt
    | tryStmt
    | parallelStmt
    | atomicStmt
    | emitStmt
    | haltStmt
    | waitStmt
    | passStmt
    | doStmt
    | assignStmt
    | exprStmt
    ;

ifStmt
    : IF expression suite (NEWLINE? elifClause)* (NEWLINE? elseClause)?
    ;

elifClause
    : ELIF expression suite
    ;

elseClause
    : ELSE suite
    ;

forStmt
    : FOR name IN expression suite
    ;

repeatStmt
    : REPEAT expression suite
    ;

loopStmt
    : LOOP UNTIL until=expression (MAX max=expression)? suite
    ;

tryStmt
    : TRY suite (NEWLINE? catchClause)* (NEWLINE? finallyClause)?
    ;

// catchClause: `catch <error>:`, `catch *:` or `catch:`. Its block holds
// statements and the entries `retry:` and `action:`.
catchClause
    : CATCH (STAR | name)? catchBody
    ;

catchBody
    : COLON INDENT catchItems DEDENT
    | COLON? LBRACE catchItems? RBRACE
    ;

catchItems
    : catchItem (NEWLINE catchItem)*
    ;

catchItem
    : entry
    | statement
    ;

finallyClause
    : FINALLY suite
    ;

// parallelStmt: `parallel join=all on_fail=abort:` and named branches.
parallelStmt
    : PARALLEL option* parallelBody
    ;

option
    : name ASSIGN expression
    ;

parallelBody
    : COLON INDENT branches DEDENT
    | COLON? LBRACE branches? RBRACE
    ;

branches
    : branch (NEWLINE branch)*
    ;

branch
    : name suite
    ;

atomicStmt
    : ATOMIC (failureMode=name | HALT)? suite
    ;

emitStmt
    : EMIT name (LPAREN args? RPAREN)?
    ;

haltStmt
    : HALT STRING?
    ;

waitStmt
    : WAIT expression
    ;

passStmt
    : PASS
    ;

doStmt
    : DO path+=name (DOT path+=name)* (LPAREN args? RPAREN)?
    ;

// assignStmt binds a name to an expression, a venue action's result
// (with its `using` and `with` clauses), a pipeline's result or an
// advisor's answer.
assignStmt
    : name ASSIGN (advise | expression (pipeline | actionClause*))
    ;

// exprStmt is a venue action or a pipeline whose result is dropped;
// package grimoire rejects any other expression as a statement.
exprStmt
    : expression (pipeline | actionClause*)
    ;

actionClause
    : USING name
    | withClause
    ;

withClause
    : WITH LPAREN withArg (COMMA withArg)* COMMA? RPAREN
    | WITH withArg (COMMA withArg)*
    ;

withArg
    : anyName ASSIGN expression
    ;

// pipeline: `| filter:`, `| map:`, `| reduce(<init>):`, `| take <n>:`,
// `| sort by <expr> order asc:`, ... each with a block. In the indentation
// syntax each stage starts a line at the statement's depth.
pipeline
    : stage (NEWLINE? stage)*
    ;

stage
    : PIPE op=name operand=expression? (BY by=expression)? (ORDER order=name)? suite
    ;

advise
    : ADVISE name COLON STRING (INDENT entries DEDENT | objectLit)?
    ;

args
    : arg (COMMA arg)* COMMA?
    ;

arg
    : (anyName ASSIGN)? expression
    ;

// ── Expressions, loosest first ──

expression
    : orExpr (QUESTION yes=expression COLON no=expression)?
    ;

orExpr
    : andExpr (OR andExpr)*
    ;

andExpr
    : notExpr (AND notExpr)*
    ;

// `not` binds looser than comparisons, as in Python: `not a > b` is
// `not (a > b)`.
notExpr
    : NOT notExpr
    | equality
    ;

equality
    : comparison ((EQ | NE) comparison)*
    ;

comparison
    : additive ((LT | GT | LE | GE) additive)*
    ;

additive
    : multiplicative ((PLUS | MINUS) multiplicative)*
    ;

multiplicative
    : unary ((STAR | SLASH | PERCENT) unary)*
    ;

unary
    : (MINUS | PLUS) unary
    | postfix
    ;

postfix
    : primary postfixOp*
    ;

postfixOp
    : DOT anyName                 # memberOp
    | LBRACK expression RBRACK    # indexOp
    | LPAREN args? RPAREN         # callOp
    ;

// A unit literal (`1.5 USDC`, `50 bps`) is a number and a name on the
// same line; not when `=` follows the name, which then starts an option
// (`parallel count=2 join=any`).
primary
    : NUMBER ({p.unitFollows()}? ID)?   # numberLit
    | PERCENT_NUMBER                    # percentLit
    | DURATION                          # durationLit
    | HEX                               # hexLit
    | STRING                            # stringLit
    | (TRUE | FALSE)                    # boolLit
    | VENUE_REF                         # venueLit
    | ADVISORY (VIA name)?              # advisoryLit
    | LBRACK (expression (COMMA expression)* COMMA?)? RBRACK  # listLit
    | objectLit                         # objectExpr
    | LPAREN expression RPAREN          # parenExpr
    | name                              # nameExpr
    ;

// objectLit: entries separated by commas or line breaks.
objectLit
    : LBRACE (entry ((COMMA | NEWLINE) entry)* COMMA?)? RBRACE
    ;

// ── Names ──

// name is an identifier, or one of the contextual keywords, which are
// ordinary names where no construct needs them: `max(a, b)`, `block.number`.
name
    : ID | MAX | EVERY | WHERE | BY | ORDER | BLOCK
    ;

// anyName is a name or any keyword: what may follow '.', or name an
// argument, where no keyword is expected.
anyName
    : name | word | TRUE | FALSE | NOT | WITH
    ;

// word is a keyword that cannot start an expression, as the value of an
// entry: `action: halt`.
word
    : SPELL | IMPORT | AS | ON | IF | ELIF | ELSE | FOR | IN | REPEAT | LOOP
    | UNTIL | TRY | CATCH | FINALLY | PARALLEL | ATOMIC | EMIT | HALT | WAIT
    | PASS | DO | ADVISE | USING | VIA | AND | OR
    ;

// ── Lexer ──

SPELL    : 'spell' ;
IMPORT   : 'import' ;
AS       : 'as' ;
BLOCK    : 'block' ;
ON       : 'on' ;
IF       : 'if' ;
ELIF     : 'elif' ;
ELSE     : 'else' ;
FOR      : 'for' ;
IN       : 'in' ;
REPEAT   : 'repeat' ;
LOOP     : 'loop' ;
UNTIL    : 'until' ;
MAX      : 'max' ;
TRY      : 'try' ;
CATCH    : 'catch' ;
FINALLY  : 'finally' ;
PARALLEL : 'parallel' ;
ATOMIC   : 'atomic' ;
EMIT     : 'emit' ;
HALT     : 'halt' ;
WAIT     : 'wait' ;
PASS     : 'pass' ;
DO       : 'do' ;
ADVISE   : 'advise' ;
USING    : 'using' ;
WITH     : 'with' ;
VIA      : 'via' ;
EVERY    : 'every' ;
WHERE    : 'where' ;
BY       : 'by' ;
ORDER    : 'order' ;
AND      : 'and' ;
OR       : 'or' ;
NOT      : 'not' ;
TRUE     : 'true' ;
FALSE    : 'false' ;

// ADVISORY is `**prompt**`, which may span lines. It comes before STAR
// (and no operator is `**`), so `**` always opens a prompt.
ADVISORY : '**' .*? '**' ;

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
SLASH    : '/' ;
PERCENT  : '%' ;
QUESTION : '?' ;
COLON    : ':' ;
COMMA    : ',' ;
DOT      : '.' ;
PIPE     : '|' ;
LPAREN   : '(' ;
RPAREN   : ')' ;
LBRACK   : '[' ;
RBRACK   : ']' ;
LBRACE   : '{' ;
RBRACE   : '}' ;

// Numbers. A percentage (`50%`) and a duration (`5m`) are one token with
// their suffix: `17 % 5` is a remainder, `17%` a percentage. HEX (`0x…`,
// an address) comes before BAD_NUMBER, which would match it as long.
PERCENT_NUMBER : DIGITS ('.' DIGITS)? '%' ;
DURATION       : DIGITS ('.' DIGITS)? [smhd] ;
HEX            : '0x' [0-9a-fA-F]+ ;
NUMBER         : DIGITS ('.' DIGITS)? ;

// BAD_NUMBER is a number run into letters (`5min`, `50bps`, `1e18`), so
// that it is one malformed token, reported as such, rather than a number
// and a name.
BAD_NUMBER : DIGITS ('.' DIGITS)? [a-zA-Z_] [a-zA-Z0-9_]* ;

VENUE_REF : '@' [a-zA-Z_] [a-zA-Z0-9_]* ;

ID : [a-zA-Z_] [a-zA-Z0-9_]* ;

// STRING is single- or double-quoted and may span lines; package grimoire
// decodes its escapes and reports a bad one at its exact column.
STRING
    : '"' (~["\\] | '\\' .)* '"'
    | '\'' (~['\\] | '\\' .)* '\''
    ;

NEWLINE : '\r'? '\n' | '\r' ;

WS : [ \t\f]+ -> skip ;

COMMENT : '#' ~[\r\n]* -> skip ;

// UNTERMINATED_STRING, UNTERMINATED_ADVISORY and BAD_CHAR are never
// accepted by the parser: they exist so that every input lexes, and the
// parser reports them with a precise message.
UNTERMINATED_STRING
    : '"' (~["\\] | '\\' .)* '\\'?
    | '\'' (~['\\] | '\\' .)* '\\'?
    ;

UNTERMINATED_ADVISORY : '**' (~'*' | '*' ~'*')* '*'? ;

BAD_CHAR : . ;

fragment DIGITS : [0-9]+ ;
