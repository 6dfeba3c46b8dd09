"""Text no request may carry, refused before anything runs (issue 41): NUL characters (PostgreSQL
cannot store them, C libraries end strings there) and text that was no UTF-8.

The router checks the decoded arguments of every call (`refusal`), reads and writes alike, and
answers the exception the method declares (MetaException, else InvalidObjectException, else
InvalidInputException; a method that declares none of them a TApplicationException with the
reason, as adapter/errors.py answers) naming the argument, before authorization and the store see
it.

Bytes that are no UTF-8: Thrift's C decoder puts U+FFFD in their place (its pure-Python decoder
raises UnicodeDecodeError). When the arguments hold a U+FFFD, the router raises `DecodeAgain`; the
processor sets the transport back to the start of the arguments (adapter/server/replay.py) and
decodes them again with `LenientProtocol`, whose strings keep such bytes as lone surrogates: a
U+FFFD the client really sent passes, bad bytes are refused like a NUL. A request whose arguments
cannot be decoded again (more than adapter/server/replay.LIMIT bytes) keeps the U+FFFD, as before.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TException
from thrift.transport.TTransport import TTransportException

from adapter.errors import RefusedCall, answer
from store import errors as E
from thrift_idl.fb303 import FacebookService
from thrift_idl.hive_metastore import ThriftHiveMetastore
from thrift_idl.hive_metastore import ttypes as H
from thrift_idl.hudi_metaserver import ThriftHoodieMetaserver
from thrift_idl.hudi_metastore import HudiMetastore

_BAD = re.compile("[\x00\ud800-\udfff]")
_SCALARS = frozenset((int, float, bool, bytes, bytearray, type(None)))
_SEQUENCES = frozenset((list, tuple, set, frozenset))
_PREFERRED = (H.MetaException, H.InvalidObjectException, H.InvalidInputException)
CLEAN, REPLACED, BAD = 0, 1, 2  # has_bad_text's answers, in rising order

_request = threading.local()  # one thread per connection: the request being served


class LenientProtocol(TBinaryProtocol):
    """Binary protocol whose strings decode bytes that are no UTF-8 to lone surrogates."""

    def readString(self):
        return self.readBinary().decode("utf-8", "surrogateescape")


class DecodeAgain(TTransportException):
    """The arguments hold U+FFFD and can be decoded again to tell whether the client sent it. A
    transport error, so the generated processor passes it on instead of answering it."""


def begin_request(decode_again: Callable[[], bool] | None) -> None:
    """The processor starts a request; `decode_again()` tells whether its arguments can be decoded
    again (None: they cannot)."""
    _request.decode_again = decode_again


def decoding_leniently() -> None:
    """The processor decodes the arguments again with LenientProtocol: U+FFFD is the client's."""
    _request.decode_again = None


def _grade(s: str) -> int:
    if "\x00" in s:
        return BAD
    if s.isascii():
        return CLEAN
    if _BAD.search(s) is not None:
        return BAD
    return REPLACED if "\ufffd" in s else CLEAN


def has_bad_text(value: Any) -> int:
    """BAD when any string inside `value` (arguments, structs, lists, maps) holds a NUL or a lone
    surrogate, else REPLACED when one holds U+FFFD, else CLEAN. Binary fields (bytes) may hold
    anything. The strings are checked joined, a few thousand at a time (one C-level pass; about
    0.15 s for 10,000 partitions of 10 columns)."""
    grade = CLEAN
    strings: list[str] = []
    add = strings.append
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        v = pop()
        t = type(v)
        if t is str:
            add(v)
        elif t in _SEQUENCES:
            for x in v:
                tx = type(x)
                if tx is str:
                    add(x)
                elif tx not in _SCALARS:
                    push(x)
        elif t is dict:
            for k, x in v.items():
                if type(k) is str:
                    add(k)
                elif type(k) not in _SCALARS:
                    push(k)
                tx = type(x)
                if tx is str:
                    add(x)
                elif tx not in _SCALARS:
                    push(x)
        elif t not in _SCALARS and hasattr(v, "thrift_spec"):
            for x in v.__dict__.values():
                tx = type(x)
                if tx is str:
                    add(x)
                elif tx not in _SCALARS:
                    push(x)
        if len(strings) >= 4096 or not stack:
            grade = max(grade, _grade("\x01".join(strings)))
            if grade == BAD:
                return BAD
            strings.clear()
    return grade


def where(value: Any, path: str) -> tuple[str, str] | None:
    """(path of the first bad string inside `value`, what is wrong with it)."""
    if isinstance(value, str):
        if "\x00" in value:
            return path, "contains a NUL control character"
        if _BAD.search(value):
            return path, "is not valid UTF-8"
        return None
    if isinstance(value, (list, tuple, set, frozenset)):
        for i, item in enumerate(value):
            if found := where(item, f"{path}[{i}]"):
                return found
        return None
    if isinstance(value, dict):
        for k, item in value.items():
            shown = _shown(k)
            if found := where(k, f"{path} key {shown}"):
                return found
            if found := where(item, f"{path}[{shown}]"):
                return found
        return None
    if hasattr(value, "thrift_spec"):
        for name, item in value.__dict__.items():
            if found := where(item, f"{path}.{name}"):
                return found
    return None


def _shown(key: Any) -> str:
    text = ascii(key)
    return text if len(text) <= 60 else text[:57] + "..."


def _argument_names(method: str) -> list[str]:
    for module in (HudiMetastore, ThriftHiveMetastore, FacebookService, ThriftHoodieMetaserver):
        cls = getattr(module, f"{method}_args", None)
        if cls is not None:
            return [s[2] for s in cls.thrift_spec or () if s]
    return []


def refusal(method: str, args: tuple, declared: tuple[type, ...]) -> TException | None:
    """The answer for a call whose arguments hold text the metastore does not accept; None when
    they are clean. Raises DecodeAgain (see the module's docstring)."""
    grade = has_bad_text(args)
    if grade == REPLACED:
        decode_again = getattr(_request, "decode_again", None)
        if decode_again is not None and decode_again():
            raise DecodeAgain(message="arguments hold U+FFFD: decoding them again")
        return None
    if grade == CLEAN:
        return None
    names = _argument_names(method)
    found = None
    for i, arg in enumerate(args):
        if found := where(arg, names[i] if i < len(names) else f"argument {i + 1}"):
            break
    path, what = found or ("an argument", "holds an invalid character")
    text = (f"Invalid text in the request for {method}: {path} {what}; the metastore accepts UTF-8 text "
            "without NUL characters")
    for cls in _PREFERRED:
        if cls in declared:
            return cls(message=text)
    thrift = answer(E.InvalidObject(text), declared)  # the metaserver protocol's own exceptions
    return RefusedCall(text) if isinstance(thrift, RefusedCall) else thrift
