"""How long `hudi-metastore` table commands take from exec to exit, against a running server: the
command-line's start cost (imports, argument parsing, configuration), which the issue wanted under
0.5 s. Each command runs once to warm the bytecode cache (a private one: PYTHONPYCACHEPREFIX in the
work directory, since a checkout run with PYTHONDONTWRITEBYTECODE compiles every module at every
start), then --repeat times; the median and the slowest imports of one run are printed.

    python -m bench.cli_start [--repeat 5] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.procs import PYTHON, REPO_ROOT, start_ours, stop_pid

COMMANDS = [
    ("--version",),
    ("stats", "--help"),
    ("stats", "default.missing"),
    ("list-partitions", "default.missing"),
    ("create-database", "bench_cli_start", "--if-not-exists"),
]


def _env(workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def run_once(args: tuple[str, ...], metastore: str, env: dict[str, str], importtime: bool = False
             ) -> tuple[float, str]:
    extra = [] if args[0].startswith("--") or "--help" in args else ["--metastore", metastore]
    cmd = [PYTHON, *(["-X", "importtime"] if importtime else []), "-m", "adapter.cli", *args, *extra]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=str(REPO_ROOT), env=env, capture_output=True, text=True, timeout=120)
    return time.perf_counter() - t0, r.stderr


def slowest_imports(stderr: str, n: int = 8) -> list[tuple[int, str]]:
    rows = []
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cumulative, name = line[len("import time:"):].split("|")
            if cumulative.strip().isdigit() and not name.startswith("   "):  # top-level imports only
                rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:n]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", type=Path)
    a = ap.parse_args(argv)
    workdir = a.workdir or Path(tempfile.mkdtemp(prefix="cli-start-"))
    server = start_ours(f"sqlite:///{workdir / 'metastore.db'}", workdir / "server", log_level="WARNING")
    metastore = f"thrift://127.0.0.1:{server.port}"
    env = _env(workdir)
    try:
        print(f"{'command':45} {'median s':>9} {'max s':>7}")
        for args in COMMANDS:
            run_once(args, metastore, env)  # warms the bytecode cache
            times = [run_once(args, metastore, env)[0] for _ in range(a.repeat)]
            print(f"{' '.join(args):45} {statistics.median(times):9.3f} {max(times):7.3f}")
        _, err = run_once(("stats", "default.missing"), metastore, env, importtime=True)
        print("slowest top-level imports of `stats` (cumulative ms):")
        for us, name in slowest_imports(err):
            print(f"  {us / 1000:8.1f}  {name}")
    finally:
        stop_pid(server.pid)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
