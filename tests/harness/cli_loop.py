"""Our CLI's commands, one after another in one interpreter: ``python -m tests.harness.cli_loop``
reads a JSON list of arguments a line on stdin, runs ``adapter.cli.main`` on them (as
``python -m adapter.cli ARGS`` does, without starting an interpreter and importing the project for
every command) and answers a JSON line ``{"rc", "out", "err"}`` on stdout. For scripts that check the
server with many CLI commands (tests/spark/hudi_sync_jobs.py: three after each of 37 steps)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback


def main() -> int:
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # output outside a command never lands in the answers
    from adapter.cli import main as cli_main

    for line in sys.stdin:
        if not line.strip():
            continue
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = cli_main(json.loads(line))
            except SystemExit as e:  # argparse's errors
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
            except BaseException:  # noqa: BLE001 - reported as the process would report it
                traceback.print_exc()
                rc = 1
        answers.write(json.dumps({"rc": rc, "out": out.getvalue(), "err": err.getvalue()}) + "\n")
        answers.flush()
    answers.close()
    os._exit(0)  # as adapter.cli.run: pyarrow's thread pools may abort a normal interpreter exit


if __name__ == "__main__":
    raise SystemExit(main())
