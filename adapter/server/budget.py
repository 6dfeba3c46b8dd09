"""The process-wide budget for bytes of requests in flight (`serve --max-inflight-bytes`).

A request's bytes are reserved while they are read and released when its answer has been written.
The first `FREE_BYTES` of a request are not counted (the connection cap bounds those), so ordinary
calls never wait. A request that needs more than is left waits, for at most `wait_s`; then, or at
once when it could never fit, or when every request holding budget is itself waiting for more (the
youngest of them gives way), it is refused with `BudgetExhausted`.
"""

from __future__ import annotations

import itertools
import threading
import time

FREE_BYTES = 64 * 1024
GRANULE = 1024 * 1024  # reserved at a time, so a large request takes the lock rarely


class BudgetExhausted(Exception):
    pass


class Ticket:
    """One request's share of the budget."""

    __slots__ = ("order", "held", "waiting", "evicted")

    def __init__(self, order: int):
        self.order, self.held, self.waiting, self.evicted = order, 0, False, False


class InflightBudget:
    def __init__(self, limit: int, wait_s: float):
        self.limit = limit  # 0: unlimited
        self.wait_s = wait_s
        self.used = 0
        self._cond = threading.Condition()
        self._holders: dict[Ticket, None] = {}  # ordered by arrival
        self._order = itertools.count()

    def ticket(self) -> Ticket:
        return Ticket(next(self._order))

    def cover(self, ticket: Ticket, total: int) -> None:
        """Make sure `ticket` holds budget for a request of `total` bytes so far."""
        need = total - FREE_BYTES - ticket.held
        if self.limit <= 0 or need <= 0:
            return
        self._reserve(ticket, max(need, min(GRANULE, self.limit - ticket.held)))

    def release(self, ticket: Ticket) -> None:
        if ticket.held == 0:
            return
        with self._cond:
            self._give_back(ticket)
            self._cond.notify_all()

    def _reserve(self, ticket: Ticket, n: int) -> None:
        with self._cond:
            if ticket.held + n > self.limit:
                self._refuse(ticket, f"a request of more than {ticket.held + n + FREE_BYTES} bytes "
                                     f"exceeds the budget for requests in flight ({self.limit} bytes)")
            deadline = time.monotonic() + self.wait_s
            ticket.waiting = True
            try:
                while self.used + n > self.limit:
                    if ticket.evicted:
                        self._refuse(ticket, "other requests in flight need the budget")
                    self._break_deadlock()
                    left = deadline - time.monotonic()
                    if left <= 0 or ticket.evicted:
                        self._refuse(ticket, f"no room within {self.wait_s:g} s")
                    self._cond.wait(left)
            finally:
                ticket.waiting = False
            self.used += n
            ticket.held += n
            self._holders[ticket] = None

    def _break_deadlock(self) -> None:
        """When every holder waits for more, none can finish: the youngest gives way."""
        holders = list(self._holders)
        if any(t.evicted for t in holders):
            return  # one gives way already; wait for its bytes
        if holders and all(t.waiting for t in holders):
            holders[-1].evicted = True
            self._cond.notify_all()

    def _refuse(self, ticket: Ticket, why: str) -> None:
        self._give_back(ticket)
        self._cond.notify_all()
        raise BudgetExhausted(f"server busy: {why} (--max-inflight-bytes {self.limit}); retry later")

    def _give_back(self, ticket: Ticket) -> None:
        self.used -= ticket.held
        ticket.held = 0
        self._holders.pop(ticket, None)
