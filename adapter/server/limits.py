"""The server's connection and message limits (the `serve` flags of the same names)."""

from __future__ import annotations

import logging
import resource
from dataclasses import dataclass

log = logging.getLogger("hudi_metastore.server")

DEFAULT_MAX_MESSAGE_SIZE = 104_857_600
DEFAULT_MAX_CONNECTIONS = 2_000
DEFAULT_READ_TIMEOUT = 60.0
FD_RESERVE = 64  # descriptors kept for the database pool, logs, the metrics endpoint


@dataclass(frozen=True)
class Limits:
    framed: bool = False
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_connections: int = DEFAULT_MAX_CONNECTIONS  # per worker process
    read_timeout: float = DEFAULT_READ_TIMEOUT  # seconds without a byte in the middle of a request; 0: none
    idle_timeout: float = 0.0  # seconds a connection may wait between requests; 0: forever
    max_inflight_bytes: int | None = None  # per process; None: 2 x max_message_size; 0: unlimited

    @property
    def inflight_bytes(self) -> int:
        return 2 * self.max_message_size if self.max_inflight_bytes is None else self.max_inflight_bytes


def raise_open_files_limit() -> int:
    """Raise the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open files limit from %d to %d: %s", soft, target, exc)
    return soft


def fit_connections(limits: Limits, open_files: int) -> Limits:
    """`limits` with max_connections lowered to what the open files limit allows (logged)."""
    room = open_files - FD_RESERVE
    if limits.max_connections <= room:
        return limits
    log.warning("--max-connections %d is above what the open files limit (%d) allows: using %d",
                limits.max_connections, open_files, max(room, 1))
    return Limits(**{**limits.__dict__, "max_connections": max(room, 1)})
