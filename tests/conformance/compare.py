"""Differential comparison: send the same Thrift call to the reference Hive Metastore and to our
server, normalize both answers with the allow-list (``allowlist.py``) and compare field by field."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thrift.Thrift import TApplicationException, TException, TMessageType, TType

from tests.conformance import allowlist as A

_IDL = Path(__file__).resolve().parents[2] / "thrift_idl" / "hive_metastore.thrift"
_PRIMITIVES = {TType.BOOL: False, TType.BYTE: 0, TType.I16: 0, TType.I32: 0, TType.I64: 0, TType.DOUBLE: 0.0}


def _optional_fields() -> frozenset[str]:
    """``Struct.field`` for every field our IDL marks optional."""
    out, current = set(), None
    for line in _IDL.read_text().splitlines():
        m = re.match(r"\s*(?:struct|exception|union)\s+(\w+)\s*\{", line)
        if m:
            current = m.group(1)
            continue
        if line.strip().startswith("}"):
            current = None
            continue
        if current:
            f = re.match(r"\s*\d+\s*:\s*optional\s+.*?(\w+)\s*(?:=[^,;/]*)?[,;]?\s*(?://.*)?$", line)
            if f:
                out.add(f"{current}.{f.group(1)}")
    return frozenset(out)


OPTIONAL = _optional_fields()


class Each:
    """A call argument built per side: ``Each(lambda client: client.get_table(db, t))`` (e.g. an
    object fetched from each server, then changed the same way, for an alter call)."""

    def __init__(self, build):
        self.build = build


class RequestFormClient:
    """A reference client for a Hive version that removed calls 2.3 clients still send
    (``allowlist.REFERENCE_SUBSTITUTES``): those calls go out in their request form, every other
    attribute is the wrapped client's."""

    def __init__(self, client, version: str):
        self._client = client
        self._subs = A.REFERENCE_SUBSTITUTES.get(version, {})

    def __getattr__(self, name):
        if name in self._subs:
            return getattr(self, "_sub_" + name)
        return getattr(self._client, name)

    def _sub_get_table(self, db_name, tbl_name):
        from thrift_idl.hive_metastore.ttypes import GetTableRequest

        return self._client.get_table_req(GetTableRequest(dbName=db_name, tblName=tbl_name)).table

    def _sub_get_table_objects_by_name(self, db_name, tbl_names):
        from thrift_idl.hive_metastore.ttypes import GetTablesRequest

        return self._client.get_table_objects_by_name_req(GetTablesRequest(dbName=db_name, tblNames=tbl_names)).tables


@dataclass
class Side:
    """One metastore as the suite sees it: its client and the prefixes masked in its answers."""

    name: str  # "reference" | "ours"
    client: Any = field(repr=False)
    port: int
    warehouse: str = ""  # e.g. "file:/tmp/x/warehouse" (no trailing slash)
    external: str = ""  # root for external locations the tests pass, e.g. "/tmp/x/ext-ref"

    def subst(self, obj):
        """Deep copy of call arguments with ``@EXT@`` / ``@WH@`` replaced by this side's roots."""
        if isinstance(obj, Each):
            return self.subst(obj.build(self.client))
        if isinstance(obj, str):
            return obj.replace("@EXT@", self.external).replace("@WH@", self.warehouse)
        if isinstance(obj, list):
            return [self.subst(x) for x in obj]
        if isinstance(obj, tuple):
            return tuple(self.subst(x) for x in obj)
        if isinstance(obj, dict):
            return {self.subst(k): self.subst(v) for k, v in obj.items()}
        if hasattr(obj, "thrift_spec"):
            new = copy.copy(obj)
            for spec in obj.thrift_spec or ():
                if spec:
                    setattr(new, spec[2], self.subst(getattr(obj, spec[2], None)))
            return new
        return obj

    def mask(self, s: str) -> str:
        """Replace this side's directories by ``<WH>`` / ``<EXT>`` (with or without ``file:``)."""
        for root, token in ((self.external, "<EXT>"), (self.warehouse, "<WH>")):
            if not root:
                continue
            bare = root[len("file:"):] if root.startswith("file:") else root
            for form in (f"file://{bare}", f"file:{bare}", bare):
                s = s.replace(form, token)
        return s


@dataclass
class Outcome:
    ok: bool
    value: Any = None  # normalized result when ok
    exc_type: str = ""
    message: str = ""
    app_type: int | None = None  # TApplicationException.type
    raw: Any = None

    def describe(self) -> str:
        if self.ok:
            return f"ok {self.value!r}"[:2000]
        extra = f"[{self.app_type}]" if self.app_type is not None else ""
        return f"{self.exc_type}{extra}: {self.message}"


def normalize(obj, side: Side, cls: str = ""):
    """A plain, comparable tree: structs -> dicts (with Java primitive defaults), times masked,
    directories masked, sets sorted, list-keyed maps as sorted pairs."""
    if isinstance(obj, str):
        return side.mask(obj)
    if isinstance(obj, bytes):
        return obj
    if isinstance(obj, (list, tuple)):
        out = [normalize(x, side, cls) for x in obj]
        if out and all(isinstance(x, dict) and x.get("__struct__") in A.UNORDERED_STRUCT_LISTS for x in out):
            out.sort(key=repr)
        return out
    if isinstance(obj, (set, frozenset)):
        return sorted((normalize(x, side, cls) for x in obj), key=repr)
    if isinstance(obj, dict):
        items = [(normalize(k, side), normalize(v, side)) for k, v in obj.items()]
        if any(isinstance(k, list) for k, _ in items):
            return sorted(items, key=repr)
        out = dict(items)
        for k in A.TIME_PARAMETERS & set(out):
            out[k] = "<time>" if out[k] not in (None, "", "0") else out[k]
        return out
    spec = getattr(obj, "thrift_spec", None)
    if spec is not None:
        name = type(obj).__name__
        out = {"__struct__": name}
        for s in spec:
            if not s:
                continue
            ttype, fname = s[1], s[2]
            v = getattr(obj, fname, None)
            if v is None and A.JAVA_PRIMITIVE_DEFAULTS and ttype in _PRIMITIVES and \
                    f"{name}.{fname}" not in OPTIONAL:
                v = _PRIMITIVES[ttype]
            if fname in A.TIME_FIELDS and isinstance(v, int) and v:
                v = "<time>"
            if f"{name}.{fname}" in A.SURROGATE_IDS and isinstance(v, int) and v > 0:
                v = "<id>"
            out[fname] = normalize(v, side, name)
        return out
    return obj


def outcome(fn, side: Side, post=None) -> Outcome:
    try:
        res = fn()
        if post is not None:
            res = post(res)
    except TApplicationException as e:
        return Outcome(False, exc_type="TApplicationException", message=side.mask(e.message or ""),
                       app_type=e.type, raw=e)
    except TException as e:
        return Outcome(False, exc_type=type(e).__name__, message=side.mask(getattr(e, "message", "") or str(e)),
                       raw=e)
    return Outcome(True, value=normalize(res, side), raw=res)


def diff(ref, ours, path: str = "$", struct: str = "", skip: frozenset = frozenset()) -> list[str]:
    """Differences between two normalized trees, minus allowed ones (``skip``: extra
    ``Struct.field`` names not compared, from ``allowlist.DELIBERATE``)."""
    if isinstance(ref, dict) and isinstance(ours, dict):
        name = ref.get("__struct__", struct) if "__struct__" in ref else struct
        out = []
        for k in sorted(set(ref) | set(ours), key=str):
            rv, ov = ref.get(k), ours.get(k)
            if name and f"{name}.{k}" in A.NEWER_HIVE_FIELDS and rv == A.NEWER_HIVE_FIELDS[f"{name}.{k}"]:
                continue
            if name and f"{name}.{k}" in skip:
                continue
            out.extend(diff(rv, ov, f"{path}.{k}", name, skip))
        return out
    if isinstance(ref, list) and isinstance(ours, list):
        if len(ref) != len(ours):
            return [f"{path}: length {len(ref)} != {len(ours)}\n"
                    f"    reference: {_short(ref)}\n    ours:      {_short(ours)}"]
        out = []
        for i, (r, o) in enumerate(zip(ref, ours)):
            out.extend(diff(r, o, f"{path}[{i}]", struct, skip))
        return out
    if ref != ours:
        return [f"{path}: reference={_short(ref)} ours={_short(ours)}"]
    return []


def _short(v, n: int = 600) -> str:
    s = repr(v)
    return s if len(s) <= n else s[:n] + "..."


def unordered(value):
    """Sort a normalized list whose order neither server promises."""
    return sorted(value, key=repr) if isinstance(value, list) else value


@dataclass
class CallRecord:
    method: str
    ref: Outcome
    ours: Outcome


class Mismatch(AssertionError):
    pass


class AwaitingServerChange(AssertionError):
    """A test's only mismatches are differences from a reference that need a change of our server
    (``allowlist.VERSION_DIFFERENCES`` entries of kind "server-change"); such a test is marked
    ``xfail(strict=True, raises=AwaitingServerChange)`` for that reference."""


_REFERENCE_CACHE: dict = {}


@dataclass
class Pair:
    """The two servers under comparison; ``call`` sends one Thrift call to both."""

    reference: Side
    ours: Side
    history: list[CallRecord] = field(default_factory=list, repr=False)
    token: str = ""  # this test's random name part
    version: str = "2.3"  # the reference's Hive version
    #: HMS_CONFORMANCE_COLLECT=1: record mismatches and go on (the test fails at its end with all of
    #: them) instead of stopping at the first; for surveying a new reference
    collect: bool = False
    collected: list[str] = field(default_factory=list, repr=False)
    test: str = ""  # the test function's name (for allowlist.VERSION_DIFFERENCES)
    awaiting: dict[str, list[str]] = field(default_factory=dict, repr=False)  # server-change id -> hits

    def _problem(self, text: str):
        if self.collect:
            self.collected.append(text)
            return
        raise Mismatch(text)

    def _known(self, method: str, args_s: str, problems: list[str]) -> list[str]:
        """Drop the problems ``allowlist.VERSION_DIFFERENCES`` explains for this reference and test:
        "accepted" ones vanish, "server-change" ones are remembered for :meth:`finish`."""
        entries = A.VERSION_DIFFERENCES.get(self.version, {})
        left = []
        for prob in problems:
            text = f"{method}{args_s}\n{prob}"
            for did, d in entries.items():
                if self.test in d.tests and (not d.methods or method in d.methods) and \
                        re.search(d.pattern, text, re.S):
                    if d.kind == "server-change":
                        self.awaiting.setdefault(did, []).append(text)
                    break
            else:
                left.append(prob)
        return left

    def finish(self) -> None:
        """End of a test: raise :class:`AwaitingServerChange` listing the remembered differences
        that need a server change; a listed one that did not show up is a plain failure (the change
        landed: remove the entry)."""
        expected = [did for did, d in A.VERSION_DIFFERENCES.get(self.version, {}).items()
                    if d.kind == "server-change" and self.test in d.tests]
        gone = [did for did in expected if did not in self.awaiting]
        if gone:
            raise Mismatch(f"allowlist.VERSION_DIFFERENCES[{self.version!r}] {gone} no longer differ in "
                           f"{self.test}: remove them (and their xfail)")
        if self.awaiting:
            raise AwaitingServerChange("differences awaiting a server change:\n" + "\n".join(
                f"[{did}] {A.VERSION_DIFFERENCES[self.version][did].reason}\n  e.g. {_short(hits[0], 700)}"
                for did, hits in self.awaiting.items()))

    def call(self, method: str, *args, msg: bool = False, msg_contains: str | None = None,
             unordered_result: bool = False, expect: str | None = None, post=None, allow: str | None = None,
             slow_reference_error: bool = False):
        """Call ``method(*args)`` on both servers and compare the answers.

        ``msg``: also compare exception messages exactly; ``msg_contains``: both messages must
        contain this text; ``unordered_result``: compare a list result as a multiset;
        ``expect``: the exception type both must raise ("ok" for success); ``post``: applied to
        both raw results first (e.g. keep only this test's names of a global listing); ``allow``: an
        ``allowlist.DELIBERATE`` id whose fields are not compared; ``slow_reference_error``: a
        failing call without side effects that the reference answers slowly (its RetryingHMSHandler
        retries store errors for ~20 s): its reference outcome is reused across backends.
        Returns our raw result.
        """
        if method in A.UNORDERED_BY_VERSION.get(self.version, {}):
            unordered_result = True
        elif unordered_result and method not in A.UNORDERED_CALLS:
            raise AssertionError(f"{method} answers in a defined order: add it to allowlist.UNORDERED_CALLS "
                                 "with a reason, or compare it in order")
        outs = []
        key = None
        if slow_reference_error:
            key = (self.version, method, repr(args).replace(self.token, "<T>"))
        for side in (self.reference, self.ours):
            if side is self.reference and key in _REFERENCE_CACHE:
                outs.append(_REFERENCE_CACHE[key])
                continue
            a = side.subst(list(args))
            outs.append(outcome(lambda side=side, a=a: getattr(side.client, method)(*a), side, post))
        ref, ours = outs
        if key is not None and not ref.ok:
            _REFERENCE_CACHE[key] = ref
        self.history.append(CallRecord(method, ref, ours))
        problems = []
        if ref.ok != ours.ok or ref.exc_type != ours.exc_type or ref.app_type != ours.app_type:
            problems.append(f"outcome differs\n    reference: {ref.describe()}\n    ours:      {ours.describe()}")
        elif ref.ok:
            rv, ov = ref.value, ours.value
            if unordered_result:
                rv, ov = unordered(rv), unordered(ov)
            problems.extend(diff(rv, ov, skip=frozenset(A.DELIBERATE[allow][0]) if allow else frozenset()))
        else:
            if msg and ref.message != ours.message:
                problems.append(f"message differs\n    reference: {ref.message!r}\n    ours:      {ours.message!r}")
            if msg_contains is not None:
                for o, who in ((ref, "reference"), (ours, "ours")):
                    if msg_contains not in o.message:
                        problems.append(f"{who} message lacks {msg_contains!r}: {o.message!r}")
        if expect is not None:
            got = "ok" if ref.ok else ref.exc_type
            if got != expect:
                problems.append(f"reference answered {ref.describe()}, test expects {expect}")
        if problems:
            args_s = _short(args, 300)
            problems = self._known(method, args_s, problems)
        if problems:
            self._problem(f"{method}{args_s}:\n  " + "\n  ".join(problems))
        return ours.raw

    def both(self, method: str, *args):
        """Call on both without comparing (setup whose answers are compared elsewhere)."""
        res = []
        for side in (self.reference, self.ours):
            res.append(getattr(side.client, method)(*side.subst(list(args))))
        return res

    def reference_gap(self, gap: str, method: str, *args):
        """A call the reference cannot answer (``allowlist.REFERENCE_GAPS[gap]``): check that it
        still fails as documented, and return our raw answer for the test to verify."""
        if gap in A.CLOSED_GAPS.get(self.version, {}):  # this reference answers: compare
            return self.call(method, *args)
        expected_error, _reason = A.REFERENCE_GAPS[gap]
        ref = outcome(lambda: getattr(self.reference.client, method)(*self.reference.subst(list(args))),
                      self.reference)
        want_type = expected_error.split("(")[0]
        if ref.ok or ref.exc_type != want_type:
            self._problem(f"{method}{_short(args, 300)}: allow-list entry {gap!r} says the reference "
                          f"fails with {expected_error}, but it answered {ref.describe()}")
        return getattr(self.ours.client, method)(*self.ours.subst(list(args)))

    def quirk(self, quirk: str, method: str, *args):
        """A call listed in ``allowlist.QUIRKS``: check each side answers as documented there."""
        want_ref, want_ours, _reason = A.quirk(quirk, self.version)
        if want_ref is None:  # this reference answers as ours does: compare
            self.call(method, *args)
            return
        for side, want in ((self.reference, want_ref), (self.ours, want_ours)):
            o = outcome(lambda side=side: getattr(side.client, method)(*side.subst(list(args))), side)
            got = "ok" if o.ok else o.exc_type
            if got != want:
                self._problem(f"{method}{_short(args, 300)}: allow-list quirk {quirk!r} says {side.name} "
                              f"answers {want}, but it answered {o.describe()}")

    def same(self, what: str, ref_raw, ours_raw) -> None:
        """Compare a reference answer with an answer of ours obtained differently (e.g. a Hive 3
        call of ours against the Hive 2.3 call of the reference)."""
        problems = diff(normalize(ref_raw, self.reference), normalize(ours_raw, self.ours))
        problems = self._known(what, "", problems) if problems else problems
        if problems:
            self._problem(f"{what}:\n  " + "\n  ".join(problems))

    def ours_only(self, method: str, *args):
        return getattr(self.ours.client, method)(*self.ours.subst(list(args)))


def raw_call(client, method: str, args_struct=None):
    """Send a call by name (even one the bindings lack) and return the TApplicationException or
    the reply type; used for unknown-method checks."""
    iprot, oprot = client._iprot, client._oprot
    oprot.writeMessageBegin(method, TMessageType.CALL, 0)
    oprot.writeStructBegin("args")
    oprot.writeFieldStop()
    oprot.writeStructEnd()
    oprot.writeMessageEnd()
    oprot.trans.flush()
    _name, mtype, _seq = iprot.readMessageBegin()
    if mtype == TMessageType.EXCEPTION:
        x = TApplicationException()
        x.read(iprot)
        iprot.readMessageEnd()
        return x
    iprot.skip(TType.STRUCT)
    iprot.readMessageEnd()
    return mtype


# --------------------------------------------------------------------------- test helpers
