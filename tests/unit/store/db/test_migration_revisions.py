"""The store's schema revision and the migrations' head as store/db/migrations reads them without
alembic (the server's start and readiness check) agree with alembic's own answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError

from store.db.migrations import VERSIONS, alembic_config, chain_head, current_revision, head_revision


def alembic_current(engine: sa.Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def test_head_is_alembics():
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert chain_head(VERSIONS) == head
    assert head_revision() == head


def test_current_revision_on_each_backend(backend_url):
    engine = sa.create_engine(backend_url)  # migrated (PostgreSQL, MariaDB) or a new file (SQLite)
    try:
        assert current_revision(engine) == alembic_current(engine) in (head_revision(), None)
    finally:
        engine.dispose()


def test_current_revision_without_a_version_table_or_row_and_with_two_rows(tmp_path):
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    try:
        assert current_revision(engine) is None and alembic_current(engine) is None  # no table
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
        assert current_revision(engine) is None and alembic_current(engine) is None  # no row
        with engine.begin() as conn:
            conn.execute(sa.text("INSERT INTO alembic_version VALUES ('0003')"))
        assert current_revision(engine) == alembic_current(engine) == "0003"
        with engine.begin() as conn:
            conn.execute(sa.text("INSERT INTO alembic_version VALUES ('0004')"))
        with pytest.raises(CommandError):  # several heads: alembic's error
            alembic_current(engine)
        with pytest.raises(CommandError):
            current_revision(engine)
    finally:
        engine.dispose()


def _version(path, name: str, revision: str, down: str | None, extra: str = "") -> None:
    down_text = "None" if down is None else repr(down)
    (path / name).write_text(f'"""{name}"""\nfrom alembic import op\n\nrevision = {revision!r}\n'
                             f"down_revision = {down_text}\nbranch_labels = None\ndepends_on = None\n{extra}\n"
                             "\n\ndef upgrade() -> None:\n    pass\n\n\ndef downgrade() -> None:\n    pass\n")


def _alembic_head(path) -> str | None:
    cfg = alembic_config()
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("version_locations", str(path))
    return ScriptDirectory.from_config(cfg).get_current_head()


def test_chain_head_leaves_all_but_a_plain_chain_to_alembic(tmp_path):
    chain = tmp_path / "chain"
    chain.mkdir()
    _version(chain, "0001_a.py", "0001", None)
    _version(chain, "0002_b.py", "0002", "0001")
    _version(chain, "0003_c.py", "0003", "0002")
    (chain / "__init__.py").write_text("")
    assert chain_head(str(chain)) == _alembic_head(chain) == "0003"
    text = (chain / "0003_c.py").read_text()  # alembic's newer template annotates the header
    (chain / "0003_c.py").write_text(text.replace("down_revision = ", "down_revision: str | None = "))
    assert chain_head(str(chain)) == _alembic_head(chain) == "0003"

    two_heads = tmp_path / "two_heads"
    two_heads.mkdir()
    _version(two_heads, "0001_a.py", "0001", None)
    _version(two_heads, "0002_b.py", "0002", "0001")
    _version(two_heads, "0003_c.py", "0003", "0001")
    assert chain_head(str(two_heads)) is None
    with pytest.raises(CommandError):
        _alembic_head(two_heads)

    for case, extra in (("labels", "branch_labels = ('x',)"), ("depends", "depends_on = '0001'"),
                        ("annotated", "depends_on: str | None = '0001'"), ("computed", "")):
        d = tmp_path / case
        d.mkdir()
        _version(d, "0001_a.py", "0001", None)
        _version(d, "0002_b.py", "0002", "0001", extra)
        if case == "computed":
            text = (d / "0002_b.py").read_text().replace("revision = '0002'", "revision = '00' + '02'")
            (d / "0002_b.py").write_text(text)
        assert chain_head(str(d)) is None, case  # a second header line, or one that is not a literal


def test_a_server_start_imports_neither_alembic_nor_the_orm():
    """What `serve` imports before it listens, and the head it checks: no alembic, no sqlalchemy.orm
    (together about a fifth of a start's CPU; docs/testing.md, "What keeps the run short")."""
    code = ("import sys\n"
            "import adapter.app, adapter.readiness, adapter.serve, adapter.server, store.services\n"
            "from store.db.migrations import head_revision\n"
            "assert head_revision()\n"
            "print(sorted(m for m in ('alembic', 'sqlalchemy.orm') if m in sys.modules))\n")
    root = Path(__file__).resolve().parents[4]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
