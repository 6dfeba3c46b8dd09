"""A process of its own for the storage mirror's largest encodings: the archived timeline's Avro
block or Parquet file of old commits (timeline_archiver.py), seconds of CPU for commits of 10,000
files each. Run in the server's interpreter they held its lock in turns with the worker's calls
(commits waited for it at each step; the background archive only gave way between pieces); in a
process of their own they run on another core and the calls do not wait.

One process per server process (`python -m store.hudi.encoder_process`, its standard input and
output carrying the calls), started on the first encoding whose input reaches APART_BYTES and
kept for the next; smaller ones stay here. When the process cannot start, dies, or takes longer
than TIMEOUT_S, the encoding runs here as before (with the caller's pauses) and the process is
started again for the next one, up to _MAX_FAILURES times. An error of the encoding itself (bad
metadata) is raised here as it was there."""

from __future__ import annotations

import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

APART_BYTES = 4 << 20  # input below this: encoded here (starting the process costs about 0.3 s of CPU)
TIMEOUT_S = 600.0
_MAX_FAILURES = 3  # then every encoding stays here for the life of the server's process


class EncoderProcess:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # one encoding at a time
        self._proc: subprocess.Popen | None = None
        self._pid = 0  # the process that started it (a forked child starts its own)
        self._failures = 0

    def run(self, fn: Callable[..., T], args: tuple, size: int, here: Callable[[], T]) -> T:
        """fn(*args) (a module-level function and picklable arguments) in the encoder process when
        `size` (bytes of input) reaches APART_BYTES, else (or when the process fails) `here()`."""
        if size < APART_BYTES or self._failures >= _MAX_FAILURES:
            return here()
        with self._lock:
            try:
                ok, value = self._call(fn, args)
            except (OSError, EOFError, pickle.PickleError, ValueError) as exc:
                self._failures += 1
                self._stop()
                log.warning("the encoder process failed (%s: %s); encoding in the server's process",
                            type(exc).__name__, exc or "no message")
                ok, value = None, None
        if ok is None:
            return here()
        if ok:
            return value
        raise value

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _call(self, fn: Callable, args: tuple) -> tuple[bool, Any]:
        proc = self._process()
        assert proc.stdin is not None and proc.stdout is not None
        timer = threading.Timer(TIMEOUT_S, proc.kill)  # a hung encoding: its process goes
        timer.daemon = True
        timer.start()
        try:
            _send(proc.stdin, pickle.dumps((fn, args), protocol=5))
            answer = _receive(proc.stdout)
        finally:
            timer.cancel()
        if answer is None:
            try:
                status = proc.wait(1)
            except subprocess.TimeoutExpired:
                status = None
            raise EOFError(f"the encoder process ended (exit status {status})")
        return pickle.loads(answer)

    def _process(self) -> subprocess.Popen:
        if self._proc is not None and (self._pid != os.getpid() or self._proc.poll() is not None):
            self._stop()
        if self._proc is None:
            path = os.pathsep.join(p for p in sys.path if p)
            env = {**os.environ, "PYTHONPATH": path}
            self._proc = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, env=env, close_fds=True)
            self._pid = os.getpid()
        return self._proc

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or self._pid != os.getpid():
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            proc.kill()
            proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            pass


def _send(stream: IO[bytes], data: bytes) -> None:
    stream.write(len(data).to_bytes(8, "big"))
    stream.write(data)
    stream.flush()


def _receive(stream: IO[bytes]) -> bytes | None:
    """One message, None at the end of the stream."""
    head = stream.read(8)
    if len(head) < 8:
        return None
    size = int.from_bytes(head, "big")
    data = stream.read(size)
    if len(data) < size:
        return None
    return data


def main() -> None:
    """The encoder process: calls from standard input, answers (ok, value or error) to standard
    output, until the server closes its end; anything printed goes to standard error."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C stops the server, which closes our input
    calls = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    while (message := _receive(calls)) is not None:
        try:
            fn, args = pickle.loads(message)
            answer: tuple[bool, Any] = (True, fn(*args))
        except Exception as exc:  # noqa: BLE001 - raised in the server's process
            answer = (False, exc)
        try:
            data = pickle.dumps(answer, protocol=5)
        except Exception as exc:  # noqa: BLE001 - an error that does not pickle: its text
            data = pickle.dumps((False, RuntimeError(f"{type(answer[1]).__name__}: {exc}")), protocol=5)
        _send(answers, data)


ENCODER = EncoderProcess()  # one per server process

if __name__ == "__main__":
    main()
