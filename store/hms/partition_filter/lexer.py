"""The tokens of a Hive partition filter: words, operators, quoted strings, numbers, dates."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from store.hms.partition_filter.errors import FilterError


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # ident kw op ( ) , string int date timestamp eof
    value: str  # the text: a normalized operator, an upper-cased keyword, a string's contents, ...
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
DATE_FULL = re.compile(r"\d{4}-\d{2}-\d{2}")
TIMESTAMP_FULL = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")


def check_date(text: str, value: str, pos: int) -> str:
    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        raise FilterError(f"invalid date {value!r}", text, pos) from None
    return value


def check_timestamp(text: str, value: str, pos: int) -> str:
    try:
        _dt.datetime.strptime(value, "%Y-%m-%d %H:%M:%S")
    except ValueError:
        raise FilterError(f"invalid timestamp {value!r}", text, pos) from None
    return value


def tokenize(text: str) -> list[Token]:
    """The filter's tokens, ending with one of kind "eof"; FilterError for text that is no token."""
    toks: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c in "(),":
            tok, i = Token(c, c, i), i + 1
        elif op := next((o for o in _OPS if text.startswith(o, i)), None):
            tok, i = Token("op", _OP_NORMAL.get(op, op), i), i + len(op)
        elif c in "'\"":
            tok, i = _string(text, i)
        elif c == "`":
            tok, i = _quoted_identifier(text, i)
        else:
            tok, i = _number_or_word(text, i)
        toks.append(tok)
    toks.append(Token("eof", "", n))
    return toks


def _string(text: str, start: int) -> tuple[Token, int]:
    """A literal in single or double quotes: a backslash pair never ends it and is kept whole."""
    quote, i, n, buf = text[start], start + 1, len(text), []
    while True:
        if i >= n:
            raise FilterError("unterminated string literal", text, start)
        ch = text[i]
        if ch == "\\":
            if i + 1 >= n:
                raise FilterError("unterminated string literal", text, start)
            buf.append(text[i : i + 2])  # Hive keeps the backslash; it only stops the quote ending the literal
            i += 2
        elif ch == quote:
            return Token("string", "".join(buf), start), i + 1
        else:
            buf.append(ch)
            i += 1


def _quoted_identifier(text: str, start: int) -> tuple[Token, int]:
    """`name`: any characters, `` inside standing for one back quote."""
    i, n, buf = start + 1, len(text), []
    while True:
        if i >= n:
            raise FilterError("unterminated back-quoted identifier", text, start)
        if text[i] == "`":
            if text.startswith("``", i):
                buf.append("`")
                i += 2
                continue
            i += 1
            break
        buf.append(text[i])
        i += 1
    if not buf:
        raise FilterError("empty identifier", text, start)
    return Token("ident", "".join(buf), start, quoted=True), i


def _number_or_word(text: str, i: int) -> tuple[Token, int]:
    """A bare timestamp or date, an integer (optionally negative), a keyword or an identifier."""
    c = text[i]
    if c.isdigit():
        m = _TIMESTAMP.match(text, i)
        if m:
            return Token("timestamp", check_timestamp(text, m.group(), i), i), m.end()
        m = _DATE.match(text, i)
        if m:
            return Token("date", check_date(text, m.group(), i), i), m.end()
    if c == "-" and i + 1 < len(text) and text[i + 1].isdigit():
        m = _WORD.match(text, i + 1)
        if m is None or not m.group().isdigit():
            raise FilterError("invalid number", text, i)
        return Token("int", text[i : m.end()], i), m.end()
    m = _WORD.match(text, i)
    if m and m.group().isascii():
        word = m.group()
        if word.isdigit():
            return Token("int", word, i), m.end()
        if word.upper() in _RESERVED:
            return Token("kw", word.upper(), i), m.end()
        return Token("ident", word, i), m.end()
    raise FilterError(f"unexpected character {c!r}", text, i)
