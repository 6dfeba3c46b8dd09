"""Wildcard patterns matched without backtracking: the one matcher of Hive name patterns
(`get_databases`, `get_tables`, ...) and of the LIKE patterns evaluated in Python.

A pattern is a sequence of literal characters, ANY_ONE (exactly one character) and ANY_RUN (any
run of characters, none included); it matches a value when it covers the whole value. A pattern
without ANY_RUN is a sequence of fixed-length pieces; with it, the pieces between runs are found
left to right, each at its leftmost place, which is correct for fixed-length pieces and costs
O(len(value) * len(pattern)) at worst: no input can make it backtrack.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ANY_ONE = object()
ANY_RUN = object()
Element = object  # a one-character str, ANY_ONE or ANY_RUN


class WildcardPattern:
    """A compiled pattern; `matches(value)` is True when it covers the whole value."""

    def __init__(self, elements: Sequence[Element], ignore_case: bool = False):
        flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
        pieces: list[list[Element]] = [[]]
        for el in elements:
            if el is ANY_RUN:
                pieces.append([])
            else:
                pieces[-1].append(el)
        # a piece has no quantifier and no alternation: the regex engine tries it at each place in
        # O(len(piece)), never more
        self._pieces = [re.compile("".join("." if el is ANY_ONE else re.escape(str(el)) for el in piece), flags)
                        for piece in pieces]
        self._lengths = [len(piece) for piece in pieces]

    def matches(self, value: str) -> bool:
        pieces, lengths = self._pieces, self._lengths
        if len(pieces) == 1:
            return pieces[0].fullmatch(value) is not None
        end = len(value) - lengths[-1]  # the last piece ends the value
        if end < lengths[0] or pieces[0].match(value) is None or pieces[-1].fullmatch(value, end) is None:
            return False
        pos = lengths[0]
        for piece in pieces[1:-1]:
            found = piece.search(value, pos, end)
            if found is None:
                return False
            pos = found.end()
        return True


class AnyOf:
    """Alternatives: matches when one of them does; no alternatives match nothing."""

    def __init__(self, alternatives: Sequence[WildcardPattern]):
        self.alternatives = list(alternatives)

    def matches(self, value: str) -> bool:
        return any(alt.matches(value) for alt in self.alternatives)


def sql_like(pattern: str) -> WildcardPattern:
    """An SQL LIKE pattern without escapes: `%` any run, `_` one character (case-sensitive)."""
    return WildcardPattern([ANY_RUN if c == "%" else ANY_ONE if c == "_" else c for c in pattern])
