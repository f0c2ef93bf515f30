// FASM is the grammar of Forge assembly (.fasm), the textual form of
// Forge Machine programs. docs/fasm.md is the language reference.
//
// The grammar fixes the shape of a line: labels, then at most one
// instruction or directive with comma-separated operands. It knows no
// mnemonic and no directive name: the assembler (frontend/fasm) checks them
// and their operands against the opcode table of forge/bytecode, so the
// table stays the single source of truth for the instruction set.
//
// After editing this file, run `make generate` (scripts/antlr-generate.sh).

grammar FASM;

// line is the start rule. The assembler splits a file at its newlines and
// parses each line on its own, so that a syntax error, and the parser's
// recovery from it, never reach past the end of its line.
line
    : label* statement? EOF
    ;

// label defines a name for the address of what follows it.
label
    : name COLON
    ;

statement
    : instruction
    | directive
    ;

instruction
    : IDENT operandList?
    ;

// directive: only .import takes a HASH, written before its operand list
// without a comma.
directive
    : DIRECTIVE HASH? operandList?
    ;

operandList
    : operand (COMMA operand)*
    ;

operand
    : REG          # regOperand
    | MINUS? INT   # intOperand
    | name         # nameOperand
    ;

// name is a symbol: an identifier, or a quoted string for a name that is
// not an identifier (the quoted form of a name is also a string operand of
// .ascii and .meta).
name
    : IDENT
    | STRING
    ;

WS : [ \t\r]+ -> skip ;

COMMENT : (';' | '//') ~[\n]* -> skip ;

COMMA : ',' ;

COLON : ':' ;

MINUS : '-' ;

// HASH is a sha256 in hexadecimal. It comes before REG, INT and IDENT so
// that a 64-digit run lexes as a hash although they match it too.
HASH : H8 H8 H8 H8 H8 H8 H8 H8 ;

// REG comes before IDENT: r0..r255 are registers, never names.
REG : [rR] [0-9]+ ;

// INT takes every alphanumeric character after the first digit, so that
// 0x1g or 12ab is one malformed number rather than a number and a name.
INT : [0-9] [0-9a-zA-Z_]* ;

IDENT : [a-zA-Z_] [a-zA-Z0-9_.]* ;

DIRECTIVE : '.' [a-zA-Z_] [a-zA-Z0-9_]* ;

// STRING accepts any escape; the assembler decodes it and reports a bad
// one at its exact column.
STRING : '"' (~["\\\n] | '\\' ~[\n])* '"' ;

// UNTERMINATED_STRING and BAD_CHAR are never accepted by the parser: they
// exist so that every input lexes, and the parser reports them with a
// precise message.
UNTERMINATED_STRING : '"' (~["\\\n] | '\\' ~[\n])* '\\'? ;

BAD_CHAR : . ;

fragment H8 : H H H H H H H H ;

fragment H : [0-9a-fA-F] ;
