"""The call log's line: one per Thrift call, with its latency and outcome, who called (client
address, the user set_ugi named) and the object it named (db or db.table), as text
(`call=get_table ms=0.61 status=ok client=10.0.0.5:53122 user=etl object=sales.orders`) and, for
JSON logs (adapter/log_format.py), as fields. Values from clients are quoted when they hold spaces,
quotes, '=' or control characters (`log_format.quoted`), so one call stays one parseable line. What a
call names comes from adapter/call_names.py; calls that change something also get an audit line."""

from __future__ import annotations

import logging
from typing import Any

from adapter import audit_log
from adapter.authorization import changes_something
from adapter.call_names import object_of, take_arguments
from adapter.log_format import quoted, write_info


def client_of(iprot) -> str | None:
    """host:port of the connection's peer (looked up once per connection)."""
    trans = getattr(iprot, "trans", None)
    inner = (getattr(trans, "_TBufferedTransport__trans", None) or getattr(trans, "_TFramedTransport__trans", None)
             or trans)
    peer = getattr(inner, "hms_peer", None)
    if peer is None:
        handle = getattr(inner, "handle", None)
        try:
            addr = handle.getpeername() if handle is not None else None
        except OSError:
            addr = None
        if not addr:
            return None
        host = addr[0]
        peer = f"[{host}]:{addr[1]}" if ":" in host else f"{host}:{addr[1]}"
        try:
            inner.hms_peer = peer  # type: ignore[union-attr]
        except AttributeError:
            pass
    return peer


def log_call(logger: logging.Logger, method: str | bytes, seconds: float, status: str, iprot=None) -> None:
    """The call's line (INFO), with its fields for JSON logs. `method` as the client sent it (bytes
    when it is no UTF-8); written through adapter/server/logtext.field, so it cannot forge a line."""
    from adapter.handlers.service import ugi_user
    from adapter.server.logtext import field

    name = method if isinstance(method, str) else None
    args = take_arguments(name or "")
    audited = name is not None and changes_something(name)
    if not audited and not logger.isEnabledFor(logging.INFO):
        return
    client = client_of(iprot) if iprot is not None else None
    obj = object_of(name, args) if name is not None else None
    if audited:
        audit_log.record(name, status, client, obj)  # type: ignore[arg-type]
    if not logger.isEnabledFor(logging.INFO):
        return
    shown = field(method)
    fields: dict[str, Any] = {"call": name if name is not None else shown, "ms": round(seconds * 1000, 2),
                              "status": status, "client": client, "user": ugi_user(), "object": obj}
    text = " ".join(f"{k}={shown}" if k == "call" else f"{k}={v:.2f}" if k == "ms" else f"{k}={quoted(v)}"
                    for k, v in fields.items() if v is not None)
    given = {k: v for k, v in fields.items() if v is not None}
    if not write_info(logger, text, given):
        logger.info("%s", text, extra={"fields": given})
