"""A lint of the Dockerfile and docker-compose.yml (no Docker engine in CI to build them; hadolint
is not packaged by Debian): the rules the image and the stack promise, checked on their text."""

from __future__ import annotations

import json
import re

from adapter.config import load_file
from tests.harness import REPO_ROOT

DOCKERFILE = (REPO_ROOT / "Dockerfile").read_text()
COMPOSE = (REPO_ROOT / "docker-compose.yml").read_text()


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    out, buf = [], ""
    for line in text.splitlines():
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        buf += line.rstrip("\\").rstrip() + " " if line.rstrip().endswith("\\") else line
        if not line.rstrip().endswith("\\"):
            word, _, rest = buf.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            buf = ""
    return out


def stages() -> list[list[tuple[str, str]]]:
    out: list[list[tuple[str, str]]] = []
    for ins in instructions(DOCKERFILE):
        if ins[0] == "FROM":
            out.append([])
        if out:
            out[-1].append(ins)
    return out


def test_multi_stage_slim_pinned_base():
    args = dict(re.findall(r"^ARG (\w+)=(\S+)$", DOCKERFILE, re.M))
    st = stages()
    assert len(st) >= 2
    for stage in st:
        image = stage[0][1].split()[0]
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
        name, _, tag = image.partition(":")
        assert tag and tag != "latest" and re.search(r"\d+\.\d+\.\d+", tag), image
        assert "slim" in tag, image
    assert any(k == "COPY" and a.startswith("--from=build") for k, a in st[-1])  # only the result


def test_runs_as_non_root_with_entrypoint_and_healthcheck():
    final = stages()[-1]
    kinds = [k for k, _ in final]
    user = [a for k, a in final if k == "USER"]
    assert user and user[-1] not in ("root", "0") and kinds.index("USER") < kinds.index("ENTRYPOINT")
    entry = [a for k, a in final if k == "ENTRYPOINT"][-1]
    assert json.loads(entry) == ["hudi-metastore", "serve"]
    health = [a for k, a in final if k == "HEALTHCHECK"]
    assert health and "/readyz" in health[0] and "CMD" in health[0]


def test_dependencies_are_pinned_and_cover_the_project():
    pins = {}
    for line in (REPO_ROOT / "docker" / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            m = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)==([\w.\-+]+)", line)
            assert m, f"not pinned: {line}"
            pins[m.group(1).lower().replace("_", "-")] = m.group(2)
    project = load_file(str(REPO_ROOT / "pyproject.toml"))["project"]["dependencies"]
    for dep in project:
        name = re.match(r"[A-Za-z0-9_.\-]+", dep).group(0).lower().replace("_", "-")
        assert name in pins, f"{name} (pyproject.toml) is not pinned in docker/requirements.txt"
    for kind, arg in instructions(DOCKERFILE):
        if kind == "RUN" and "pip install" in arg:
            for cmd in re.findall(r"pip install[^&]*", arg):
                assert " -r " in cmd or "--no-deps" in cmd, f"unpinned install: {cmd}"
        if kind == "RUN" and "apt-get install" in arg:
            assert "--no-install-recommends" in arg and "rm -rf /var/lib/apt/lists" in arg


def test_copied_paths_exist():
    for kind, arg in instructions(DOCKERFILE):
        if kind == "COPY" and not arg.startswith("--from"):
            *sources, _dest = arg.split()
            for s in sources:
                assert (REPO_ROOT / s).exists(), s


def _service(name: str) -> str:
    m = re.search(rf"^  {name}:\n((?:    .*\n|\n)+)", COMPOSE, re.M)
    assert m, name
    return m.group(1)


def test_compose_stack():
    pg, ms = _service("postgres"), _service("metastore")
    assert "healthcheck:" in pg and "pg_isready" in pg
    assert re.search(r"depends_on:\s+postgres:\s+condition: service_healthy", ms)
    assert "build: ." in ms and '"--workers", "2"' in ms
    db = re.search(r"POSTGRES_DB: (\S+)", pg).group(1)
    user = re.search(r"POSTGRES_USER: (\S+)", pg).group(1)
    assert db != "test" and user != "postgres" and "POSTGRES_HOST_AUTH_METHOD" not in pg
    assert "POSTGRES_PASSWORD_FILE" in pg and "HUDI_METASTORE_DB_PASSWORD_FILE" in ms
    url = re.search(r"HUDI_METASTORE_DB_URL: (\S+)", ms).group(1)
    assert url.endswith(f"/{db}") and f"//{user}@postgres" in url and ":" not in url.split("//")[1].split("@")[0]
    bind = re.search(r"- type: bind\s+source: (\S+)\s+target: (\S+)", ms)
    assert bind and bind.group(1) == bind.group(2) == "${WAREHOUSE}"
    assert "HUDI_METASTORE_WAREHOUSE: ${WAREHOUSE" in ms
    assert "pip install" not in COMPOSE
