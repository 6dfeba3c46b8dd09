"""Failed log-ins slowed down per client address (issue 41).

After `FREE_FAILURES` failed log-ins (a wrong password or user name, a refused delegation token)
from one address, that address must wait before its next attempt: `FIRST_WAIT_S`, doubling with
every further failure up to `MAX_WAIT_S`. An attempt during the wait is refused at once, without
checking its credentials, so guessing runs at no more than one try per wait however many
connections are opened. A successful log-in clears the address; an address without failures for
`FORGET_AFTER_S` starts afresh. Other addresses are never slowed down.

The table holds at most `MAX_ADDRESSES` addresses (least recently failed forgotten first), about
100 bytes each. IPv6 clients count per /64 network (one host usually owns a whole /64). Each worker
process (`--workers`) keeps its own table.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

FREE_FAILURES = 5
FIRST_WAIT_S = 1.0
MAX_WAIT_S = 60.0
FORGET_AFTER_S = 900.0
MAX_ADDRESSES = 10_000


@dataclass
class _Failures:
    count: int
    last: float  # when the last failure was
    until: float  # no attempt before this


def client_key(addr) -> str:
    """What failures are counted against: the host of a socket address (an IPv6 one as its /64)."""
    host = addr[0] if isinstance(addr, tuple) and addr else str(addr)
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class LoginBackoff:
    def __init__(self, clock: Callable[[], float] = time.monotonic, max_addresses: int = MAX_ADDRESSES):
        self.clock = clock
        self.max_addresses = max_addresses
        self._lock = threading.Lock()
        self._failures: OrderedDict[str, _Failures] = OrderedDict()

    def wait_left(self, key: str) -> float:
        """Seconds before `key` may try to log in again (0: now)."""
        now = self.clock()
        with self._lock:
            f = self._failures.get(key)
            if f is None:
                return 0.0
            if now - f.last > FORGET_AFTER_S:
                del self._failures[key]
                return 0.0
            return max(0.0, f.until - now)

    def failed(self, key: str) -> float:
        """Record a failed log-in; the seconds `key` must now wait."""
        now = self.clock()
        with self._lock:
            f = self._failures.pop(key, None)
            if f is None or now - f.last > FORGET_AFTER_S:
                f = _Failures(0, now, now)
            f.count += 1
            f.last = now
            beyond = f.count - FREE_FAILURES
            wait = 0.0 if beyond < 0 else min(MAX_WAIT_S, FIRST_WAIT_S * 2 ** min(beyond, 32))
            f.until = now + wait
            self._failures[key] = f  # the most recent last
            while len(self._failures) > self.max_addresses:
                self._failures.popitem(last=False)
            return wait

    def succeeded(self, key: str) -> None:
        with self._lock:
            self._failures.pop(key, None)

    def __len__(self) -> int:
        return len(self._failures)
