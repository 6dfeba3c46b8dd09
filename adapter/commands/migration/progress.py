"""Progress of a migration on stderr."""

from __future__ import annotations

import sys
import threading
import time


class Progress:
    """A progress bar on stderr: redrawn in place on a terminal, a few plain lines otherwise."""

    def __init__(self, label: str, total: int, stream=None, enabled: bool = True):
        self.label, self.total, self.done = label, max(0, total), 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self._lock = threading.Lock()
        self._last_step = -1
        self._t0 = time.monotonic()
        self._draw()

    def update(self, n: int = 1) -> None:
        with self._lock:
            self.done += n
            self._draw()

    def close(self) -> None:
        with self._lock:
            if self.tty:
                self.stream.write("\n")
                self.stream.flush()
            elif self.enabled and self._last_step < 10:
                self._last_step = 9
                self._draw(force=True)

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        frac = 1.0 if self.total == 0 else min(1.0, self.done / self.total)
        text = f"{self.label} {self.done}/{self.total} ({time.monotonic() - self._t0:.1f} s)"
        if self.tty:
            width = 30
            bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
            self.stream.write(f"\r[{bar}] {text}\x1b[K")
            self.stream.flush()
            return
        step = int(frac * 10)  # a line at 0 %, every 10 % and at the end
        if step > self._last_step or force:
            self._last_step = step
            self.stream.write(text + "\n")
            self.stream.flush()
