// Condition.g4: the condition language of nano-vm `condition` steps
// (docs/nanovm.md). Precedence, loosest first: or, and, not, then one
// comparison (comparisons do not chain); parentheses group.
//
//   $answer == "yes" and not ($score < 0.5 or $flags contains 'stop')
grammar Condition;

condition : orExpr EOF ;

orExpr  : andExpr (OR andExpr)* ;
andExpr : notExpr (AND notExpr)* ;
notExpr : NOT notExpr | comparison ;

comparison : operand (compOp operand)? ;

compOp : EQ | NE | GT | GE | LT | LE | IN | NOT IN | CONTAINS ;

operand
    : VAR
    | STRING
    | NUMBER
    | TRUE
    | FALSE
    | NONE
    | LPAREN orExpr RPAREN
    ;

// Keywords come before WORD, so that a keyword is not a word.
AND      : 'and' ;
OR       : 'or' ;
NOT      : 'not' ;
IN       : 'in' ;
CONTAINS : 'contains' ;
TRUE     : 'True' ;
FALSE    : 'False' ;
NONE     : 'None' ;

EQ : '==' ;
NE : '!=' ;
GE : '>=' ;
LE : '<=' ;
GT : '>' ;
LT : '<' ;

LPAREN : '(' ;
RPAREN : ')' ;

// $name or $name.path.to.field: segments of letters, digits and '_'.
VAR : '$' SEGMENT ('.' SEGMENT)* ;
fragment SEGMENT : [\p{L}\p{N}_]+ ;

// Strings have no escapes: everything between the quotes is the string.
STRING : '\'' ~['\r\n]* '\'' | '"' ~["\r\n]* '"' ;
UNTERMINATED_STRING : '\'' ~['\r\n]* | '"' ~["\r\n]* ;

NUMBER : '-'? [0-9]+ ('.' [0-9]+)? ;

// A bare word is no part of the language; the lexer makes a token of it
// so that the error names the word.
WORD : [\p{L}_] [\p{L}\p{N}_]* ;

WS : [ \t\r\n]+ -> skip ;

// Anything else (arithmetic, '[', a lone '$' or '=') is an error.
BAD_CHAR : . ;
