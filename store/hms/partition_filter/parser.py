"""Hive partition filters (`get_partitions_by_filter`): the parser.

Grammar (keywords case-insensitive, AND binds tighter than OR)::

    filter  := or EOF
    or      := and (OR and)*
    and     := unary (AND unary)*
    unary   := NOT unary | '(' or ')' | comparison
    comparison :=
          Identifier op Literal
        | Literal op Identifier                       -- operator flipped; not for LIKE
        | Identifier [NOT] BETWEEN Literal AND Literal
        | Identifier [NOT] IN '(' Literal (',' Literal)* ')'
        | '(' Identifier ')' [NOT] IN '(' Literal (',' Literal)* ')'
        | '(' STRUCT '(' Identifier (',' Identifier)* ')' ')' [NOT] IN
              '(' CONST STRUCT '(' Literal, ... ')' (',' CONST STRUCT '(' ... ')')* ')'
        | Identifier [NOT] LIKE Literal
        | Identifier IS [NOT] NULL                   -- column statistics predicates only
    op      := '=' | '==' | '<>' | '!=' | '<' | '<=' | '>' | '>=' | LIKE
    Literal := 'string' | "string"   -- a backslash pair never ends the literal; both characters
                                        are kept (as Hive's lexer does)
             | integer (optionally negative)
             | DATE 'yyyy-mm-dd' | yyyy-mm-dd
             | TIMESTAMP 'yyyy-mm-dd hh:mm:ss' | yyyy-mm-dd hh:mm:ss
    Identifier := [A-Za-z0-9_]+ (not all digits) | `back-quoted`  -- case-insensitive

Errors are `FilterError`, e.g.
``Error parsing partition filter "a = " at position 4: expected a literal``.
"""

from __future__ import annotations

from store.hms.partition_filter.errors import FilterError
from store.hms.partition_filter.lexer import (
    DATE_FULL,
    TIMESTAMP_FULL,
    Token,
    check_date,
    check_timestamp,
    tokenize,
)
from store.hms.partition_filter.nodes import And, Leaf, Literal, Node, Not, Or

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
# parentheses and NOTs nested deeper than this are refused (the parser, push_not and the SQL
# compiler recurse once per level)
MAX_NESTING = 100
_FLIP = {"=": "=", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.depth = 0

    # token helpers
    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Token:
        t = self.peek()
        self.i += 1
        return t

    def error(self, what: str, tok: Token | None = None) -> FilterError:
        tok = tok or self.peek()
        return FilterError(f"expected {what}, found {tok.describe()}", self.text, tok.pos) if tok.kind != "eof" \
            else FilterError(f"expected {what}", self.text, tok.pos)

    def is_kw(self, word: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t.kind == "kw" and t.value == word

    def is_word(self, word: str, k: int = 0) -> bool:
        """A contextual keyword (DATE, TIMESTAMP, STRUCT, CONST): an unquoted identifier."""
        t = self.peek(k)
        return t.kind == "ident" and not t.quoted and t.value.upper() == word

    def expect(self, kind: str, what: str) -> Token:
        if self.peek().kind != kind:
            raise self.error(what)
        return self.next()

    def expect_kw(self, word: str) -> None:
        if not self.is_kw(word):
            raise self.error(word)
        self.next()

    # grammar
    def parse(self) -> Node:
        node = self.parse_or()
        if self.peek().kind != "eof":
            if self.peek().kind == ")":
                raise FilterError("unbalanced ')'", self.text, self.peek().pos)
            raise self.error("AND, OR or end of filter")
        return node

    def parse_or(self) -> Node:
        items = [self.parse_and()]
        while self.is_kw("OR"):
            self.next()
            items.append(self.parse_and())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def parse_and(self) -> Node:
        items = [self.parse_unary()]
        while self.is_kw("AND"):
            self.next()
            items.append(self.parse_unary())
        return items[0] if len(items) == 1 else And(tuple(items))

    def parse_unary(self) -> Node:
        if self.is_kw("NOT") or self.peek().kind == "(":
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise FilterError(f"filter nested too deeply (more than {MAX_NESTING} levels of "
                                  "parentheses and NOT)", self.text, self.peek().pos)
            try:
                return self.parse_nested()
            finally:
                self.depth -= 1
        return self.parse_comparison()

    def parse_nested(self) -> Node:
        """NOT unary | '(' ... ')'."""
        if self.is_kw("NOT"):
            self.next()
            return Not(self.parse_unary())
        if self.peek().kind == "(":
            # '(' Identifier ')' [NOT] IN (...)
            if self.peek(1).kind == "ident" and self.peek(2).kind == ")" and (
                self.is_kw("IN", 3) or (self.is_kw("NOT", 3) and self.is_kw("IN", 4))
            ):
                self.next()
                ident = self.next()
                self.next()
                return self.parse_in(ident)
            # '(' STRUCT '(' Identifier, ... ')' ')' [NOT] IN (CONST STRUCT (...), ...)
            if self.is_word("STRUCT", 1) and self.peek(2).kind == "(":
                return self.parse_struct_in()
            self.next()
            node = self.parse_or()
            self.expect(")", "')'")
            return node
        return self.parse_comparison()

    def literal_start(self) -> bool:
        t = self.peek()
        if t.kind in ("string", "int", "date", "timestamp"):
            return True
        return (self.is_word("DATE") or self.is_word("TIMESTAMP")) and self.peek(1).kind == "string"

    def parse_literal(self) -> Literal:
        t = self.peek()
        if t.kind == "string":
            self.next()
            return Literal("string", t.value, t.value, t.pos)
        if t.kind == "int":
            self.next()
            value = int(t.value)
            if not _INT64_MIN <= value <= _INT64_MAX:
                raise FilterError("integer literal out of range", self.text, t.pos)
            return Literal("int", value, t.value, t.pos)
        if t.kind in ("date", "timestamp"):
            self.next()
            return Literal(t.kind, t.value, t.value, t.pos)
        for word, kind, full, check in (
            ("DATE", "date", DATE_FULL, check_date),
            ("TIMESTAMP", "timestamp", TIMESTAMP_FULL, check_timestamp),
        ):
            if self.is_word(word) and self.peek(1).kind == "string":
                self.next()
                s = self.next()
                if not full.fullmatch(s.value):
                    raise FilterError(
                        f"expected {'yyyy-mm-dd' if kind == 'date' else 'yyyy-mm-dd hh:mm:ss'} after {word}",
                        self.text, s.pos)
                check(self.text, s.value, s.pos)
                return Literal(kind, s.value, s.value, t.pos)
        raise self.error("a literal")

    def parse_ident(self) -> Token:
        t = self.peek()
        if t.kind != "ident":
            raise self.error("a partition column name")
        return self.next()

    def parse_comparison(self) -> Node:
        if self.literal_start():
            lit = self.parse_literal()
            t = self.peek()
            if t.kind == "kw" and t.value == "LIKE":
                raise FilterError("the column must be on the left of LIKE", self.text, t.pos)
            if t.kind != "op":
                raise self.error("a comparison operator")
            self.next()
            ident = self.parse_ident()
            return Leaf(ident.value.lower(), _FLIP[t.value], (lit,), ident.pos)
        if self.peek().kind != "ident":
            raise self.error("a partition column name, a literal, NOT or '('")
        ident = self.next()
        key = ident.value.lower()
        if self.is_word("IS"):
            return self.parse_is_null(key, ident)
        negated = False
        if self.is_kw("NOT"):
            self.next()
            negated = True
            if not (self.is_kw("BETWEEN") or self.is_kw("IN") or self.is_kw("LIKE")):
                raise self.error("BETWEEN, IN or LIKE after NOT")
        t = self.peek()
        if self.is_kw("BETWEEN"):
            self.next()
            lo = self.parse_literal()
            self.expect_kw("AND")
            hi = self.parse_literal()
            return Leaf(key, "NOT BETWEEN" if negated else "BETWEEN", (lo, hi), ident.pos)
        if self.is_kw("IN"):
            self.next()
            lits = self.parse_literal_list()
            return Leaf(key, "NOT IN" if negated else "IN", lits, ident.pos)
        if self.is_kw("LIKE"):
            self.next()
            return Leaf(key, "NOT LIKE" if negated else "LIKE", (self.parse_literal(),), ident.pos)
        if t.kind == "op":
            self.next()
            return Leaf(key, t.value, (self.parse_literal(),), ident.pos)
        raise self.error("a comparison operator")

    def parse_is_null(self, key: str, ident: Token) -> Node:
        """Identifier IS [NOT] NULL (column statistics predicates; partition filters refuse it)."""
        self.next()
        negated = self.is_kw("NOT")
        if negated:
            self.next()
        if not self.is_word("NULL"):
            raise self.error("NULL")
        self.next()
        return Leaf(key, "IS NOT NULL" if negated else "IS NULL", (), ident.pos)

    def parse_literal_list(self) -> tuple[Literal, ...]:
        self.expect("(", "'('")
        lits = [self.parse_literal()]
        while self.peek().kind == ",":
            self.next()
            lits.append(self.parse_literal())
        self.expect(")", "',' or ')'")
        return tuple(lits)

    def parse_in(self, ident: Token) -> Node:
        negated = False
        if self.is_kw("NOT"):
            self.next()
            negated = True
        self.expect_kw("IN")
        lits = self.parse_literal_list()
        return Leaf(ident.value.lower(), "NOT IN" if negated else "IN", lits, ident.pos)

    def parse_struct_in(self) -> Node:
        self.next()  # (
        self.next()  # STRUCT
        self.expect("(", "'('")
        idents = [self.parse_ident()]
        while self.peek().kind == ",":
            self.next()
            idents.append(self.parse_ident())
        self.expect(")", "',' or ')'")
        self.expect(")", "')'")
        negated = False
        if self.is_kw("NOT"):
            self.next()
            negated = True
        self.expect_kw("IN")
        self.expect("(", "'('")
        rows = []
        while True:
            if not (self.is_word("CONST") and self.is_word("STRUCT", 1)):
                raise self.error("CONST STRUCT(...)")
            self.next()
            self.next()
            pos = self.peek().pos
            row = self.parse_literal_list()
            if len(row) != len(idents):
                raise FilterError(f"expected {len(idents)} values in CONST STRUCT", self.text, pos)
            rows.append(row)
            if self.peek().kind != ",":
                break
            self.next()
        self.expect(")", "',' or ')'")
        alts = []
        for row in rows:
            eqs = tuple(Leaf(t.value.lower(), "=", (lit,), t.pos) for t, lit in zip(idents, row))
            alts.append(eqs[0] if len(eqs) == 1 else And(eqs))
        node = alts[0] if len(alts) == 1 else Or(tuple(alts))
        return Not(node) if negated else node


def parse_filter(text: str | None) -> Node:
    """Parse a Hive partition filter into a tree of And / Or / Not / Leaf; FilterError if invalid."""
    if text is None:
        raise FilterError("no filter", "", 0)
    return _Parser(text).parse()
