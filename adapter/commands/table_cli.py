"""What the Hudi table commands (import-hudi, validate, repair, stats, list-partitions, list-files)
share: the DB.TABLE argument, the --metastore option, the connection and how errors are reported."""

from __future__ import annotations

import sys
from collections.abc import Callable

from thrift.Thrift import TException

from adapter.client import HudiMetastoreClient
from adapter.commands.parsers import DEFAULT_METASTORE
from thrift_idl.hive_metastore.ttypes import NoSuchObjectException

__all__ = ["DEFAULT_METASTORE", "BadArgument", "split_table", "connect", "reporting_errors"]


class BadArgument(ValueError):
    """Input a command refuses (the message says what); nothing was changed."""


def split_table(text: str) -> tuple[str, str]:
    db, _, tbl = (text or "").partition(".")
    if not db or not tbl or "." in tbl:
        raise BadArgument(f"expected <db>.<table>, got {text!r}")
    return db, tbl


def connect(metastore: str) -> HudiMetastoreClient:
    return HudiMetastoreClient(metastore)



def reporting_errors(name: str, metastore: str, fn: Callable[[], int]) -> int:
    """fn()'s exit status; bad input and metastore errors are printed on stderr (exit status 2)."""
    try:
        return fn()
    except ValueError as exc:  # BadArgument, HudiImportError, or e.g. not a thrift:// URI
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except NoSuchObjectException as exc:
        print(f"{name}: {exc.message}", file=sys.stderr)
        return 2
    except (TException, OSError) as exc:
        print(f"{name}: metastore {metastore}: {getattr(exc, 'message', None) or exc}", file=sys.stderr)
        return 2
