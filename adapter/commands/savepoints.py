"""`hudi-metastore savepoint DB.TABLE [--commit TS]`, `delete-savepoint DB.TABLE TS`,
`restore DB.TABLE TS [--yes]`: Hudi's savepoints and restore through the server (docs/hudi.md,
"Savepoints and restore"). A restore of a table keeping a record index sends the keys of the file
groups it changes, read from the savepoint's file slices on storage (record_index_build.restore_keys).
Exit status 0 when done; 1 when a restore was not confirmed; 2 on errors (nothing changed)."""

from __future__ import annotations

import sys

from adapter.commands.record_index_build import restore_keys
from adapter.commands.table_cli import BadArgument, connect, reporting_errors, require_hudi_table, split_table
from hudi_format.errors import HudiFormatError

WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


def run_savepoint(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            require_hudi_table(c, db, tbl)
            commit = args.commit
            if not commit:
                done = c.list_instants(db, tbl, states=["COMPLETED"], actions=list(WRITE_ACTIONS))
                if not done:
                    raise BadArgument(f"{db}.{tbl} has no completed commit to savepoint")
                commit = done[-1].ts
            c.savepoint(db, tbl, commit)
        print(f"savepoint {commit} of {db}.{tbl} created")
        return 0

    return reporting_errors("savepoint", args.metastore, go)


def run_delete_savepoint(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            c.delete_savepoint(db, tbl, args.instant)
        print(f"savepoint {args.instant} of {db}.{tbl} deleted")
        return 0

    return reporting_errors("delete-savepoint", args.metastore, go)


def run_restore(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            require_hudi_table(c, db, tbl)
            after = [i for i in c.list_instants(db, tbl, min_ts=args.instant)
                     if i.ts > args.instant and i.action not in ("savepoint", "clean", "rollback", "restore")]
            if not args.yes:
                if not sys.stdin.isatty():
                    print("restore: not confirmed (no terminal); pass --yes to restore from a script", file=sys.stderr)
                    return 2
                answer = input(f"Restore {db}.{tbl} to {args.instant}, rolling back {len(after)} instant(s)? [y/N] ")
                if answer.strip().lower() not in ("y", "yes"):
                    print("restore: cancelled; nothing changed")
                    return 1
            try:
                keys = restore_keys(c, db, tbl, args.instant)
            except HudiFormatError as exc:
                raise BadArgument(f"the record keys of the savepoint's file slices cannot be read: {exc}") from None
            done = c.restore(db, tbl, args.instant, keys)
        print(f"{db}.{tbl} restored to {args.instant} (restore instant {done.ts}; {len(after)} instant(s) "
              "rolled back)")
        return 0

    return reporting_errors("restore", args.metastore, go)
