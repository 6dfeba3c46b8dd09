"""`tbl.meta_version`: a value that changes, in the writing transaction, whenever anything a Table
answer is built from changes: the table's row (but for `parts_version` alone, which follows its
partitions), its parameters (`tbl_params`), its columns (`schema`), or its database's name or
catalog. So a server may keep a table's encoded answer in memory, found by the table's id and this
value in a statement that reads nothing else (store/hms/catalog/table_rows.py). Triggers set it,
so no write path can forget to; a new row gets a random value too (a table made again under a
reused id cannot meet an old answer).

The table's descriptor row (`sds`) has no trigger: the only write of a table's descriptor is
alter_table's, which updates the table's row in the same transaction (a descriptor trigger would
also fire for every partition's). With HMS_WIRE_CHECK=1 (the test suite) every answer found this
way is compared with the one built from the whole row, so a path that missed would fail there.

Made by `install` (after the tables are created, and by migration 0028); a server looks answers up
this way only where `installed` finds every trigger.
"""

from __future__ import annotations

from sqlalchemy import Connection

from store.db import triggers

CHILDREN = ("tbl_params", "schema")  # rows keyed by tbl_id that a Table answer is built from
TRIGGERS = ("hms_tbl_meta_ins", "hms_tbl_meta_upd", "hms_db_meta_upd",
            *(f"hms_{c}_meta_{op}" for c in CHILDREN for op in ("ins", "upd", "del")))

_PG_NEW = "(random() * 9.0e18)::bigint"
_PG = [
    f"""CREATE OR REPLACE FUNCTION hms_tbl_meta_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.parts_version IS NOT DISTINCT FROM OLD.parts_version THEN
    NEW.meta_version := {_PG_NEW};
  END IF;
  RETURN NEW;
END $$""",
    f"""CREATE OR REPLACE FUNCTION hms_tbl_children_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    UPDATE tbl SET meta_version = {_PG_NEW}
     WHERE tbl_id IN (SELECT tbl_id FROM hms_new UNION SELECT tbl_id FROM hms_old);
  ELSIF TG_OP = 'INSERT' THEN
    UPDATE tbl SET meta_version = {_PG_NEW} WHERE tbl_id IN (SELECT tbl_id FROM hms_new);
  ELSE
    UPDATE tbl SET meta_version = {_PG_NEW} WHERE tbl_id IN (SELECT tbl_id FROM hms_old);
  END IF;
  RETURN NULL;
END $$""",
    f"""CREATE OR REPLACE FUNCTION hms_db_meta_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE tbl SET meta_version = {_PG_NEW} WHERE db_id = NEW.db_id;
  RETURN NULL;
END $$""",
    *(f"DROP TRIGGER IF EXISTS {name} ON {on}" for name, on in (
        ("hms_tbl_meta_ins", "tbl"), ("hms_tbl_meta_upd", "tbl"), ("hms_db_meta_upd", "db"),
        *((f"hms_{c}_meta_{op}", f'"{c}"') for c in CHILDREN for op in ("ins", "upd", "del")))),
    "CREATE TRIGGER hms_tbl_meta_ins BEFORE INSERT ON tbl FOR EACH ROW EXECUTE PROCEDURE hms_tbl_meta_new()",
    "CREATE TRIGGER hms_tbl_meta_upd BEFORE UPDATE ON tbl FOR EACH ROW EXECUTE PROCEDURE hms_tbl_meta_new()",
    "CREATE TRIGGER hms_db_meta_upd AFTER UPDATE ON db FOR EACH ROW WHEN (NEW.name IS DISTINCT FROM OLD.name "
    "OR NEW.cat_name IS DISTINCT FROM OLD.cat_name) EXECUTE PROCEDURE hms_db_meta_changed()",
    # statement-level, with transition tables: one UPDATE of tbl per statement, not per row
    *(stmt for c in CHILDREN for stmt in (
        f'CREATE TRIGGER hms_{c}_meta_ins AFTER INSERT ON "{c}" REFERENCING NEW TABLE AS hms_new '
        "FOR EACH STATEMENT EXECUTE PROCEDURE hms_tbl_children_changed()",
        f'CREATE TRIGGER hms_{c}_meta_upd AFTER UPDATE ON "{c}" REFERENCING OLD TABLE AS hms_old '
        "NEW TABLE AS hms_new FOR EACH STATEMENT EXECUTE PROCEDURE hms_tbl_children_changed()",
        f'CREATE TRIGGER hms_{c}_meta_del AFTER DELETE ON "{c}" REFERENCING OLD TABLE AS hms_old '
        "FOR EACH STATEMENT EXECUTE PROCEDURE hms_tbl_children_changed()")),
]

# SQLite's triggers cannot set NEW: the row is updated again after (recursive triggers are off, and
# the WHEN clause stops that update from starting another round if they were on)
_SQLITE = [
    "CREATE TRIGGER IF NOT EXISTS hms_tbl_meta_ins AFTER INSERT ON tbl BEGIN "
    "UPDATE tbl SET meta_version = random() WHERE tbl_id = NEW.tbl_id; END",
    "CREATE TRIGGER IF NOT EXISTS hms_tbl_meta_upd AFTER UPDATE ON tbl "
    "WHEN NEW.parts_version IS OLD.parts_version AND NEW.meta_version IS OLD.meta_version BEGIN "
    "UPDATE tbl SET meta_version = random() WHERE tbl_id = NEW.tbl_id; END",
    "CREATE TRIGGER IF NOT EXISTS hms_db_meta_upd AFTER UPDATE OF name, cat_name ON db BEGIN "
    "UPDATE tbl SET meta_version = random() WHERE db_id = NEW.db_id; END",
    *(stmt for c in CHILDREN for stmt in (
        f'CREATE TRIGGER IF NOT EXISTS hms_{c}_meta_ins AFTER INSERT ON "{c}" BEGIN '
        "UPDATE tbl SET meta_version = random() WHERE tbl_id = NEW.tbl_id; END",
        f'CREATE TRIGGER IF NOT EXISTS hms_{c}_meta_upd AFTER UPDATE ON "{c}" BEGIN '
        "UPDATE tbl SET meta_version = random() WHERE tbl_id IN (OLD.tbl_id, NEW.tbl_id); END",
        f'CREATE TRIGGER IF NOT EXISTS hms_{c}_meta_del AFTER DELETE ON "{c}" BEGIN '
        "UPDATE tbl SET meta_version = random() WHERE tbl_id = OLD.tbl_id; END")),
]

# row-level (MariaDB has no statement-level triggers); foreign-key cascades fire none there, and
# the cascades into `tbl_params` and `schema` are a dropped table's
_MYSQL_NEW = "CAST(FLOOR(RAND() * 9.0e18) AS SIGNED)"
_MYSQL = [
    *(f"DROP TRIGGER IF EXISTS {name}" for name in TRIGGERS),
    f"CREATE TRIGGER hms_tbl_meta_ins BEFORE INSERT ON tbl FOR EACH ROW SET NEW.meta_version = {_MYSQL_NEW}",
    "CREATE TRIGGER hms_tbl_meta_upd BEFORE UPDATE ON tbl FOR EACH ROW SET NEW.meta_version = "
    f"IF(NEW.parts_version <=> OLD.parts_version, {_MYSQL_NEW}, NEW.meta_version)",
    f"CREATE TRIGGER hms_db_meta_upd AFTER UPDATE ON db FOR EACH ROW UPDATE tbl SET meta_version = {_MYSQL_NEW} "
    "WHERE db_id = NEW.db_id AND NOT (NEW.name <=> OLD.name AND NEW.cat_name <=> OLD.cat_name)",
    *(stmt for c in CHILDREN for stmt in (
        f"CREATE TRIGGER hms_{c}_meta_ins AFTER INSERT ON `{c}` FOR EACH ROW "
        f"UPDATE tbl SET meta_version = {_MYSQL_NEW} WHERE tbl_id = NEW.tbl_id",
        f"CREATE TRIGGER hms_{c}_meta_upd AFTER UPDATE ON `{c}` FOR EACH ROW "
        f"UPDATE tbl SET meta_version = {_MYSQL_NEW} WHERE tbl_id IN (OLD.tbl_id, NEW.tbl_id)",
        f"CREATE TRIGGER hms_{c}_meta_del AFTER DELETE ON `{c}` FOR EACH ROW "
        f"UPDATE tbl SET meta_version = {_MYSQL_NEW} WHERE tbl_id = OLD.tbl_id")),
]


def install(conn: Connection) -> bool:
    """Make the triggers (again); False, with a warning, where the database refuses (triggers.py)."""
    return triggers.install(conn, {"postgresql": _PG, "sqlite": _SQLITE, "mysql": _MYSQL},
                            "table versions: triggers not made; table answers are not kept by version")


def installed(conn: Connection) -> bool:
    """Are all the triggers there (a migration that copied a table on SQLite would have dropped
    its triggers)?"""
    return triggers.present(conn, TRIGGERS, ("tbl", "db", *CHILDREN))
