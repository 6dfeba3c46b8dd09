"""`hudi-metastore create-database NAME`: create a database through the server (create_database)."""

from __future__ import annotations

from adapter.commands.table_cli import BadArgument, connect, reporting_errors
from client import AlreadyExists


def run(args) -> int:
    def go() -> int:
        name = args.name.strip()
        if not name or "." in name:
            raise BadArgument(f"expected a database name, got {args.name!r}")
        with connect(args) as c:
            try:
                c.create_database(name, args.description, args.location)
            except AlreadyExists:
                if not args.if_not_exists:
                    raise BadArgument(f"database {name.lower()} already exists") from None
                print(f"database {name.lower()} exists already")
                return 0
            made = c.get_database(name)
        print(f"created database {made.name} at {made.location}")
        return 0

    return reporting_errors("create-database", args.metastore, go)
