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
from adapter.log_format import quoted

log = logging.getLogger("hudi_metastore.audit")


class _Utc(logging.Formatter):
    def formatTime(self, record, datefmt=None):  # noqa: N802 (logging's name)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"


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
    _write({"principal": caller.principal or caller.user or "anonymous",
            "auth": caller.mechanism or ("set_ugi" if caller.user else "none"),
            "client": client, "call": method, "object": obj, "outcome": outcome})
    for fields in getattr(_storage, "lines", None) or []:  # what the call did on storage, after it
        _write({**fields, "client": client} if "client" in fields else fields)
    _storage.lines = []


def _write(fields: dict) -> None:
    shown = {k: v for k, v in fields.items() if v is not None}
    log.info("%s", " ".join(f"{k}={quoted(v)}" for k, v in shown.items()), extra={"fields": shown})


_storage = threading.local()  # one thread per connection: the storage lines of this thread's call


def storage_record(action: str, path: str, outcome: str, detail: str | None) -> None:
    """A line for what the server did (or refused to do) on storage: written after the line of the
    call it belongs to (with its client), at once for the server's own work."""
    from adapter.authorization import changes_something
    from adapter.call_names import current_call

    caller = identity.current()
    call = current_call()
    fields = {"principal": caller.principal or caller.user or "anonymous",
              "auth": caller.mechanism or ("set_ugi" if caller.user else "none"), "client": None,
              "call": call[0] if call else None, "object": call[1] if call else None,
              "storage": action, "path": path, "outcome": outcome, "detail": detail}
    if call is None or not changes_something(call[0]):
        _write(fields)
        return
    lines = getattr(_storage, "lines", None)
    if lines is None:
        lines = _storage.lines = []
    if len(lines) < 100_000:  # bounded (a drop of that many partitions)
        lines.append(fields)
