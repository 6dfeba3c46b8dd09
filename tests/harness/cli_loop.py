"""Our CLI's commands, one after another in one interpreter: ``python -m tests.harness.cli_loop``
reads a request a line on stdin, runs ``adapter.cli.main`` on it (as ``python -m adapter.cli ARGS``
does, without starting an interpreter and importing the project for every command: about 1 s each)
and answers a JSON line ``{"rc", "out", "err"}`` on stdout.

A request is a JSON list of arguments, or ``{"args": [...], "env": {...}, "stdin": "..."}``: the
command then sees exactly that environment and that text on its standard input (empty if none), as
a process of its own would. For scripts and tests that check the server with many CLI commands
(tests/spark/hudi_sync_jobs.py; :class:`CliLoop`, used by tests/harness/hudi_tables.py's ``run_cli``)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import subprocess
import sys
import threading
import traceback


def main() -> int:
    answers = os.fdopen(os.dup(1), "w")
    requests = os.fdopen(os.dup(0), "r")
    os.dup2(2, 1)  # output outside a command never lands in the answers
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # nor does a command read the requests
    from adapter.cli import main as cli_main

    started_env = dict(os.environ)
    for line in requests:
        if not line.strip():
            continue
        req = json.loads(line)
        if isinstance(req, list):
            req = {"args": req}
        env = req.get("env")
        os.environ.clear()
        os.environ.update(started_env if env is None else env)
        out, err = io.StringIO(), io.StringIO()
        stdin, sys.stdin = sys.stdin, io.StringIO(req.get("stdin") or "")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = cli_main(req["args"])
            except SystemExit as e:  # argparse's errors
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
            except BaseException:  # noqa: BLE001 - reported as the process would report it
                traceback.print_exc()
                rc = 1
        sys.stdin = stdin
        answers.write(json.dumps({"rc": rc, "out": out.getvalue(), "err": err.getvalue()}) + "\n")
        answers.flush()
    answers.close()
    os._exit(0)  # as adapter.cli.run: pyarrow's thread pools may abort a normal interpreter exit


class CliLoop:
    """A `cli_loop` process kept for a test worker's CLI commands (one command at a time)."""

    def __init__(self, python: str, cwd: str, env: dict[str, str]):
        self._args = ([python, "-m", "tests.harness.cli_loop"], cwd, env)
        self._proc: subprocess.Popen | None = None
        self.lock = threading.Lock()

    def run(self, args: list[str], env: dict[str, str], stdin: str, timeout: float) -> subprocess.CompletedProcess:
        """The command's CompletedProcess; subprocess.TimeoutExpired after `timeout` (the loop is
        then stopped, as subprocess.run kills its child); OSError if the loop does not answer."""
        if self._proc is None or self._proc.poll() is not None:
            argv, cwd, start_env = self._args
            self._proc = subprocess.Popen(argv, cwd=cwd, env=start_env, text=True, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps({"args": args, "env": env, "stdin": stdin}) + "\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], timeout)
            if not ready:
                self.close()
                raise subprocess.TimeoutExpired(["hudi-metastore", *args], timeout)
            line = proc.stdout.readline()
            if not line:
                raise OSError("the CLI loop ended")
            answer = json.loads(line)
        except (OSError, ValueError):
            self.close()
            raise OSError("the CLI loop did not answer") from None
        return subprocess.CompletedProcess(["hudi-metastore", *args], answer["rc"], answer["out"], answer["err"])

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    raise SystemExit(main())
