"""`tbl.parts_version`: a value that changes, in the writing transaction, whenever any row of the
table's `partitions` is inserted, updated or deleted, so that a server may keep a table's partition
list in memory and know without reading it whether it is still current (store/hms/partitions/
partition_list_cache.py). Triggers on `partitions` set it, so no write path can forget to.

The new value is random, not a counter: a table dropped and made again under a reused `tbl_id`
(SQLite reuses the highest id) cannot meet a list cached for the old one. The triggers are made by
`install` (after `partitions` is created, and by migration 0026); a server uses cached lists only
where `installed` finds all three.
"""

from __future__ import annotations

from sqlalchemy import Connection

from store.db import triggers

TRIGGERS = ("hms_partitions_ins", "hms_partitions_upd", "hms_partitions_del")

_PG = [
    """CREATE OR REPLACE FUNCTION hms_parts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    UPDATE tbl SET parts_version = (random() * 9.0e18)::bigint
     WHERE tbl_id IN (SELECT tbl_id FROM hms_new UNION SELECT tbl_id FROM hms_old);
  ELSIF TG_OP = 'INSERT' THEN
    UPDATE tbl SET parts_version = (random() * 9.0e18)::bigint WHERE tbl_id IN (SELECT tbl_id FROM hms_new);
  ELSE
    UPDATE tbl SET parts_version = (random() * 9.0e18)::bigint WHERE tbl_id IN (SELECT tbl_id FROM hms_old);
  END IF;
  RETURN NULL;
END $$""",
    "DROP TRIGGER IF EXISTS hms_partitions_ins ON partitions",
    "DROP TRIGGER IF EXISTS hms_partitions_upd ON partitions",
    "DROP TRIGGER IF EXISTS hms_partitions_del ON partitions",
    # statement-level, with transition tables: one UPDATE of tbl per statement, not per row
    "CREATE TRIGGER hms_partitions_ins AFTER INSERT ON partitions REFERENCING NEW TABLE AS hms_new "
    "FOR EACH STATEMENT EXECUTE PROCEDURE hms_parts_changed()",
    "CREATE TRIGGER hms_partitions_upd AFTER UPDATE ON partitions REFERENCING OLD TABLE AS hms_old "
    "NEW TABLE AS hms_new FOR EACH STATEMENT EXECUTE PROCEDURE hms_parts_changed()",
    "CREATE TRIGGER hms_partitions_del AFTER DELETE ON partitions REFERENCING OLD TABLE AS hms_old "
    "FOR EACH STATEMENT EXECUTE PROCEDURE hms_parts_changed()",
]

_SQLITE = [
    "CREATE TRIGGER IF NOT EXISTS hms_partitions_ins AFTER INSERT ON partitions BEGIN "
    "UPDATE tbl SET parts_version = random() WHERE tbl_id = NEW.tbl_id; END",
    "CREATE TRIGGER IF NOT EXISTS hms_partitions_upd AFTER UPDATE ON partitions BEGIN "
    "UPDATE tbl SET parts_version = random() WHERE tbl_id IN (OLD.tbl_id, NEW.tbl_id); END",
    "CREATE TRIGGER IF NOT EXISTS hms_partitions_del AFTER DELETE ON partitions BEGIN "
    "UPDATE tbl SET parts_version = random() WHERE tbl_id = OLD.tbl_id; END",
]

# row-level (MariaDB has no statement-level triggers); foreign-key cascades fire none there, and
# the only cascade into `partitions` is a dropped table's
_MYSQL_NEW = "CAST(FLOOR(RAND() * 9.0e18) AS SIGNED)"
_MYSQL = [
    "DROP TRIGGER IF EXISTS hms_partitions_ins",
    "DROP TRIGGER IF EXISTS hms_partitions_upd",
    "DROP TRIGGER IF EXISTS hms_partitions_del",
    f"CREATE TRIGGER hms_partitions_ins AFTER INSERT ON partitions FOR EACH ROW "
    f"UPDATE tbl SET parts_version = {_MYSQL_NEW} WHERE tbl_id = NEW.tbl_id",
    f"CREATE TRIGGER hms_partitions_upd AFTER UPDATE ON partitions FOR EACH ROW "
    f"UPDATE tbl SET parts_version = {_MYSQL_NEW} WHERE tbl_id IN (OLD.tbl_id, NEW.tbl_id)",
    f"CREATE TRIGGER hms_partitions_del AFTER DELETE ON partitions FOR EACH ROW "
    f"UPDATE tbl SET parts_version = {_MYSQL_NEW} WHERE tbl_id = OLD.tbl_id",
]


def install(conn: Connection) -> bool:
    """Make the triggers (again); False, with a warning, where the database refuses (triggers.py)."""
    return triggers.install(conn, {"postgresql": _PG, "sqlite": _SQLITE, "mysql": _MYSQL},
                            "partition list versions: triggers not made; partition lists are not cached")


def installed(conn: Connection) -> bool:
    """Are all the triggers there (a migration that copied a table on SQLite would have dropped
    its triggers)?"""
    return triggers.present(conn, TRIGGERS, ("partitions",))
