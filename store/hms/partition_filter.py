"""Hive partition filters (`get_partitions_by_filter`): parser and SQL compiler.

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
    op      := '=' | '==' | '<>' | '!=' | '<' | '<=' | '>' | '>=' | LIKE
    Literal := 'string' | "string"   -- a backslash pair never ends the literal; both characters are kept (as Hive's lexer does)
             | integer (optionally negative)
             | DATE 'yyyy-mm-dd' | yyyy-mm-dd
             | TIMESTAMP 'yyyy-mm-dd hh:mm:ss' | yyyy-mm-dd hh:mm:ss
    Identifier := [A-Za-z0-9_]+ (not all digits) | `back-quoted`  -- case-insensitive

Semantics of `compile_filter` (the result is a WHERE clause over `partitions`):

* Integral partition keys (tinyint, smallint, int, integer, bigint) compare numerically on
  `partition_key_val.part_key_num`; a value that is not an integer (the default partition
  `__HIVE_DEFAULT_PARTITION__`, ...) never satisfies a numeric comparison, not even under NOT:
  NOT is pushed down to the leaves (De Morgan, inverted operators), so every leaf is a positive
  test on one key row. Comparing an integral key with a string or date literal is an error.
* Every other key compares as a string on `part_key_val`, in code point order on every backend;
  integer literals compare as their text, date / timestamp literals as 'yyyy-mm-dd[ hh:mm:ss]'.
* Key types, as Hive 2.3 filters them: `string` keys compare as strings (string or bare date
  literals; an integer literal is an error); integral keys numerically; `date` keys as dates (a
  string literal must read as yyyy-M-d the way Java's SimpleDateFormat does, leading blanks and
  trailing text allowed; the default partition never matches); keys of any other type
  (varchar, char, double, timestamp, ...) cannot be filtered on. These errors say
  "Filtering is supported only on partition keys of type string", as Hive's do.
* LIKE (string keys only) is what Hive's store makes of the pattern (DataNucleus turns the
  "regular expression" into SQL LIKE): `.*` matches any run of characters, `.` any one
  character, a backslash before a dot a dot, and every other character only itself (`%`, `_`, `(`, `[`, `*`, `+`,
  `?`, `|` included); the whole value must match, case-sensitively (`ds like "us.*"` is what
  Spark sends for `startsWith("us")`). It runs as an anchored regular expression built from
  those rules: PostgreSQL `~`, MySQL/MariaDB `REGEXP` under a binary collation, SQLite the
  `hms_regexp` function that store/db/engine.py registers on every connection.
* Ordering / equality per backend: SQLite's BINARY collation is code point order; PostgreSQL
  compares ranges `COLLATE "C"` (equality is exact under any deterministic collation);
  MySQL / MariaDB compare `CAST(CONVERT(x USING utf8mb4) AS BINARY)` on both sides (the
  default collations ignore case and trailing spaces); equality and IN also keep a plain
  `part_key_val = v` so the index is used.
* Each leaf is `partitions.part_id IN (SELECT part_id FROM partition_key_val WHERE tbl_id = :t
  AND key_idx = :i AND <test>)`, which the `(tbl_id, key_idx, part_key_val|part_key_num)`
  indexes serve. Nothing is evaluated in Python.

Errors are `FilterError` (a ValueError); `str(err)` is the text for a MetaException, e.g.
``Error parsing partition filter "a = " at position 4: expected a literal``.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Union

from sqlalchemy import Boolean, and_, bindparam, exists, func, not_, or_, select, union
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement

from store.db.schema import partition_key_val, partitions

__all__ = [
    "FilterError",
    "Literal",
    "Leaf",
    "And",
    "Or",
    "Not",
    "parse_filter",
    "push_not",
    "compile_filter",
    "INTEGRAL_TYPES",
    "is_integral",
]

INTEGRAL_TYPES = frozenset({"tinyint", "smallint", "int", "integer", "bigint"})
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class FilterError(ValueError):
    """An invalid partition filter; `str(err)` is a complete message for a MetaException."""

    def __init__(self, message: str, text: str | None = None, pos: int | None = None):
        self.reason = message
        self.text = text
        self.pos = pos
        if text is not None and pos is not None:
            message = f'Error parsing partition filter "{text}" at position {pos}: {message}'
        elif text is not None:
            message = f'Error parsing partition filter "{text}": {message}'
        super().__init__(message)


# --- AST -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Literal:
    kind: str  # "string" | "int" | "date" | "timestamp"
    value: str | int  # str for string/date/timestamp, int for int
    text: str  # the value as a string: the string itself, the integer as written, the date text
    pos: int = -1

    def __repr__(self) -> str:
        return f"{self.kind}:{self.text!r}"


@dataclass(frozen=True)
class Leaf:
    """One test of one partition key. `op` is one of
    = != < <= > >= LIKE, NOT LIKE, IN, NOT IN, BETWEEN, NOT BETWEEN."""

    key: str  # lower-cased
    op: str
    values: tuple[Literal, ...]
    pos: int = -1  # position of the identifier


@dataclass(frozen=True)
class And:
    items: tuple


@dataclass(frozen=True)
class Or:
    items: tuple


@dataclass(frozen=True)
class Not:
    item: object


Node = Union[Leaf, And, Or, Not]

_NEGATE = {
    "=": "!=",
    "!=": "=",
    "<": ">=",
    ">=": "<",
    ">": "<=",
    "<=": ">",
    "LIKE": "NOT LIKE",
    "NOT LIKE": "LIKE",
    "IN": "NOT IN",
    "NOT IN": "IN",
    "BETWEEN": "NOT BETWEEN",
    "NOT BETWEEN": "BETWEEN",
}
_FLIP = {"=": "=", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


def push_not(node: Node, negate: bool = False) -> Node:
    """The same filter without Not nodes: negations inverted into the leaves (De Morgan)."""
    if isinstance(node, Not):
        return push_not(node.item, not negate)
    if isinstance(node, And):
        items = tuple(push_not(i, negate) for i in node.items)
        return Or(items) if negate else And(items)
    if isinstance(node, Or):
        items = tuple(push_not(i, negate) for i in node.items)
        return And(items) if negate else Or(items)
    if negate:
        return Leaf(node.key, _NEGATE[node.op], node.values, node.pos)
    return node


# --- tokenizer -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Tok:
    kind: str  # ident kw op ( ) , string int date timestamp eof
    value: object
    pos: int
    quoted: bool = False  # back-quoted identifier (never a keyword)

    def describe(self) -> str:
        if self.kind == "eof":
            return "end of filter"
        if self.kind == "string":
            return "a string literal"
        if self.kind in ("int", "date", "timestamp"):
            return f"{self.kind} literal"
        return repr(str(self.value))


_RESERVED = {"AND", "OR", "NOT", "IN", "LIKE", "BETWEEN"}
_OPS = ("<=", ">=", "<>", "!=", "==", "=", "<", ">")
_OP_NORMAL = {"==": "=", "<>": "!="}
_WORD = re.compile(r"[A-Za-z0-9_]+")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?![A-Za-z0-9_])")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?![A-Za-z0-9_])")
_DATE_FULL = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP_FULL = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")


def _check_date(text: str, value: str, pos: int) -> str:
    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        raise FilterError(f"invalid date {value!r}", text, pos) from None
    return value


def _check_timestamp(text: str, value: str, pos: int) -> str:
    try:
        _dt.datetime.strptime(value, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        raise FilterError(f"invalid timestamp {value!r}", text, pos) from None
    return value


def _tokenize(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c in "(),":
            toks.append(_Tok(c, c, i))
            i += 1
            continue
        op = next((o for o in _OPS if text.startswith(o, i)), None)
        if op:
            toks.append(_Tok("op", _OP_NORMAL.get(op, op), i))
            i += len(op)
            continue
        if c in "'\"":
            start, i, buf = i, i + 1, []
            while True:
                if i >= n:
                    raise FilterError("unterminated string literal", text, start)
                ch = text[i]
                if ch == "\\":
                    if i + 1 >= n:
                        raise FilterError("unterminated string literal", text, start)
                    buf.append(text[i : i + 2])  # Hive keeps the backslash; it only stops the quote ending the literal
                    i += 2
                elif ch == c:
                    i += 1
                    break
                else:
                    buf.append(ch)
                    i += 1
            toks.append(_Tok("string", "".join(buf), start))
            continue
        if c == "`":
            start, i, buf = i, i + 1, []
            while True:
                if i >= n:
                    raise FilterError("unterminated back-quoted identifier", text, start)
                if text[i] == "`":
                    if text.startswith("``", i):  # `` inside back quotes is one back quote
                        buf.append("`")
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(text[i])
                i += 1
            if not buf:
                raise FilterError("empty identifier", text, start)
            toks.append(_Tok("ident", "".join(buf), start, quoted=True))
            continue
        if c.isdigit():
            m = _TIMESTAMP.match(text, i)
            if m:
                toks.append(_Tok("timestamp", _check_timestamp(text, m.group(), i), i))
                i = m.end()
                continue
            m = _DATE.match(text, i)
            if m:
                toks.append(_Tok("date", _check_date(text, m.group(), i), i))
                i = m.end()
                continue
        if c == "-" and i + 1 < n and text[i + 1].isdigit():
            m = _WORD.match(text, i + 1)
            if not m.group().isdigit():
                raise FilterError("invalid number", text, i)
            toks.append(_Tok("int", text[i : m.end()], i))
            i = m.end()
            continue
        m = _WORD.match(text, i)
        if m and m.group().isascii():
            word = m.group()
            if word.isdigit():
                toks.append(_Tok("int", word, i))
            elif word.upper() in _RESERVED:
                toks.append(_Tok("kw", word.upper(), i))
            else:
                toks.append(_Tok("ident", word, i))
            i = m.end()
            continue
        raise FilterError(f"unexpected character {c!r}", text, i)
    toks.append(_Tok("eof", None, n))
    return toks


# --- parser --------------------------------------------------------------------------------------


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0

    # token helpers
    def peek(self, k: int = 0) -> _Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> _Tok:
        t = self.peek()
        self.i += 1
        return t

    def error(self, what: str, tok: _Tok | None = None) -> FilterError:
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

    def expect(self, kind: str, what: str) -> _Tok:
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
            ("DATE", "date", _DATE_FULL, _check_date),
            ("TIMESTAMP", "timestamp", _TIMESTAMP_FULL, _check_timestamp),
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

    def parse_ident(self) -> _Tok:
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

    def parse_literal_list(self) -> tuple[Literal, ...]:
        self.expect("(", "'('")
        lits = [self.parse_literal()]
        while self.peek().kind == ",":
            self.next()
            lits.append(self.parse_literal())
        self.expect(")", "',' or ')'")
        return tuple(lits)

    def parse_in(self, ident: _Tok) -> Node:
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


def parse_filter(text: str) -> Node:
    """Parse a Hive partition filter into a tree of And / Or / Not / Leaf; FilterError if invalid."""
    if text is None:
        raise FilterError("no filter", "", 0)
    return _Parser(text).parse()


# --- SQL -----------------------------------------------------------------------------------------


def is_integral(hive_type: str) -> bool:
    base = hive_type.strip().lower().split("(", 1)[0].strip()
    return base in INTEGRAL_TYPES


class _PerDialect(ColumnElement):
    """A boolean expression whose SQL depends on the backend it is compiled for. Its bound
    values are created while compiling, so statements holding one are not cached."""

    inherit_cache = False
    type = Boolean()
    _is_implicitly_boolean = True  # render as is, never `... = 1`

    def __init__(self, build: Callable[[str], ColumnElement]):
        self.build = build


@compiles(_PerDialect)
def _compile_per_dialect(element, compiler, **kw):
    return "(" + compiler.process(element.build(compiler.dialect.name), **kw) + ")"


class _MyBinary(ColumnElement):
    """MySQL/MariaDB: the expression as utf8mb4 bytes (exact, code point order, no padding)."""

    inherit_cache = False

    def __init__(self, expr):
        self.expr = expr
        self.type = expr.type


@compiles(_MyBinary)
def _compile_mybinary(element, compiler, **kw):
    return f"CAST(CONVERT({compiler.process(element.expr, **kw)} USING utf8mb4) AS BINARY)"


class _MyConvertBin(ColumnElement):
    """MySQL/MariaDB: `CONVERT(x USING utf8mb4) COLLATE utf8mb4_bin`, for a case-sensitive LIKE."""

    inherit_cache = False

    def __init__(self, expr):
        self.expr = expr
        self.type = expr.type


@compiles(_MyConvertBin)
def _compile_myconvertbin(element, compiler, **kw):
    return f"CONVERT({compiler.process(element.expr, **kw)} USING utf8mb4) COLLATE utf8mb4_bin"


def like_to_regex(pattern: str) -> str:
    """A Hive LIKE pattern as a regular expression (unanchored) in the syntax PostgreSQL, MariaDB
    and Python share: `.*` and `.` keep their meaning, a backslash before a dot is a dot (two
    backslashes stay two), everything else is literal (checked against the reference metastore)."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "." and pattern[i + 1:i + 2] == "*":
            out.append(".*")
            i += 2
            continue
        if ch == "\\" and pattern[i + 1:i + 2] == ".":
            out.append("\\.")
            i += 2
            continue
        if ch == "\\" and pattern[i + 1:i + 2] == "\\":  # a pair stays two backslashes
            out.append("\\\\\\\\")
            i += 2
            continue
        out.append("." if ch == "." else ch if ch.isalnum() or ch == "_" or ord(ch) > 127 else "\\" + ch)
        i += 1
    return "".join(out)


def _like_regex(pattern: str) -> str:
    """The anchored regular expression of a Hive LIKE pattern."""
    return f"^(?:{like_to_regex(pattern)})$"


def _string_test(op: str, values: Sequence[str]) -> _PerDialect:
    col = partition_key_val.c.part_key_val

    def build(dialect: str):
        if op in ("LIKE", "NOT LIKE"):
            (pattern,) = values
            if dialect == "sqlite":
                test = func.hms_regexp(like_to_regex(pattern), col) == 1
            elif dialect in ("mysql", "mariadb"):
                test = _MyConvertBin(col).op("REGEXP", is_comparison=True)(_like_regex(pattern))
            else:
                test = col.op("~", is_comparison=True)(_like_regex(pattern))
            return not_(test) if op == "NOT LIKE" else test

        binds = [bindparam(None, v, type_=col.type) for v in values]
        if dialect in ("mysql", "mariadb"):
            ordered = _MyBinary(col)
            cmp_binds = [_MyBinary(b) for b in binds]
            index_col = col  # the indexed column, case- and pad-insensitive: a superset test
        elif dialect == "postgresql":
            ordered = col.collate("C")
            cmp_binds = binds
            index_col = None
        else:
            ordered = col
            cmp_binds = binds
            index_col = None
        exact = col if dialect != "mysql" and dialect != "mariadb" else ordered

        if op == "=":
            test = exact == cmp_binds[0]
            return and_(index_col == binds[0], test) if index_col is not None else test
        if op == "!=":
            return exact != cmp_binds[0]
        if op == "IN":
            test = exact.in_(cmp_binds)
            return and_(index_col.in_(binds), test) if index_col is not None else test
        if op == "NOT IN":
            return exact.not_in(cmp_binds)
        if op == "<":
            return ordered < cmp_binds[0]
        if op == "<=":
            return ordered <= cmp_binds[0]
        if op == ">":
            return ordered > cmp_binds[0]
        if op == ">=":
            return ordered >= cmp_binds[0]
        if op == "BETWEEN":
            return and_(ordered >= cmp_binds[0], ordered <= cmp_binds[1])
        if op == "NOT BETWEEN":
            return or_(ordered < cmp_binds[0], ordered > cmp_binds[1])
        raise AssertionError(op)

    return _PerDialect(build)


def _numeric_test(op: str, values: Sequence[int]):
    col = partition_key_val.c.part_key_num
    b = [bindparam(None, v, type_=col.type) for v in values]
    if op == "=":
        return col == b[0]
    if op == "!=":
        return col != b[0]
    if op == "<":
        return col < b[0]
    if op == "<=":
        return col <= b[0]
    if op == ">":
        return col > b[0]
    if op == ">=":
        return col >= b[0]
    if op == "IN":
        return col.in_(b)
    if op == "NOT IN":
        return col.not_in(b)
    if op == "BETWEEN":
        return and_(col >= b[0], col <= b[1])
    if op == "NOT BETWEEN":
        return or_(col < b[0], col > b[1])
    raise AssertionError(op)


UNSUPPORTED_TYPE = "Filtering is supported only on partition keys of type string"
_DATE_PREFIX = re.compile(r"[ \t]*(\d+)-[ \t]*(\d+)-[ \t]*(\d+)")


def key_kind(hive_type: str) -> str:
    """How a partition key can be filtered: "integral", "string", "date" or "other" (not at all)."""
    t = hive_type.strip().lower()
    if is_integral(t):
        return "integral"
    return t if t in ("string", "date") else "other"


def _date_text(lit: Literal, text: str) -> str:
    """A literal compared with a date key, as yyyy-mm-dd (Hive: SimpleDateFormat("yyyy-MM-dd"),
    not lenient, parsing a prefix of the string)."""
    if lit.kind == "date":
        return str(lit.value)
    if lit.kind == "string":
        m = _DATE_PREFIX.match(str(lit.value))
        if m:
            try:
                return _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).isoformat()
            except ValueError:
                pass
    raise FilterError(UNSUPPORTED_TYPE, text, lit.pos)


def _leaf_sql(leaf: Leaf, text: str, tbl_id: int, keys: dict[str, tuple[int, str]]):
    if leaf.key not in keys:
        names = ", ".join(keys) or "none"
        raise FilterError(f"{leaf.key} is not a partition key (partition keys: {names})", text, leaf.pos)
    idx, kind = keys[leaf.key]
    integral = kind == "integral"
    if kind == "other" or (kind == "date" and leaf.op in ("LIKE", "NOT LIKE")):
        raise FilterError(UNSUPPORTED_TYPE, text, leaf.pos)
    if kind == "date":
        test = and_(partition_key_val.c.part_key_val != "__HIVE_DEFAULT_PARTITION__",
                    _string_test(leaf.op, [_date_text(lit, text) for lit in leaf.values]))
    elif integral:
        if leaf.op in ("LIKE", "NOT LIKE"):
            raise FilterError(f"LIKE is not supported on integer partition key {leaf.key}", text, leaf.pos)
        for lit in leaf.values:
            if lit.kind != "int":
                raise FilterError(
                    f"cannot compare integer partition key {leaf.key} with a {lit.kind} literal", text, lit.pos)
        test = _numeric_test(leaf.op, [lit.value for lit in leaf.values])
    else:
        for lit in leaf.values:
            if lit.kind == "int":
                raise FilterError(UNSUPPORTED_TYPE, text, lit.pos)
        test = _string_test(leaf.op, [lit.text for lit in leaf.values])
    kv = partition_key_val
    return select(kv.c.part_id).where(kv.c.tbl_id == tbl_id, kv.c.key_idx == idx, test)


# How many rows a leaf is likely to select, as a rank (lower: fewer): the driver of an AND starts
# from its lowest-ranked side.
_LEAF_RANK = {"=": 1, "IN": 2, "BETWEEN": 4, "<": 5, "<=": 5, ">": 5, ">=": 5, "LIKE": 6,
              "NOT BETWEEN": 8, "NOT LIKE": 9, "!=": 9, "NOT IN": 9}


def compile_filter(text: str, tbl_id: int, partition_keys: list[tuple[str, str]],
                   driven: bool | str = False) -> ColumnElement:
    """A WHERE clause over `store.db.schema.partitions` selecting the partitions of table `tbl_id`
    that match the Hive filter `text`; use with `partitions.c.tbl_id == tbl_id`.
    `partition_keys`: the table's partition columns in order, as (name, hive type).

    `driven`: also require `part_id IN (driver)`, where the driver is a superset of the answer
    built from the key-value index alone (a leaf's rows; an OR's union; an AND's likely smallest
    side), so that the database starts from the index and the cost follows the answer, not the
    table (SQLite and PostgreSQL otherwise walk every partition of the table for an OR).
    `driven="or"`: only when the filter has an OR (PostgreSQL plans ANDs of IN-subqueries as joins
    from the index already, choosing the side by its statistics)."""
    tree = push_not(parse_filter(text))
    keys = {name.lower(): (i, key_kind(t)) for i, (name, t) in enumerate(partition_keys)}
    leaf_selects: dict[int, object] = {}

    def leaf(node):
        if id(node) not in leaf_selects:
            leaf_selects[id(node)] = _leaf_sql(node, text, tbl_id, keys)
        return leaf_selects[id(node)]

    def walk(node, per_row: bool = False):
        """`per_row`: leaves as correlated EXISTS on the key row of each partition (one primary-key
        lookup per driven row), instead of IN over every partition matching the leaf."""
        if isinstance(node, Leaf):
            if not per_row:
                return partitions.c.part_id.in_(leaf(node))
            sub = leaf(node)
            return exists(sub.where(partition_key_val.c.part_id == partitions.c.part_id))
        parts = [walk(i, per_row) for i in node.items]
        return and_(*parts) if isinstance(node, And) else or_(*parts)

    def rank(node) -> int:
        if isinstance(node, Leaf):
            return _LEAF_RANK.get(node.op, 9)
        ranks = [rank(i) for i in node.items]
        return min(ranks) if isinstance(node, And) else sum(ranks)

    def driver(node) -> list:
        """Selects whose union is a superset of the node's partitions."""
        if isinstance(node, Leaf):
            return [leaf(node)]
        if isinstance(node, And):
            return driver(min(node.items, key=rank))
        return [s for i in node.items for s in driver(i)]

    def has_or(node) -> bool:
        return isinstance(node, Or) or (isinstance(node, And) and any(has_or(i) for i in node.items))

    def has_and(node) -> bool:
        return isinstance(node, And) or (isinstance(node, Or) and any(has_and(i) for i in node.items))

    if not driven or (driven == "or" and not has_or(tree)):
        return walk(tree)
    selects = driver(tree)
    drive = partitions.c.part_id.in_(selects[0] if len(selects) == 1 else union(*selects))
    # without an AND the driver is the answer itself
    return and_(drive, walk(tree, per_row=True)) if has_and(tree) else drive
