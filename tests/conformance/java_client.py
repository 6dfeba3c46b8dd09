"""Hive 4.0.1's own client in the comparison: ``tests/java/Hive4ClientSequence.java`` runs one scripted
sequence of HiveMetaStoreClient calls against a metastore and prints each step's answer as a JSON
line (Thrift structs in TJSONProtocol); here both servers' answers are decoded with our bindings,
normalized as every other comparison (``compare.normalize``: times, ids, directories) and compared
step by step with the allow-list's entries for the sequence (``allowlist.JAVA_CLIENT_*``)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from thrift.protocol import TJSONProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import TTransport

from adapter.server import unsupported
from tests.conformance import allowlist as A
from tests.conformance.compare import Pair, Side, diff, normalize, unordered
from tests.conformance.method_coverage import hive4_methods
from tests.harness import jvm
from thrift_idl.hive_metastore import ttypes as H

PROGRAM = "Hive4ClientSequence"


def run_sequence(classpath: str, port: int, db: str, token: str, timeout: float = 180) -> list[dict]:
    """The sequence's steps against the metastore on ``port`` (one JVM)."""
    run = subprocess.run(["java", *jvm.java_flags(), "-cp", classpath, PROGRAM, str(port), db, token],
                         capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        raise AssertionError(f"{PROGRAM} against port {port} failed ({run.returncode}):\n{run.stderr[-3000:]}")
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith('{"step"')]


_CALL = re.compile(r"\bcall=(\S+) ms=\S+ status=(\S+)")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
_BLOCK = re.compile(r"<!-- java-client-methods:begin -->(.*?)<!-- java-client-methods:end -->", re.S)


def methods_called(log: Path, offset: int) -> tuple[set[str], set[str]]:
    """(served, refused): the Thrift methods our server's call log shows after byte `offset` (its
    log lines of one sequence), the refused ones (status `unsupported`) apart."""
    with open(log, "rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")
    served: set[str] = set()
    refused: set[str] = set()
    hive4 = set(hive4_methods())  # (not fb303's, e.g. the shutdown of the client's close)
    for name, status in _CALL.findall(text):
        if name in hive4:
            (refused if status == "unsupported" else served).add(name)
    return served, refused


def documented_methods() -> tuple[set[str], set[str]]:
    """(served, refused) as docs/conformance.md lists them between its java-client-methods markers:
    the back-quoted names of the paragraph starting "Served" and of the one starting "Refused"."""
    block = _BLOCK.search(DOCS.read_text())
    assert block, "docs/conformance.md lacks the java-client-methods block"
    out: dict[str, set[str]] = {}
    for para in block.group(1).strip().split("\n\n"):
        out[para.split()[0]] = set(re.findall(r"`([A-Za-z_0-9]+)`", para))
    return out.get("Served", set()), out.get("Refused", set())


def _struct(name: str, text: str):
    obj = getattr(H, name)()
    obj.read(TJSONProtocol.TJSONProtocol(TTransport.TMemoryBuffer(text.encode())))
    return obj


def decode(step: dict):
    """A step's answer as our bindings' objects (structs, lists and maps of them, plain values)."""
    if "struct" in step:
        return _struct(step["struct"], step["tjson"])
    if "list" in step:
        return [_struct(step["list"], t) for t in step["tjson"]]
    if "map" in step:
        return {k: [_struct(step["map"], t) for t in v] for k, v in step["tjson"].items()}
    return step.get("value")


def _every_list_sorted(value):
    """A normalized answer with every list in it sorted (compared as multisets)."""
    if isinstance(value, list):
        return unordered([_every_list_sorted(v) for v in value])
    if isinstance(value, dict):
        return {k: _every_list_sorted(v) for k, v in value.items()}
    return value


def _outcome(step: dict, side: Side) -> str:
    if "error" not in step:
        return "ok"
    app = f"[{step['appType']}]" if "appType" in step else ""
    return f"{step['error']}{app}: {side.mask(step.get('message') or '')}"


def _refusal_problems(method: str, outcome: str) -> list[str]:
    """A refused feature's method: ours answers the refusal naming the feature, as declared."""
    kind = "MetaException" if unsupported.meta_field(method) is not None else \
        f"TApplicationException[{TApplicationException.INTERNAL_ERROR}]"
    wanted = unsupported.message(method)  # (Hive's client may wrap the text: "Got exception: ...")
    if outcome.startswith(f"{kind}: ") and outcome.endswith(wanted):
        return []
    return [f"not the refusal\n    wanted: {kind}: ...{wanted}\n    ours:   {outcome}"]


def compare(cf: Pair, reference: list[dict], ours: list[dict]) -> None:
    """Both sides' steps, one by one: outcome (exception class), message where the allow-list
    compares it, answer (normalized) unless the step is compared by outcome only."""
    assert [s["step"] for s in reference] == [s["step"] for s in ours], (reference, ours)
    for ref, our in zip(reference, ours):
        name = ref["step"]
        problems = []
        if name in A.JAVA_CLIENT_REFUSED:
            problems = _refusal_problems(A.JAVA_CLIENT_REFUSED[name], _outcome(our, cf.ours))
            if problems:
                cf._problem(f"{name}:\n  " + "\n  ".join(problems))
            continue
        ref_out, our_out = _outcome(ref, cf.reference), _outcome(our, cf.ours)
        if ("error" in ref) != ("error" in our) or ref.get("error") != our.get("error") or \
                ref.get("appType") != our.get("appType"):
            problems.append(f"outcome differs\n    reference: {ref_out}\n    ours:      {our_out}")
        elif "error" in ref:
            if name in A.JAVA_CLIENT_MESSAGES and ref_out != our_out:
                problems.append(f"message differs\n    reference: {ref_out!r}\n    ours:      {our_out!r}")
        elif name not in A.JAVA_CLIENT_OUTCOME_ONLY:
            rv, ov = (normalize(decode(s), side) for s, side in ((ref, cf.reference), (our, cf.ours)))
            if name in A.JAVA_CLIENT_UNORDERED:
                rv, ov = _every_list_sorted(rv), _every_list_sorted(ov)
            problems.extend(diff(rv, ov))
        if problems:
            problems = cf._known(name, "", problems)
        if problems:
            cf._problem(f"{name}:\n  " + "\n  ".join(problems))
