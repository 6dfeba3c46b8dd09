"""LIKE in Hive filters (partition and table filters) as SQL that runs in bounded time.

Hive's store reads the pattern as a "regular expression" of which only these survive (checked
against the reference metastore): `.*` any run of characters, `.` any one character, `\\.` a dot,
`\\\\` two backslashes; every other character stands for itself (with `sql_wildcards`, as on
date keys, `%` and `_` are wildcards too). So the pattern is a wildcard pattern, and it runs as
one on every backend, never as a backtracking regular expression:

* PostgreSQL and MySQL/MariaDB: SQL `LIKE ... ESCAPE '!'` (both matchers give up on a wildcard as
  soon as the rest of the pattern cannot match anywhere further on: O(value * pattern));
* SQLite: `GLOB` (case-sensitive like the others; it gives up the same way), literal `*`, `?`
  and `[` written as one-character classes.

The caller passes the column in the form each backend compares exactly (MySQL/MariaDB: under
utf8mb4_bin).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam
from sqlalchemy.sql.expression import ColumnElement

from store.hms.common import ANY_ONE, ANY_RUN, Element

_ESCAPE = "!"


def like_elements(pattern: str, sql_wildcards: bool = False) -> list[Element]:
    """The pattern as literal characters, ANY_ONE and ANY_RUN (consecutive runs collapsed)."""
    out: list[Element] = []
    i, n = 0, len(pattern)
    while i < n:
        ch, nxt = pattern[i], pattern[i + 1:i + 2]
        if ch == "." and nxt == "*":
            el: list[Element] = [ANY_RUN]
            i += 2
        elif ch == "\\" and nxt in (".", "\\"):
            el = [nxt] if nxt == "." else ["\\", "\\"]
            i += 2
        elif ch == "." or (sql_wildcards and ch == "_"):
            el, i = [ANY_ONE], i + 1
        elif sql_wildcards and ch == "%":
            el, i = [ANY_RUN], i + 1
        else:
            el, i = [ch], i + 1
        for e in el:
            if not (e is ANY_RUN and out and out[-1] is ANY_RUN):
                out.append(e)
    return out


def sql_like_text(elements: list[Element]) -> str:
    """The elements as an SQL LIKE pattern whose escape character is `!`."""
    return "".join("%" if e is ANY_RUN else "_" if e is ANY_ONE
                   else _ESCAPE + str(e) if e in ("%", "_", _ESCAPE) else str(e) for e in elements)


def glob_text(elements: list[Element]) -> str:
    """The elements as an SQLite GLOB pattern."""
    return "".join("*" if e is ANY_RUN else "?" if e is ANY_ONE
                   else f"[{e}]" if e in ("*", "?", "[") else str(e) for e in elements)


def like_test(dialect: str, col: Any, pattern: str, sql_wildcards: bool = False) -> ColumnElement[bool]:
    """`col` matches the Hive LIKE pattern as a whole."""
    elements = like_elements(pattern, sql_wildcards)
    if dialect == "sqlite":
        return col.op("GLOB", is_comparison=True)(bindparam(None, glob_text(elements)))
    return col.like(bindparam(None, sql_like_text(elements)), escape=_ESCAPE)
