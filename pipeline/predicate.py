"""`pipeline.read`'s filters with one meaning end to end: Spark SQL's.

A filter string is read as Spark SQL (string escapes, `LIKE` with `%`, `_` and `\\` escapes,
three-valued logic, Spark's implicit casts); tuples `(column, op, value)` as the Column comparisons
Spark makes of them. Spark filters the rows with exactly that. The server prunes partitions and
files with a Hive filter (store/hms/partition_filter: `LIKE` there means Hive's `.*` pattern, there
are no decimal literals, timestamps are UTC text, partition keys are compared as their path text),
so the predicate is translated into one the server evaluates to a superset: a leaf whose meaning
the server's would not match exactly (a cast Spark makes that the server does not, a pattern its
grammar cannot spell, a partition key of a type it cannot filter, a NULL test on a partition key,
...) counts as TRUE; `AND` drops such a part, `OR` with one becomes TRUE as a whole. So no
partition or file that could hold a matching row is ever skipped; text this parser does not
understand (functions, arithmetic, ...) is not pruned at all.

Partition keys of type string also keep `__HIVE_DEFAULT_PARTITION__` (where null and empty values
are written) whenever the leaf holds for an empty string.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import re
import time
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any
from zoneinfo import ZoneInfo

log = logging.getLogger(__name__)
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
INTEGRAL = ("tinyint", "smallint", "int", "integer", "bigint")
_INT64 = (-(2**63), 2**63 - 1)


class Unsupported(ValueError):
    """Filter text this module does not parse (nothing is pruned by it)."""


# --- the tree ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lit:
    kind: str  # string int decimal double float bool date timestamp instant null other
    value: Any = None  # timestamp: a naive datetime in the session time zone; instant: an aware one


@dataclass(frozen=True)
class Cmp:
    col: str
    op: str  # = != < <= > >=  ("other": a comparison never translated, e.g. <=>)
    lit: Lit


@dataclass(frozen=True)
class In:
    col: str
    lits: tuple[Lit, ...]


@dataclass(frozen=True)
class Like:
    col: str
    pattern: Lit
    escape: str = "\\"


@dataclass(frozen=True)
class IsNull:
    col: str


@dataclass(frozen=True)
class Opaque:
    """A predicate never translated (a boolean column alone, TRUE, a column compared with a column, ...)."""


@dataclass(frozen=True)
class Bool:
    op: str  # and / or
    items: tuple


@dataclass(frozen=True)
class Not:
    item: Any


# --- Spark SQL text ------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<bq>`(?:[^`]|``)+`)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?:BD|bd|Bd|bD|[LlSsYyDdFf])?(?![A-Za-z0-9_]))
  | (?P<word>[A-Za-z0-9_]+)
  | (?P<op><=>|<=|>=|<>|!=|==|=|<|>|!)
  | (?P<punct>[(),+-])
""", re.S | re.X)


def _tokens(text: str) -> list[tuple[str, str]]:
    out, i = [], 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None:
            raise Unsupported(f"unexpected {text[i]!r} at {i}")
        kind = m.lastgroup or ""
        if kind != "ws":
            out.append((kind, m.group()))
        i = m.end()
    out.append(("eof", ""))
    return out


_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "\\": "\\", "%": "\\%", "_": "\\_"}


def unescape(body: str) -> str:
    """A Spark SQL string literal's value (its text between the quotes), as Spark's parser reads it."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            n = body[i + 1]
            if n in "uU" or n.isdigit() and n != "0" or n == "0" and body[i + 2:i + 3].isdigit():
                raise Unsupported("unicode and octal escapes")
            out.append(_ESCAPES.get(n, n))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


_KEYWORDS = {"AND", "OR", "NOT", "IN", "LIKE", "BETWEEN", "IS", "NULL", "TRUE", "FALSE", "ESCAPE", "ILIKE",
             "RLIKE", "REGEXP", "DISTINCT", "ANY", "ALL", "SOME", "EXISTS", "INTERVAL", "CASE", "UNKNOWN"}


class _Parser:
    def __init__(self, text: str, escaped_literals: bool):
        self.toks = _tokens(text)
        self.i = 0
        self.escaped_literals = escaped_literals

    def peek(self, k: int = 0) -> tuple[str, str]:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> tuple[str, str]:
        t = self.peek()
        self.i += 1
        return t

    def kw(self, word: str, k: int = 0) -> bool:
        kind, text = self.peek(k)
        return kind == "word" and text.upper() == word

    def take_kw(self, word: str) -> None:
        if not self.kw(word):
            raise Unsupported(f"expected {word}")
        self.next()

    def parse(self):
        node = self.parse_or()
        if self.peek()[0] != "eof":
            raise Unsupported(f"unexpected {self.peek()[1]!r}")
        return node

    def parse_or(self):
        items = [self.parse_and()]
        while self.kw("OR"):
            self.next()
            items.append(self.parse_and())
        return items[0] if len(items) == 1 else Bool("or", tuple(items))

    def parse_and(self):
        items = [self.parse_not()]
        while self.kw("AND"):
            self.next()
            items.append(self.parse_not())
        return items[0] if len(items) == 1 else Bool("and", tuple(items))

    def parse_not(self):
        if self.kw("NOT") or self.peek() == ("op", "!"):
            self.next()
            return Not(self.parse_not())
        return self.parse_predicate()

    def parse_predicate(self):
        node: Any
        if self.peek() == ("punct", "("):
            self.next()
            node = self.parse_or()
            if self.next() != ("punct", ")"):
                raise Unsupported("expected ')'")
            if not self._at_end_of_predicate():
                raise Unsupported("a parenthesized expression compared")
            return node
        left = self.parse_operand()
        kind, text = self.peek()
        if kind == "op" and text != "!":
            self.next()
            right = self.parse_operand()
            return _comparison(left, "!=" if text == "<>" else "=" if text == "==" else text, right)
        negated = False
        if self.kw("IS"):
            self.next()
            if self.kw("NOT"):
                self.next()
                negated = True
            if not self.kw("NULL"):
                raise Unsupported("IS without NULL")
            self.next()
            node = IsNull(left) if isinstance(left, str) else Opaque()
            return Not(node) if negated else node
        if self.kw("NOT"):
            self.next()
            negated = True
        if self.kw("BETWEEN"):
            self.next()
            lo = self.parse_operand()
            self.take_kw("AND")
            hi = self.parse_operand()
            node = Bool("and", (_comparison(left, ">=", lo), _comparison(left, "<=", hi)))
        elif self.kw("IN"):
            self.next()
            if self.next() != ("punct", "("):
                raise Unsupported("IN without a list")
            values = [self.parse_operand()]
            while self.peek() == ("punct", ","):
                self.next()
                values.append(self.parse_operand())
            if self.next() != ("punct", ")"):
                raise Unsupported("expected ')'")
            node = In(left, tuple(values)) if isinstance(left, str) and all(isinstance(v, Lit) for v in values) \
                else Opaque()
        elif self.kw("LIKE"):
            self.next()
            if self.kw("ANY") or self.kw("ALL") or self.kw("SOME"):
                raise Unsupported("LIKE ANY / ALL")
            pattern = self.parse_operand()
            escape = "\\"
            if self.kw("ESCAPE"):
                self.next()
                e = self.parse_operand()
                if not (isinstance(e, Lit) and e.kind == "string" and len(e.value) == 1):
                    raise Unsupported("ESCAPE takes one character")
                escape = e.value
            node = Like(left, pattern, escape) if isinstance(left, str) and isinstance(pattern, Lit) else Opaque()
        elif negated:
            raise Unsupported("NOT after an operand")
        else:
            if not self._at_end_of_predicate():
                raise Unsupported(f"unexpected {self.peek()[1]!r}")
            return Opaque()  # a boolean column or literal by itself
        return Not(node) if negated else node

    def _at_end_of_predicate(self) -> bool:
        return self.peek()[0] == "eof" or self.peek() == ("punct", ")") or self.kw("AND") or self.kw("OR")

    def parse_operand(self):
        """A column name (lower-cased) or a Lit."""
        kind, text = self.peek()
        sign = 1
        if (kind, text) in (("punct", "-"), ("punct", "+")):
            self.next()
            sign = -1 if text == "-" else 1
            kind, text = self.peek()
            if kind != "number":
                raise Unsupported("arithmetic")
        if kind == "number":
            self.next()
            lit = _number(text)
            if sign < 0 and lit.value is not None:
                lit = Lit(lit.kind, -lit.value)
            self._no_arithmetic()
            return lit
        if kind == "string":
            self.next()
            value = self._string(text)
            while self.peek()[0] == "string":  # adjacent literals are one
                value += self._string(self.next()[1])
            self._no_arithmetic()
            return Lit("string", value)
        if kind == "bq":
            self.next()
            self._no_arithmetic()
            return text[1:-1].replace("``", "`").lower()
        if kind == "word":
            up = text.upper()
            if up in ("DATE", "TIMESTAMP", "TIMESTAMP_LTZ", "TIMESTAMP_NTZ", "X") and self.peek(1)[0] == "string":
                self.next()
                value = self._string(self.next()[1])
                self._no_arithmetic()
                if up == "DATE":
                    return _date_lit(value)
                if up in ("TIMESTAMP", "TIMESTAMP_LTZ"):
                    return _timestamp_lit(value)
                return Lit("other")
            if up in ("TRUE", "FALSE"):
                self.next()
                self._no_arithmetic()
                return Lit("bool", up == "TRUE")
            if up == "NULL":
                self.next()
                self._no_arithmetic()
                return Lit("null")
            if up in _KEYWORDS or self.peek(1) == ("punct", "("):
                raise Unsupported(f"unexpected {text!r}")
            self.next()
            self._no_arithmetic()
            return text.lower()
        raise Unsupported(f"unexpected {text!r}")

    def _string(self, token: str) -> str:
        body = token[1:-1]
        return body if self.escaped_literals else unescape(body)

    def _no_arithmetic(self) -> None:
        kind, text = self.peek()
        if (kind == "punct" and text in "+-") or (kind == "punct" and text == "(") or kind in ("number", "word") \
                and not (self.kw("AND") or self.kw("OR") or self.kw("NOT") or self.kw("IS") or self.kw("IN")
                         or self.kw("LIKE") or self.kw("BETWEEN") or self.kw("ESCAPE")):
            raise Unsupported(f"unexpected {text!r}")


def _number(text: str) -> Lit:
    t = text.upper()
    try:
        if t.endswith("BD"):
            return Lit("decimal", Decimal(t[:-2]))
        if t[-1] in "LSY":
            return Lit("int", int(t[:-1])) if t[:-1].isdigit() else Lit("other")
        if t[-1] == "D":
            return Lit("double", float(t[:-1]))
        if t[-1] == "F":
            return Lit("float")
        if t.isdigit():
            return Lit("int", int(t))
        if "E" in t:
            return Lit("double", float(t))
        return Lit("decimal", Decimal(t))
    except (ValueError, InvalidOperation):
        return Lit("other")


_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?")


def _date_lit(text: str) -> Lit:
    m = _DATE.fullmatch(text.strip())
    try:
        return Lit("date", dt.date(*map(int, m.groups()))) if m else Lit("other")
    except ValueError:
        return Lit("other")


def _timestamp_lit(text: str) -> Lit:
    m = _TIMESTAMP.fullmatch(text.strip())
    if not m:
        return Lit("other")
    y, mo, d, h, mi, s, frac = m.groups()
    try:
        return Lit("timestamp", dt.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0),
                                            int((frac or "0").ljust(6, "0"))))
    except ValueError:
        return Lit("other")


def _comparison(left, op: str, right):
    if isinstance(left, str) and isinstance(right, Lit):
        return Cmp(left, op if op != "<=>" else "other", right)
    if isinstance(right, str) and isinstance(left, Lit):
        flipped = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
        return Cmp(right, flipped if op != "<=>" else "other", left)
    return Opaque()


def parse(text: str, escaped_literals: bool = False):
    """The tree of a Spark SQL filter; Unsupported for text beyond what is translated."""
    return _Parser(text, escaped_literals).parse()


# --- tuples ------------------------------------------------------------------------------------

_TUPLE_OPS = {"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def python_lit(value) -> Lit:
    """A Python value as the literal pyspark makes of it (F.lit)."""
    if value is None:
        return Lit("null")
    if isinstance(value, bool):
        return Lit("bool", value)
    if isinstance(value, int):
        return Lit("int", value)
    if isinstance(value, float):
        return Lit("double", value)
    if isinstance(value, Decimal):
        return Lit("decimal", value) if value.is_finite() else Lit("other")
    if isinstance(value, str):
        return Lit("string", value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:  # pyspark: a naive datetime is in the Python process's local time
            seconds = time.mktime(value.timetuple())
            return Lit("instant", dt.datetime.fromtimestamp(seconds, dt.timezone.utc).replace(
                microsecond=value.microsecond))
        return Lit("instant", value)
    if isinstance(value, dt.date):
        return Lit("date", value)
    return Lit("other")


def from_tuples(filters) -> Any:
    """The tree of (column, op, value) tuples, ANDed; ValueError for an unknown operator."""
    items: list[Any] = []
    for col, op, value in filters:
        key = str(col).lower()
        op_l = str(op).strip().lower()
        if op_l in ("in", "not in"):
            node: Any = In(key, tuple(python_lit(v) for v in value))
            items.append(Not(node) if op_l == "not in" else node)
        elif op_l in _TUPLE_OPS:
            items.append(Cmp(key, _TUPLE_OPS[op_l], python_lit(value)))
        else:
            raise ValueError(f"unsupported filter operator {op!r}")
    return items[0] if len(items) == 1 else Bool("and", tuple(items))


# --- the server's Hive filter -------------------------------------------------------------------

_NEGATE = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">", "other": "other"}
_HIVE_WORDS = {"AND", "OR", "NOT", "IN", "LIKE", "BETWEEN", "IS", "NULL", "DATE", "TIMESTAMP", "STRUCT", "CONST"}


def _base(hive_type: str) -> str:
    return hive_type.strip().lower().split("(", 1)[0].strip()


def _decimal_precision(hive_type: str) -> int:
    m = re.match(r"\s*decimal\s*\(\s*(\d+)", hive_type.lower())
    return int(m.group(1)) if m else 10


def hive_string(value: str) -> str | None:
    """`value` as a Hive filter string literal the server reads back as exactly `value` (its lexer
    keeps backslash pairs whole); None when there is no such literal."""
    quote = "'" if "'" not in value else '"' if '"' not in value else None
    if quote is None:
        return None
    i = 0
    while i < len(value):
        if value[i] == "\\":
            if i + 1 >= len(value):
                return None  # the backslash would take the closing quote
            i += 2
        else:
            i += 1
    return quote + value + quote


def identifier(name: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and name.upper() not in _HIVE_WORDS:
        return name
    return "`" + name.replace("`", "``") + "`"


ANY_ONE, ANY_RUN = object(), object()


def like_elements(pattern: str, escape: str = "\\") -> list | None:
    """A Spark LIKE pattern as characters, ANY_ONE (`_`) and ANY_RUN (`%`); None for a pattern
    Spark refuses (an escape before another character, or at the end)."""
    out: list = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == escape:
            if i + 1 >= len(pattern) or pattern[i + 1] not in ("_", "%", escape):
                return None
            out.append(pattern[i + 1])
            i += 2
            continue
        out.append(ANY_ONE if c == "_" else ANY_RUN if c == "%" else c)
        i += 1
    return out


def hive_like_pattern(elements: list) -> str | None:
    """Elements as a Hive LIKE pattern (`.*`, `.`, `\\.`), None when Hive's cannot spell them."""
    out: list[str] = []
    prev = None
    for e in elements:
        if e is ANY_RUN:
            if prev is not ANY_RUN:
                out.append(".*")
        elif e is ANY_ONE:
            out.append(".")
        elif e == "\\":
            return None
        elif e == ".":
            out.append("\\.")
        elif e == "*" and prev is ANY_ONE:
            return None  # `.*` would be a run
        else:
            out.append(e)
        prev = e
    return "".join(out)


def _like_regex(elements: list) -> re.Pattern:
    return re.compile("".join(".*" if e is ANY_RUN else "." if e is ANY_ONE else re.escape(e) for e in elements),
                      re.S)


class _Translator:
    def __init__(self, columns: dict[str, str], partition_keys: set[str], time_zone: str | None,
                 url_encoded: bool = False):
        self.columns = {k.lower(): v for k, v in columns.items()}
        self.partition_keys = {k.lower() for k in partition_keys}
        self.time_zone = time_zone or "UTC"
        # url-encoded partition paths: Spark's url_encode writes a space as '+', which the server's
        # decoding keeps: string partition keys are not compared
        self.url_encoded = url_encoded

    def node(self, n, negate: bool = False) -> tuple[str, str] | None:
        """(text, "and"/"or"/"leaf") of a superset of the node's rows (negated), None: TRUE."""
        if isinstance(n, Not):
            return self.node(n.item, not negate)
        if isinstance(n, Bool):
            op = n.op if not negate else ("or" if n.op == "and" else "and")
            parts = [self.node(i, negate) for i in n.items]
            if op == "or":
                if any(p is None for p in parts):
                    return None
                return self._join("or", parts)  # type: ignore[arg-type]
            kept = [p for p in parts if p is not None]
            return self._join("and", kept) if kept else None
        if isinstance(n, Cmp):
            return self.cmp(n.col, _NEGATE[n.op] if negate else n.op, n.lit)
        if isinstance(n, In):
            lits = [lit for lit in n.lits]
            if not negate:  # OR of =; NULLs never match
                parts = [self.cmp(n.col, "=", lit) for lit in lits if lit.kind != "null"]
                if not parts or any(p is None for p in parts) or len({lit.kind for lit in lits} - {"null"}) > 1:
                    return None
                return self._join("or", parts)  # type: ignore[arg-type]
            if any(lit.kind == "null" for lit in lits) or len({lit.kind for lit in lits}) > 1:
                return None  # NOT IN with a NULL holds for no row
            kept = [p for p in (self.cmp(n.col, "!=", lit) for lit in lits) if p is not None]
            return self._join("and", kept) if kept else None
        if isinstance(n, Like):
            return self.like(n, negate)
        if isinstance(n, IsNull):
            col = n.col
            if col not in self.columns or col in self.partition_keys:
                return None
            return f"{identifier(col)} is {'not ' if negate else ''}null", "leaf"
        return None

    @staticmethod
    def _join(op: str, parts: list[tuple[str, str]]) -> tuple[str, str]:
        if len(parts) == 1:
            return parts[0]
        texts = [f"({t})" if kind != "leaf" and not (kind == op == "and") else t for t, kind in parts]
        return f" {op} ".join(texts), op

    def like(self, n: Like, negate: bool) -> tuple[str, str] | None:
        hive_type = self.columns.get(n.col)
        if hive_type is None or _base(hive_type) != "string" or n.pattern.kind != "string" \
                or (self.url_encoded and n.col in self.partition_keys):
            return None
        elements = like_elements(n.pattern.value, n.escape)
        if elements is None:
            return None
        pattern = hive_like_pattern(elements)
        text = None if pattern is None else hive_string(pattern)
        if text is None:
            return None
        regex = _like_regex(elements)

        def holds(v: str) -> bool:
            return (regex.fullmatch(v) is not None) != negate

        return self._guarded(n.col, f"{identifier(n.col)} {'not like' if negate else 'like'} {text}", holds)

    def _guarded(self, col: str, leaf: str, holds) -> tuple[str, str]:
        """A string partition key's leaf also keeps the default partition when the leaf holds for ''."""
        if col in self.partition_keys and holds("") and not holds(DEFAULT_PARTITION):
            return f"({leaf} or {identifier(col)} = '{DEFAULT_PARTITION}')", "leaf"
        return leaf, "leaf"

    def cmp(self, col: str, op: str, lit: Lit) -> tuple[str, str] | None:
        hive_type = self.columns.get(col)
        if hive_type is None or op == "other" or lit.kind in ("null", "other"):
            return None
        base, part = _base(hive_type), col in self.partition_keys
        name = identifier(col)
        if base == "string" and part and self.url_encoded:
            return None
        if base == "string":
            if lit.kind != "string":
                return None
            text = hive_string(lit.value)
            if text is None:
                return None
            value = lit.value
            return self._guarded(col, f"{name} {op} {text}", lambda v: _COMPARE[op](v, value)) if part \
                else (f"{name} {op} {text}", "leaf")
        if base in INTEGRAL:
            bound = _integral_bound(op, lit)
            if bound is None:
                return None
            op, number = bound
            if not _INT64[0] <= number <= _INT64[1]:
                return None
            return f"{name} {op} {number}", "leaf"
        if base == "date":
            day = lit.value if lit.kind == "date" else _date_lit(lit.value).value if lit.kind == "string" \
                and re.fullmatch(r"\d{4}-\d{2}-\d{2}", lit.value) else None
            if day is None:
                return None
            return f"{name} {op} DATE '{day.isoformat()}'", "leaf"
        if part:
            return None  # the server filters partition keys of string, integral and date types only
        if base == "decimal":
            exact = self._decimal(hive_type, lit)
            return None if exact is None else (f"{name} {op} '{exact}'", "leaf")
        if base == "double":
            text = _double(lit)
            return None if text is None else (f"{name} {op} '{text}'", "leaf")
        if base == "timestamp":
            instant = self._instant(lit)
            return None if instant is None else (f"{name} {op} '{instant}'", "leaf")
        if base == "boolean":
            return (f"{name} {op} '{str(lit.value).lower()}'", "leaf") if lit.kind == "bool" else None
        return None

    @staticmethod
    def _decimal(hive_type: str, lit: Lit) -> Decimal | None:
        if lit.kind in ("int", "decimal"):
            number = Decimal(lit.value)
            return number if len(number.as_tuple().digits) <= 38 else None
        if lit.kind == "string" and re.fullmatch(r"-?\d+(\.\d+)?", lit.value.strip()):
            # Spark compares a decimal with a string as doubles: the same order when both have at
            # most 15 significant digits
            number = Decimal(lit.value.strip())
            if _decimal_precision(hive_type) <= 15 and len(number.normalize().as_tuple().digits) <= 15:
                return number
        return None

    def _instant(self, lit: Lit) -> str | None:
        if lit.kind == "instant":
            instant = lit.value.astimezone(dt.timezone.utc)
        elif lit.kind in ("timestamp", "string"):
            local = lit.value if lit.kind == "timestamp" else _timestamp_lit(lit.value).value
            if local is None:
                return None
            try:
                zone = ZoneInfo(self.time_zone) if self.time_zone.upper() != "UTC" else dt.timezone.utc
            except (ValueError, KeyError, OSError):
                return None
            first, second = local.replace(tzinfo=zone, fold=0), local.replace(tzinfo=zone, fold=1)
            if first.utcoffset() != second.utcoffset():
                return None  # in a gap or an overlap of the zone's clock
            instant = first.astimezone(dt.timezone.utc)
        else:
            return None
        return instant.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


_COMPARE = {"=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _integral_bound(op: str, lit: Lit) -> tuple[str, int] | None:
    """An integer comparison equal to comparing an integer column with `lit` (Spark widens the column)."""
    if lit.kind == "int":
        return op, lit.value
    if lit.kind == "string":
        text = lit.value.strip()
        return (op, int(text)) if re.fullmatch(r"[+-]?\d+", text) else None  # Spark casts the string
    if lit.kind == "decimal":
        x = lit.value
    elif lit.kind == "double" and math.isfinite(lit.value) and abs(lit.value) < 2**53:
        x = Decimal(lit.value)
    else:
        return None
    if x == x.to_integral_value():
        return op, int(x)
    if op in ("=", "!="):
        return None  # never / always equal (but for NULLs): no pruning
    floor, ceil = int(x.to_integral_value(ROUND_FLOOR)), int(x.to_integral_value(ROUND_CEILING))
    return {"<": ("<=", floor), "<=": ("<=", floor), ">": (">=", ceil), ">=": (">=", ceil)}[op]


def _double(lit: Lit) -> str | None:
    if lit.kind in ("int", "decimal"):
        return str(lit.value)
    if lit.kind == "double" and math.isfinite(lit.value):
        return repr(lit.value)
    if lit.kind == "string" and re.fullmatch(r"-?\d+(\.\d+)?([eE][+-]?\d+)?", lit.value.strip()):
        return lit.value.strip()  # Spark casts the string to double
    return None


_NODES = (Cmp, In, Like, IsNull, Opaque, Bool, Not)


def tree_of(filters, escaped_literals: bool = False):
    """The tree of a filter string, of tuples, or a tree as it is; None when the string is beyond
    this parser."""
    if isinstance(filters, _NODES):
        return filters
    if isinstance(filters, str):
        try:
            return parse(filters, escaped_literals)
        except Unsupported:
            return None
    return from_tuples(filters)


def server_filter(filters, columns: dict[str, str], partition_keys=(), time_zone: str | None = None,
                  escaped_literals: bool = False, url_encoded: bool = False) -> str | None:
    """The Hive filter the server prunes with for `filters` (a Spark SQL string, tuples or a tree) over
    `columns` (name -> Hive type; leaves on other columns count as TRUE), `partition_keys` among
    them; None: nothing to prune by. `time_zone`: Spark's session time zone (timestamp literals);
    `url_encoded`: the table url-encodes its partition paths."""
    if filters is None:
        return None
    tree = tree_of(filters, escaped_literals)
    if tree is None:
        return None
    try:
        out = _Translator(columns, set(partition_keys), time_zone, url_encoded).node(tree)
    except Exception as exc:  # a translation that fails prunes nothing (Spark still filters the rows)
        log.warning("filter %r not translated for the server: %r", filters, exc)
        return None
    if out is None:
        return None
    text, kind = out
    return f"({text})" if kind == "or" else text

