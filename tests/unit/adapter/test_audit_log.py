"""adapter/audit_log: a call's lines (its own, then one per directory it deleted) are written in one
go, and are the lines logging writes for them one by one: into the `--audit-log` file and into the
server's log (text and JSON). Storage lines name the call they belong to, also when calls follow
one another on a thread."""

from __future__ import annotations

import io
import logging
import time

import pytest

from adapter import audit_log, call_names, identity, log_format
from store.storage import ownership

AT = 1796547599.5004
PATHS = ["file:/w/db.db/t/p=1", "file:/w/db.db/t/p=a b", 'file:/w/db.db/t/q"x', "file:/w/välue/☃",
         "s3://u:secret@bucket/t/p=2"]


@pytest.fixture
def frozen(monkeypatch):
    monkeypatch.setattr(time, "time", lambda: AT)
    monkeypatch.setattr(time, "time_ns", lambda: int(AT * 1e9))
    log_format._SECOND[0] = None
    identity.forget()
    audit_log._storage.__dict__.clear()
    yield
    call_names.take_arguments("drop_partitions_req")
    audit_log._storage.__dict__.clear()


@pytest.fixture
def audit_logger():
    """The audit logger as found, restored after (configure() adds its file handler once)."""
    log = audit_log.log
    saved = log.handlers[:], log.level, log.propagate
    saved_root = logging.getLogger().handlers[:], logging.getLogger().level
    yield log
    log.handlers[:] = saved[0]
    log.setLevel(saved[1])
    log.propagate = saved[2]
    logging.getLogger().handlers[:] = saved_root[0]
    logging.getLogger().setLevel(saved_root[1])


def _one_drop() -> None:
    """A drop's call: its storage lines while it runs, then its own line."""
    call_names.record_arguments("drop_partitions_req", ("db", "t"))
    for p in PATHS:
        audit_log.storage_record("delete", p, "ok", None)
    audit_log.storage_record("delete", "file:/w/db.db/t/k=1", "ok", "emptied by dropped partitions")
    call_names.take_arguments("drop_partitions_req")
    audit_log.record("drop_partitions_req", "ok", "127.0.0.1:5", "db.t")


def _one_by_one(monkeypatch, read) -> str:
    """What logging writes for _one_drop's lines, a record each (the writes in one go turned off),
    as `read()` returns it."""
    with monkeypatch.context() as m:
        m.setattr(audit_log, "_write_file", lambda messages: False)
        m.setattr(audit_log, "write_info_many", lambda logger, messages: False)
        _one_drop()
    return read()


def test_the_audit_file_gets_the_lines_logging_writes(frozen, audit_logger, tmp_path, monkeypatch):
    path = tmp_path / "audit.log"
    audit_logger.handlers[:] = []
    audit_log.configure(str(path))
    (handler,) = audit_logger.handlers
    writes = []
    real_write = handler.stream.write
    handler.stream.write = lambda text: writes.append(text) or real_write(text)
    _one_drop()
    handler.flush()
    fast = path.read_text(encoding="utf-8")
    assert len(writes) == 1  # one write for the call's seven lines
    path.write_text("")
    handler.stream.seek(0)
    assert fast == _one_by_one(monkeypatch, lambda: handler.flush() or path.read_text(encoding="utf-8"))
    assert fast.count("\n") == 7 and "path=file:/w/db.db/t/p=1" not in fast  # (an = is quoted)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_servers_log_gets_the_lines_logging_writes(frozen, audit_logger, fmt, monkeypatch):
    audit_logger.handlers[:] = []
    audit_logger.propagate = True
    audit_logger.setLevel(logging.NOTSET)
    log_format.configure("INFO", fmt)
    (handler,) = logging.getLogger().handlers
    out = io.StringIO()
    handler.setStream(out)
    _one_drop()
    fast = out.getvalue()
    out.seek(0)
    out.truncate()
    expected = _one_by_one(monkeypatch, out.getvalue)
    assert fast == expected
    assert "secret" not in expected and expected.count("\n") == 7
    if fmt == "json":  # the fields ride along as keys
        assert '"storage": "delete"' in expected and '"object": "db.t"' in expected


def test_storage_lines_name_their_own_call(frozen, audit_logger, tmp_path):
    path = tmp_path / "audit.log"
    audit_logger.handlers[:] = []
    audit_log.configure(str(path))
    call_names.record_arguments("drop_table", ("db1", "t1"))
    ownership.report("delete", "file:/w/db1.db/t1", "ok")
    call_names.take_arguments("drop_table")
    audit_log.record("drop_table", "ok", "c:1", "db1.t1")
    assert audit_log._storage.head_of is None  # the call's arguments are not held after it
    call_names.record_arguments("drop_table", ("db2", "t2"))
    ownership.report("delete", "file:/w/db2.db/t2", "ok")
    call_names.take_arguments("drop_table")
    audit_log.record("drop_table", "ok", "c:1", "db2.t2")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [ln.split(" ", 1)[1] for ln in lines] == [
        "principal=anonymous auth=none client=c:1 call=drop_table object=db1.t1 outcome=ok",
        "principal=anonymous auth=none client=c:1 call=drop_table object=db1.t1 storage=delete "
        "path=file:/w/db1.db/t1 outcome=ok",
        "principal=anonymous auth=none client=c:1 call=drop_table object=db2.t2 outcome=ok",
        "principal=anonymous auth=none client=c:1 call=drop_table object=db2.t2 storage=delete "
        "path=file:/w/db2.db/t2 outcome=ok",
    ]
