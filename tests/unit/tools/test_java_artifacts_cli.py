"""`python -m tools.java_artifacts`'s command line: an entry given where the command belongs (the
docs once said `java_artifacts trino-server`) is answered with the command that fetches it."""

from __future__ import annotations

import pytest

from tools.java_artifacts import main


def test_an_entry_in_place_of_the_command_names_the_fetch(capsys):
    with pytest.raises(SystemExit) as done:
        main(["trino-server"])
    assert done.value.code == 2
    assert "trino-server is an entry, not a command: python -m tools.java_artifacts fetch trino-server" \
        in capsys.readouterr().err


def test_fetch_all_starts_the_side_lane_after_the_first_maven_run(monkeypatch):
    """Trino's archive (the side lane) is fetched beside the others, but only once the main lane's
    first fetch has ended (the dependency plugin is then in the local repository); a failing entry
    is reported and the others are still fetched."""
    import threading
    import time
    from pathlib import Path

    from tools import java_artifacts as J

    events: list[str] = []
    lock = threading.Lock()
    done: set[str] = set()

    def fake_fetch(name):
        with lock:
            events.append(f"start {name}")
        time.sleep(0.05)
        with lock:
            events.append(f"end {name}")
            done.add(name)
        if name == "hadoop-aws":
            raise J.ArtifactError("hadoop-aws: no network")
        return Path("/cache") / name

    monkeypatch.setattr(J, "fetch", fake_fetch)
    monkeypatch.setattr(J, "cached", lambda name: None if name not in done else Path("/cache") / name)
    paths, errors = J.fetch_all(list(J.ARTIFACTS))
    assert set(paths) == set(J.ARTIFACTS) - {"hadoop-aws"}
    assert [str(e) for e in errors] == ["hadoop-aws: no network"]
    first_main = next(e for e in events if e.startswith("start ") and e != "start trino-server")
    assert events.index("start trino-server") > events.index("end " + first_main.split()[1])
    # beside the main lane (Hudi's bundles, then the classpaths): before Hive 4's jars are done
    assert events.index("start trino-server") < events.index("end hive4-metastore")
