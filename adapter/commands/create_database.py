"""`hudi-metastore create-database NAME`: create a database through the server (create_database)."""

from __future__ import annotations

from adapter.commands.table_cli import BadArgument, connect, reporting_errors
from thrift_idl.hive_metastore.ttypes import AlreadyExistsException, Database


def run(args) -> int:
    def go() -> int:
        name = args.name.strip()
        if not name or "." in name:
            raise BadArgument(f"expected a database name, got {args.name!r}")
        db = Database(name=name, description=args.description, locationUri=args.location, parameters={})
        with connect(args.metastore) as c:
            try:
                c.create_database(db)
            except AlreadyExistsException:
                if not args.if_not_exists:
                    raise BadArgument(f"database {name.lower()} already exists") from None
                print(f"database {name.lower()} exists already")
                return 0
            made = c.get_database(name)
        print(f"created database {made.name} at {made.locationUri}")
        return 0

    return reporting_errors("create-database", args.metastore, go)
