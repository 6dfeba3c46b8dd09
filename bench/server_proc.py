"""Our server as a child process with any `serve` flags, for the fuzz campaign and the load test."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from bench.procs import PYTHON, REPO_ROOT, StartError, free_port, log_tail, port_open, stop_pid


@dataclass
class ServerProc:
    port: int
    pid: int
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def process_ids(self) -> list[int]:
        """The server and its worker processes."""
        try:
            children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        except OSError:
            children = []
        return [self.pid, *map(int, children)]


def start_server(db_url: str, workdir: Path, extra_args: tuple[str, ...] = (), timeout: float = 90.0) -> ServerProc:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "warehouse").mkdir(exist_ok=True)
    log_path = workdir / "server.log"
    port = free_port()
    cmd = [PYTHON, "-m", "adapter.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--db-url", db_url, "--warehouse", str(workdir / "warehouse"), *extra_args]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(cmd, cwd=str(REPO_ROOT), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + timeout
    while not port_open(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_pid(proc.pid)
            raise StartError(f"our server did not start\n{' '.join(cmd)}\n{log_tail(log_path)}")
        time.sleep(0.2)
    return ServerProc(port, proc.pid, log_path)


def stop_server(server: ServerProc) -> None:
    stop_pid(server.pid)
