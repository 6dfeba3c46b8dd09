"""The audit log: one line for every call that changes something (adapter/authorization.py says
which), whether it was allowed or not: who (the authenticated principal, or with authentication off
the user set_ugi named), how they were identified, the client's address, the method, the object
(db or db.table) and the outcome (`ok`, `denied`, or the exception answered):

    2026-11-24T06:50:01.123Z principal=alice auth=set_ugi client=127.0.0.1:53122 call=drop_table
    object=sales.orders outcome=ok            (one line in the file)

What the server did on storage for a call gets a line of its own (`storage_record`): each
directory it deleted, emptied or skipped and each location it refused (docs/security.md, Storage
ownership), with the path:

    2026-11-24T06:50:01.130Z principal=bob auth=password client=127.0.0.1:53122 call=drop_table
    object=bob_db.t storage=delete path=file:/w/bob_db.db/t outcome=skipped detail="covered by table
    alice_db.t (owner alice)"

Lines go to the logger `hudi_metastore.audit`: with `--audit-log PATH` to that file only (appended,
one line per call, also from several worker processes), else to the server's log. Client text is
quoted as in the call log, so one call stays one line."""

from __future__ import annotations

import logging
import threading
import time

from adapter import identity
from adapter.authorization import changes_something
from adapter.call_names import current_arguments, object_of
from adapter.log_format import quoted, write_info_many, write_lines

log = logging.getLogger("hudi_metastore.audit")


def _utc(created: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created)) + f".{int((created - int(created)) * 1000):03d}Z"


class _Utc(logging.Formatter):
    def formatTime(self, record, datefmt=None):  # noqa: N802 (logging's name)
        return _utc(record.created)


def configure(path: str | None) -> None:
    """Send the audit lines to `path` (once per process); None leaves them in the server's log."""
    from store.storage import ownership

    ownership.set_reporter(storage_record)
    if not path or any(getattr(h, "hms_audit", False) for h in log.handlers):
        return
    handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    handler.setFormatter(_Utc("%(asctime)s %(message)s"))
    handler.hms_audit = True  # type: ignore[attr-defined]
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def record(method: str, outcome: str, client: str | None, obj: str | None) -> None:
    caller = identity.current()
    rows = [{"principal": caller.principal or caller.user or "anonymous",
             "auth": caller.mechanism or ("set_ugi" if caller.user else "none"),
             "client": client, "call": method, "object": obj, "outcome": outcome}]
    for fields in getattr(_storage, "lines", None) or []:  # what the call did on storage, after it
        rows.append({**fields, "client": client} if "client" in fields else fields)
    _storage.lines = []
    _storage.head_of = _storage.head = None  # (not holding on to the call's arguments)
    _write(rows)


def _write(rows: list[dict]) -> None:
    """The lines of `rows`, in one write where the set-up allows (a drop of 1,000 partitions has
    3,000 of them: one by one through logging they took 40 ms)."""
    messages = []
    for fields in rows:
        shown = {k: v for k, v in fields.items() if v is not None}
        messages.append((" ".join(f"{k}={quoted(v)}" for k, v in shown.items()), shown))
    if _write_file(messages) or write_info_many(log, messages):
        return
    for message, shown in messages:
        log.info("%s", message, extra={"fields": shown})


def _write_file(messages: list[tuple[str, dict]]) -> bool:
    """The lines into the `--audit-log` file, as its handler writes them, when that handler is the
    only one (configure()'s, no filters); else False, having written nothing."""
    if len(log.handlers) != 1 or log.propagate or log.filters or log.disabled or not log.isEnabledFor(logging.INFO):
        return False
    handler = log.handlers[0]
    if not getattr(handler, "hms_audit", False) or type(handler) is not logging.FileHandler or \
            type(handler.formatter) is not _Utc or handler.filters or handler.level > logging.INFO or \
            handler.stream is None:
        return False
    stamp = _utc(time.time())
    write_lines(handler, log.name, "".join(f"{stamp} {m}{handler.terminator}" for m, _ in messages), messages[0][0])
    return True


_storage = threading.local()  # one thread per connection: the storage lines of this thread's call


def storage_record(action: str, path: str, outcome: str, detail: str | None) -> None:
    """A line for what the server did (or refused to do) on storage: written after the line of the
    call it belongs to (with its client), at once for the server's own work."""
    got = current_arguments()
    kept = got is not None and getattr(_storage, "head_of", None) is got
    head = _storage.head if kept else _head(got)
    fields = {**head, "storage": action, "path": path, "outcome": outcome, "detail": detail}
    if head["call"] is None or not changes_something(head["call"]):
        _write([fields])
        return
    if not kept:  # the fields its storage lines share, made once a call (a drop of 1,000 partitions
        _storage.head_of, _storage.head = got, head  # reports 3,000 directories)
    lines = getattr(_storage, "lines", None)
    if lines is None:
        lines = _storage.lines = []
    if len(lines) < 100_000:  # bounded (a drop of that many partitions)
        lines.append(fields)


def _head(got: tuple[str, tuple] | None) -> dict:
    """The fields a storage line shares with the others of its call (who, the call, its object)."""
    caller = identity.current()
    return {"principal": caller.principal or caller.user or "anonymous",
            "auth": caller.mechanism or ("set_ugi" if caller.user else "none"), "client": None,
            "call": got[0] if got else None, "object": object_of(got[0], got[1]) if got else None}
