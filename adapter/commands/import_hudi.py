"""`hudi-metastore import-hudi`: bootstrap an existing Hudi table from storage through the server.

Work in progress: the signature below is stable; the body follows.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ImportReport:
    """What an import did (or, with dry_run, would do)."""

    db: str
    table: str
    base_path: str
    table_version: int = 0
    table_type: str = ""
    registered: bool = False            # the table was new to the server
    instants_imported: list[str] = field(default_factory=list)   # "<ts>.<action>.<state>"
    instants_skipped: int = 0           # already on the server in the same state
    bootstrap_files: int = 0            # files of archived instants taken from the listing
    partitions: int = 0
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return self.registered or bool(self.instants_imported) or self.bootstrap_files > 0


def import_hudi_table(metastore: str, base_path: str, db: str, table: str,
                      dry_run: bool = False) -> ImportReport:
    """Import the Hudi table at base_path as db.table into the server at metastore (thrift://host:port).

    Idempotent and incremental: a second run imports only instants new on storage. Raises
    ImportError_ (ValueError subclass) with a clear message for bad input; nothing is changed then.
    """
    raise NotImplementedError("import_hudi_table: in progress")
