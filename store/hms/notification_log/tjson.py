"""Thrift structs as TJSONProtocol text, written straight from the generated `thrift_spec` (the
same text as `TSerialization.serialize(obj, TJSONProtocolFactory())` with Java's string escapes,
several times faster: event messages carry a table and two partitions per altered partition).

The format: a struct is `{"<field id>":{"<type>":<value>},...}` in field-id order, unset fields
left out; a list or set is `["<element type>",<count>,<elements>...]`; a map is
`["<key type>","<value type>",<count>,{<key>:<value>,...}]` with numeric keys quoted; a bool is
1 or 0, a double `%.17g`, binary base64. tests/test_notification_messages.py checks it against
the Thrift library's protocol for every struct of the IDL.
"""

from __future__ import annotations

import base64
from itertools import repeat
from operator import attrgetter
from typing import Any

from thrift.Thrift import TType

_NAMES = {TType.BOOL: "tf", TType.BYTE: "i8", TType.I16: "i16", TType.I32: "i32", TType.I64: "i64",
          TType.DOUBLE: "dbl", TType.STRING: "str", TType.STRUCT: "rec", TType.MAP: "map",
          TType.LIST: "lst", TType.SET: "set"}

# Java's TJSONProtocol escapes control characters other than \b \t \n \f \r as \u00XX (lower-case hex)
_ESCAPES = {c: f"\\u{c:04x}" for c in range(0x20)}
_ESCAPES.update({ord("\b"): "\\b", ord("\t"): "\\t", ord("\n"): "\\n", ord("\f"): "\\f", ord("\r"): "\\r",
                 ord('"'): '\\"', ord("\\"): "\\\\"})


def tjson(obj: Any, memo: dict[Any, tuple[Any, str]] | None = None) -> str:
    """`memo`: shared by the calls of one message batch, so that the parts partitions share (one
    descriptor's columns, serde, parameters) are written once, whether they are one object or
    equal ones (each field remembers its last value: a client sends every new partition its own
    copy of one descriptor). It holds each object it names, so an id is never reused while the
    memo lives. The objects must not change meanwhile."""
    if memo is not None:
        return _struct_text(obj, memo)
    out: list[str] = []
    _struct(out, obj, None)
    return "".join(out)


def _string(value: str) -> str:
    return '"' + value.translate(_ESCAPES) + '"'


def _struct(out: list[str], obj: Any, memo: dict[Any, tuple[Any, str]] | None) -> None:
    sep = "{"
    for name, head, kind, ttype, arg in _fields(type(obj)):
        value = getattr(obj, name)
        if value is None:
            continue
        out.append(sep)
        sep = ","
        out.append(head)
        if kind == _PLAIN_STRING:
            out.append('"' + value.translate(_ESCAPES) + '"')
        elif kind == _INTEGER:
            out.append(str(int(value)))
        elif memo is not None and kind == _CONTAINER:
            _memoized(out, ttype, arg, value, memo, (type(obj), name))
        else:
            _value(out, ttype, arg, value, False, memo)
        out.append("}")
    out.append("{}" if sep == "{" else "}")


_PLAIN_STRING, _INTEGER, _CONTAINER, _OTHER = range(4)
_INTEGERS = frozenset((TType.BYTE, TType.I16, TType.I32, TType.I64))
# a struct class -> its fields in field-id order: (attribute, the field's head text, kind, type, type arg)
_FIELDS: dict[type, list[tuple[str, str, int, int, Any]]] = {}


def _fields(cls: type) -> list[tuple[str, str, int, int, Any]]:
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = []
        for spec in cls.thrift_spec:  # type: ignore[attr-defined]
            if spec is None:
                continue
            fid, ttype, name, arg = spec[0], spec[1], spec[2], spec[3]
            kind = (_PLAIN_STRING if ttype == TType.STRING and arg != "BINARY" else _INTEGER if ttype in _INTEGERS
                    else _CONTAINER if ttype in _CONTAINERS else _OTHER)
            fields.append((name, f'"{fid}":{{"{_NAMES[ttype]}":', kind, ttype, arg))
        _FIELDS[cls] = fields
    return fields


_CONTAINERS = frozenset((TType.STRUCT, TType.LIST, TType.SET, TType.MAP))


def _memoized(out: list[str], ttype: int, arg: Any, value: Any, memo: dict[Any, tuple[Any, str]],
              slot: tuple[type, str]) -> None:
    """`slot`: (struct type, field name), where the field's last value is remembered (ids are ints,
    slots tuples: the keys never clash)."""
    hit = memo.get(id(value))
    if hit is not None and hit[0] is value:
        out.append(hit[1])
        return
    if ttype == TType.STRUCT:  # (by its fields: a partition's descriptor is the last one's but for its location)
        text = _struct_text(value, memo)
        memo[id(value)] = (value, text)
        out.append(text)
        return
    last = memo.get(slot)
    if last is not None and _same(last[0], value):
        text = last[1]
    else:
        part: list[str] = []
        _value(part, ttype, arg, value, False, memo)
        text = "".join(part)
        memo[slot] = (value, text)
    memo[id(value)] = (value, text)
    out.append(text)


def _struct_text(obj: Any, memo: dict[Any, tuple[Any, Any]]) -> str:
    """`obj`'s text, each field's text taken from the last struct of its class the memo wrote
    when that held the very same object in the field (a partition's `after` shares most of its
    `before`'s; a descriptor the last one's columns and serde)."""
    cls = type(obj)
    fields = _fields(cls)
    key = (_LAST, cls)
    values = _getter(cls, fields)(obj)
    last_values, last_texts = memo.get(key) or (repeat(_UNSET), repeat(None))
    texts: list[str | None] = []
    for value, last_value, last_text, field in zip(values, last_values, last_texts, fields):
        if value is last_value:  # (both None: no text)
            texts.append(last_text)
            continue
        if value is None:
            texts.append(None)
            continue
        name, head, kind, ttype, arg = field
        if kind == _PLAIN_STRING:
            texts.append(head + '"' + value.translate(_ESCAPES) + '"}')
        elif kind == _INTEGER:
            texts.append(head + str(int(value)) + "}")
        else:
            part = [head]
            if kind == _CONTAINER:
                _memoized(part, ttype, arg, value, memo, (cls, name))
            else:
                _value(part, ttype, arg, value, False, memo)
            part.append("}")
            texts.append("".join(part))
    memo[key] = (values, texts)
    return "{" + ",".join([t for t in texts if t is not None]) + "}"


def _getter(cls: type, fields: list[tuple[str, str, int, int, Any]]) -> Any:
    """A function giving a struct's field values as a tuple, in `_fields` order."""
    getter = _GETTERS.get(cls)
    if getter is None:
        names = [f[0] for f in fields]
        getter = _GETTERS[cls] = (attrgetter(*names) if len(names) > 1 else
                                  (lambda o: tuple(getattr(o, n) for n in names)))
    return getter


_GETTERS: dict[type, Any] = {}
_UNSET = object()  # no field's value
_LAST = "fields"  # memo key (_LAST, struct class): the last struct of the class, its field values and texts


def _same(a: Any, b: Any) -> bool:
    """Equal, and written as the same text: maps (also nested ones) in the same entry order."""
    return bool(a == b) and _same_order(a, b)


def _same_order(a: Any, b: Any) -> bool:
    """For equal a and b: do their maps list their entries in the same order? (Only the parts that
    can hold a map are looked at.)"""
    if a is b:
        return True
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same_order(v, b[k]) for k, v in a.items())
    if isinstance(a, (list, tuple, set, frozenset)):
        return not a or not _may_hold_map(next(iter(a))) or all(_same_order(x, y) for x, y in zip(a, b))
    names = _map_fields(type(a))
    if names is None:
        fields = getattr(a, "__dict__", None)
        return fields is None or _same_order(fields, b.__dict__)
    return all(_same_order(getattr(a, n), getattr(b, n)) for n in names)


def _may_hold_map(value: Any) -> bool:
    return not isinstance(value, (str, bytes, int, float)) and _map_fields(type(value)) != ()


_MAP_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _map_fields(cls: type) -> tuple[str, ...] | None:
    """The fields of a Thrift struct class that can hold a map, at any depth; None for a class that
    is no Thrift struct."""
    if cls not in _MAP_FIELDS:
        spec = getattr(cls, "thrift_spec", None)
        if spec is None:
            _MAP_FIELDS[cls] = None
        else:
            _MAP_FIELDS[cls] = None  # meanwhile (a struct that holds itself): as if it may hold a map
            _MAP_FIELDS[cls] = tuple(f[2] for f in spec if f is not None and _type_holds_map(f[1], f[3]))
    return _MAP_FIELDS[cls]


def _type_holds_map(ttype: int, arg: Any) -> bool:
    if ttype == TType.MAP:
        return True
    if ttype == TType.STRUCT:
        return _map_fields(arg[0]) != ()
    if ttype in (TType.LIST, TType.SET):
        return _type_holds_map(arg[0], arg[1])
    return False


def _value(out: list[str], ttype: int, arg: Any, value: Any, key: bool,
           memo: dict[Any, tuple[Any, str]] | None = None) -> None:
    if ttype == TType.STRING:
        if arg == "BINARY":
            out.append('"' + base64.b64encode(value).decode("ascii") + '"')
        else:
            out.append(_string(value))
    elif ttype == TType.STRUCT:
        _struct(out, value, memo)
    elif ttype in (TType.LIST, TType.SET):
        etype, earg = arg[0], arg[1]
        out.append(f'["{_NAMES[etype]}",{len(value)}')
        if etype == TType.STRING and earg != "BINARY":  # (partition values)
            for element in value:
                out.append(',"' + element.translate(_ESCAPES) + '"')
        else:
            for element in value:
                out.append(",")
                _value(out, etype, earg, element, False, memo)
        out.append("]")
    elif ttype == TType.MAP:
        ktype, karg, vtype, varg = arg[0], arg[1], arg[2], arg[3]
        if ktype == vtype == TType.STRING and karg != "BINARY" and varg != "BINARY":  # (parameters)
            out.append(f'["str","str",{len(value)},{{' + ",".join([
                '"' + k.translate(_ESCAPES) + '":"' + v.translate(_ESCAPES) + '"' for k, v in value.items()]) + "}]")
            return
        out.append(f'["{_NAMES[ktype]}","{_NAMES[vtype]}",{len(value)},{{')
        for i, (k, v) in enumerate(value.items()):
            if i:
                out.append(",")
            _value(out, ktype, karg, k, True)
            out.append(":")
            _value(out, vtype, varg, v, False, memo)
        out.append("}]")
    else:
        if ttype == TType.BOOL:
            text = "1" if value is True else "0"
        elif ttype == TType.DOUBLE:
            text = f"{value:.17g}"
        else:
            text = str(int(value))
        out.append(f'"{text}"' if key else text)
