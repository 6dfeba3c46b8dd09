"""store/db/shared_reads.py: concurrent lookups share statements, each caller gets its own key's
value, no caller reads a value older than its call, and a failed statement fails only its leader
(the others read alone)."""

from __future__ import annotations

import threading
import time

import pytest

from store.db.shared_reads import SharedReads


class Table:
    """A versioned map whose reads take a while (as a statement's round trip does)."""

    def __init__(self, delay: float = 0.002):
        self.values: dict[str, int] = {}
        self.delay = delay
        self.batches: list[list[str]] = []
        self.fail_next = 0
        self.lock = threading.Lock()

    def read(self, keys):
        assert len(set(keys)) == len(keys)
        with self.lock:
            self.batches.append(list(keys))
            fail = self.fail_next > 0
            self.fail_next -= fail
        snapshot = {k: self.values[k] for k in keys if k in self.values}  # the statement's start
        time.sleep(self.delay)
        if fail:
            raise RuntimeError("statement failed")
        return snapshot


def _run(threads: int, calls: int, fn) -> list:
    errors: list = []

    def loop(i):
        try:
            for j in range(calls):
                fn(i, j)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    ts = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not any(t.is_alive() for t in ts), "a caller never returned"
    return errors


def test_alone_one_statement_per_call():
    table = Table(delay=0)
    table.values["a"] = 1
    shared = SharedReads(table.read)
    assert shared.get("a") == 1
    assert shared.get("b") is None
    assert table.batches == [["a"], ["b"]]


def test_concurrent_calls_share_statements_and_get_their_own_keys():
    table = Table()
    keys = [f"k{i}" for i in range(6)]
    table.values.update({k: i for i, k in enumerate(keys)})
    shared = SharedReads(table.read, limit=4)

    def call(i, j):
        key = keys[(i + j) % len(keys)] if j % 5 else "absent"
        assert shared.get(key) == (table.values[key] if key != "absent" else None)

    assert _run(8, 40, call) == []
    assert shared.answered == 8 * 40
    assert shared.statements < shared.answered / 1.5  # shared: 8 callers, each statement 2 ms
    assert max(len(b) for b in table.batches) <= 4  # `limit` distinct keys a statement


def test_no_caller_reads_older_than_its_call():
    """A value written before a get began is what that get returns, or a newer one."""
    table = Table(delay=0.001)
    table.values["x"] = 0
    shared = SharedReads(table.read)
    written = [0]

    def call(i, j):
        if i == 0:  # the writer
            table.values["x"] = written[0] = written[0] + 1
            time.sleep(0.0005)
        else:
            before = written[0]
            assert shared.get("x") >= before

    assert _run(6, 200, call) == []


def test_a_failed_statement_fails_its_leader_and_the_others_read_alone():
    table = Table(delay=0.005)
    table.values["a"] = 7
    shared = SharedReads(table.read)
    results: list = []
    gate = threading.Barrier(6)

    def call(i, j):
        gate.wait()
        try:
            results.append(shared.get("a"))
        except RuntimeError as exc:
            results.append(str(exc))

    table.fail_next = 1
    assert _run(6, 1, call) == []
    assert results.count("statement failed") == 1
    assert results.count(7) == 5
    table.fail_next = 0
    assert shared.get("a") == 7  # nothing stuck: the next caller leads


def test_a_leader_that_raises_anything_hands_over():
    calls = []

    def read(keys):
        calls.append(keys)
        if len(calls) == 1:
            time.sleep(0.01)
            raise KeyboardInterrupt  # not an Exception: still handed over
        return {k: 1 for k in keys}

    shared = SharedReads(read)
    out: list = []

    def first():
        with pytest.raises(KeyboardInterrupt):
            shared.get("a")

    t = threading.Thread(target=first)
    t.start()
    time.sleep(0.002)
    others = [threading.Thread(target=lambda: out.append(shared.get("b"))) for _ in range(3)]
    for o in others:
        o.start()
    for o in [t, *others]:
        o.join(10)
    assert out == [1, 1, 1]
