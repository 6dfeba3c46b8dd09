"""Alembic migrations of the store schema; `hudi-metastore db upgrade` applies them.

Alembic is imported only to migrate, or when the revisions are not a plain chain: the server's start
and its readiness check read the version table and the version files' header lines themselves
(importing alembic cost about 0.07 s of a server start's 0.45 s of CPU). The unit tests compare both answers
with alembic's (tests/unit/store/db/test_migration_revisions.py)."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy import Engine

HERE = os.path.dirname(os.path.abspath(__file__))
VERSIONS = os.path.join(HERE, "versions")
VERSION_TABLE = "alembic_version"  # alembic's default name, which env.py keeps
# the header lines of a version file (`revision = '0017'`, `down_revision: str | None = None`, ...),
# any form, and those of literal values (the only ones read here)
_NAMES = r"(revision|down_revision|branch_labels|depends_on)[ \t]*(?::[^=\n]*)?="
_ANY_HEADER = re.compile(rf"^{_NAMES}", re.MULTILINE)
_HEADER = re.compile(rf"""^{_NAMES}[ \t]*(None|'[^'\\\n]*'|"[^"\\\n]*")[ \t]*$""", re.MULTILINE)


def alembic_config(engine: Engine | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", HERE)
    if engine is not None:
        cfg.attributes["engine"] = engine
    return cfg


def current_revision(engine: Engine) -> str | None:
    """The store's revision (None: no version table, or no row in it), as alembic's
    `MigrationContext.get_current_revision` reads it; several rows: alembic's own answer (an error)."""
    from sqlalchemy import column, inspect, select, table

    with engine.connect() as conn:
        if not inspect(conn).has_table(VERSION_TABLE):
            return None
        heads: list[str] = list(conn.execute(select(column("version_num")).select_from(table(VERSION_TABLE)))
                                .scalars())
    if len(heads) <= 1:
        return heads[0] if heads else None
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def chain_head(versions: str = VERSIONS) -> str | None:
    """The head of the version files in `versions` when they form one plain chain (each header a
    literal, no branch labels or dependencies, one head); None when alembic has to decide."""
    revisions: dict[str, str | None] = {}
    for name in sorted(os.listdir(versions)):
        if not name.endswith(".py") or name.startswith(("__init__", ".#")):
            continue
        with open(os.path.join(versions, name), encoding="utf-8") as f:
            text = f.read()
        found = _HEADER.findall(text)
        header = dict(found)
        if len(found) != 4 or len(header) != 4 or len(_ANY_HEADER.findall(text)) != 4 \
                or header["branch_labels"] != "None" \
                or header["depends_on"] != "None" or header["revision"] == "None":
            return None
        revision = header["revision"][1:-1]
        if revision in revisions:
            return None
        down = header["down_revision"]
        revisions[revision] = None if down == "None" else down[1:-1]
    downs = set(revisions.values()) - {None}
    heads = [r for r in revisions if r not in downs]
    if len(heads) != 1 or not downs <= revisions.keys() or sum(d is None for d in revisions.values()) != 1:
        return None
    return heads[0]


def head_revision() -> str | None:
    head = chain_head()
    if head is not None:
        return head
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def upgrade(engine: Engine, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(alembic_config(engine), revision)


def known_revision(revision: str) -> bool:
    """Whether this version's migrations know `revision` (else a newer version wrote the schema)."""
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    try:
        return ScriptDirectory.from_config(alembic_config()).get_revision(revision) is not None
    except CommandError:
        return False
