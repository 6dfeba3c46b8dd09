"""What the Hudi table commands (import-hudi, validate, repair, stats, list-partitions, list-files)
share: the DB.TABLE argument, the --metastore option, the connection and how errors are reported."""

from __future__ import annotations

import sys
from collections.abc import Callable

from adapter.commands.parsers import DEFAULT_METASTORE
from client import HudiCatalog, MetastoreError, NotFound

__all__ = ["DEFAULT_METASTORE", "BadArgument", "split_table", "connect", "reporting_errors", "require_hudi_table"]


class BadArgument(ValueError):
    """Input a command refuses (the message says what); nothing was changed."""


def split_table(text: str) -> tuple[str, str]:
    db, _, tbl = (text or "").partition(".")
    if not db or not tbl or "." in tbl:
        raise BadArgument(f"expected <db>.<table>, got {text!r}")
    return db, tbl


def connect(metastore: str) -> HudiCatalog:
    return HudiCatalog(metastore)



def require_hudi_table(client: HudiCatalog, db: str, tbl: str) -> None:
    """BadArgument when db.table is a table of the metastore but not a Hudi one (the server's own
    answer, NotFound, says so only for a table that does not exist at all)."""
    try:
        client.get_hudi_table(db, tbl)
    except NotFound as missing:
        try:
            t = client.get_table(db, tbl)
        except NotFound:
            raise missing from None
        raise BadArgument(f"{t.db}.{t.name} is not a Hudi table ({t.table_type or 'a table'} without a "
                          "Hudi timeline on the metastore; `import-hudi` adopts one from storage)") from None


def reporting_errors(name: str, metastore: str, fn: Callable[[], int]) -> int:
    """fn()'s exit status; bad input and metastore errors are printed on stderr (exit status 2)."""
    try:
        return fn()
    except ValueError as exc:  # BadArgument, HudiImportError, or e.g. not a thrift:// URI
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except NotFound as exc:
        print(f"{name}: {exc.message}", file=sys.stderr)
        return 2
    except (MetastoreError, OSError) as exc:
        print(f"{name}: metastore {metastore}: {getattr(exc, 'message', None) or exc}", file=sys.stderr)
        return 2
