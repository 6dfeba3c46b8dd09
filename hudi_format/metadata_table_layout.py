"""Where the metadata table's files go, per data table version (hudi_format/metadata_table.py has
the records and files themselves, which every version shares).

* version 6 (what Hudi 1.2 writes for a version-6 table): the metadata table's own timeline in
  layout 1 (`.hoodie/metadata/.hoodie/<ts>.deltacommit`, JSON), its bootstrap at
  `00000000000000010`, log files named after their file slice's base instant with growing log
  versions (`.files-0000-0_<base instant>.log.<n>_0-0-0`);
* versions 8 and 9 (Hudi 1.x): a metadata table of the same version, its timeline in layout 2
  (`.hoodie/metadata/.hoodie/timeline/<ts>_<completion ts>.deltacommit`, Avro), its bootstrap at
  `00000000000000000`, one log file per deltacommit named after that deltacommit
  (`.files-0000-0_<ts>.log.1_0-0-0`): a log file belongs to the slice of the newest base file
  at or before its deltacommit's completion time (Hudi 1.x's HoodieFileGroup; a log file of an
  instant that completed after a newer base file was written belongs to that base's slice).
  `hoodie.properties` as Hudi 1.x writes it for the metadata table (record merge mode CUSTOM, key
  generator type HOODIE_TABLE_METADATA).

The `column_stats` partition (hudi_format/metadata_column_stats.py) follows the same rules: its
initial instant `00000000000000011` (version 6) or `00000000000000001` (8, 9), its log files named as
the `files` partition's, its write stats in the same deltacommit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hudi_format import metadata_column_stats as C
from hudi_format import metadata_table as M
from hudi_format.avro_metadata import for_storage
from hudi_format.config_keys import (
    ARCHIVELOG_FOLDER,
    KEYGENERATOR_CLASS,
    KEYGENERATOR_TYPE,
    RECORD_MERGE_MODE,
    RECORD_MERGE_STRATEGY_ID,
    TABLE_INITIAL_VERSION,
    TABLE_VERSION,
    TIMELINE_HISTORY_PATH,
    TIMELINE_LAYOUT_VERSION,
    TIMELINE_PATH,
    default_of,
)
from hudi_format.instant import COMPLETED
from hudi_format.storage import TableStorage
from hudi_format.timeline_layout import TimelineLayout, timeline_layout

DELTACOMMIT = "deltacommit"
V2_INIT_INSTANT = "00000000000000000"  # Hudi 1.x's files partition bootstrap instant
_NO_MERGE_STRATEGY = "00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class MetadataTableLayout:
    table_version: int
    timeline: TimelineLayout  # the metadata table's, relative to its own base path
    init_instant: str

    @property
    def timeline_dir(self) -> str:
        """The metadata table's timeline folder, relative to the data table's base path."""
        return f"{M.METADATA_FOLDER}/{self.timeline.timeline_dir}"

    @property
    def column_stats_init(self) -> str:
        """The instant that initializes the `column_stats` partition."""
        return C.init_instant(self.table_version)

    @property
    def hoodie_dirs(self) -> tuple[str, ...]:
        """The folders under the metadata table's `.hoodie`."""
        return self.timeline.dirs

    def deltacommit_file(self, ts: str, state: int, completion_ts: str | None = None) -> str:
        """A deltacommit's file in a state, relative to the data table's base path."""
        return f"{self.timeline_dir}/{self.timeline.file_name(ts, DELTACOMMIT, state, completion_ts)}"

    def completed_file(self, names: Iterable[str], ts: str) -> str | None:
        """The name of instant `ts`'s completed deltacommit among the names in the metadata table's
        timeline folder (versions 8+ name it with its completion time)."""
        if self.table_version < 8:
            name = self.timeline.file_name(ts, DELTACOMMIT, COMPLETED)
            return name if name in set(names) else None
        return next((n for n in names if n.startswith(f"{ts}_") and n.endswith(f".{DELTACOMMIT}")), None)

    def completed(self, names: Iterable[str]) -> set[str]:
        """The instants of the completed deltacommits and commits (compactions) among the names
        in the metadata table's timeline folder."""
        out = set()
        for n in names:
            ts, _, action = n.partition(".")
            if action in (DELTACOMMIT, "commit"):
                out.add(ts.partition("_")[0])
        return out

    def log_file_name(self, base_instant: str, version: int, ts: str, group: int | None = None) -> str:
        """The log file instant `ts` writes into the slice of `base_instant` (`version`: the next
        log version of that slice, for version 6), of the `files` partition or (`group`) of a
        `column_stats` file group."""
        if self.table_version >= 8:
            base_instant, version = ts, 1
        return M.log_file_name(base_instant, version) if group is None else \
            C.log_file_name(group, base_instant, version)

    def in_slice(self, log_instant: str, base_instant: str, completion: str | None = None) -> bool:
        """Whether a log file (its name's instant) belongs to the newest slice, that of `base_instant`:
        version 6 by name; versions 8+ when its deltacommit completed at or after the base instant
        (`completion`; not completed: by its instant, later than the base's)."""
        if self.table_version < 8:
            return log_instant == base_instant
        if completion is not None:
            return completion >= base_instant and log_instant != base_instant
        return log_instant > base_instant

    def properties(self, table_name: str) -> dict[str, str]:
        """The metadata table's `hoodie.properties` (without the checksum)."""
        props = M.metadata_properties(table_name)
        if self.table_version < 8:
            return props
        props.pop(KEYGENERATOR_CLASS, None)
        history = default_of(TIMELINE_HISTORY_PATH)
        props.update({
            TABLE_VERSION: str(self.table_version), TABLE_INITIAL_VERSION: str(self.table_version),
            TIMELINE_LAYOUT_VERSION: "2", TIMELINE_PATH: default_of(TIMELINE_PATH),
            TIMELINE_HISTORY_PATH: history, ARCHIVELOG_FOLDER: history,
            KEYGENERATOR_TYPE: "HOODIE_TABLE_METADATA", RECORD_MERGE_MODE: "CUSTOM",
            RECORD_MERGE_STRATEGY_ID: _NO_MERGE_STRATEGY})
        return props

    def deltacommit_metadata(self, path: str, size: int, records: int, prev_commit: str, operation: str,
                             log_version: int | None = None, column_stats: list[dict] | None = None) -> bytes:
        """The completed deltacommit's metadata (JSON for version 6, Avro from version 8), with the
        write stats of the `column_stats` files it wrote."""
        doc = M.deltacommit_metadata(path, size, records, prev_commit, operation, log_version)
        return self.for_storage(C.with_stats(doc, column_stats or []))

    def for_storage(self, doc: bytes) -> bytes:
        """A completed deltacommit's JSON metadata as this version stores it."""
        return doc if self.table_version < 8 else for_storage(DELTACOMMIT, COMPLETED, doc)


def metadata_table_layout(table_version: int) -> MetadataTableLayout:
    """The metadata table layout of a data table of `table_version`."""
    if table_version < 8:
        return MetadataTableLayout(6, timeline_layout(6), M.INIT_INSTANT)
    return MetadataTableLayout(table_version, timeline_layout(table_version), V2_INIT_INSTANT)


class CompletedDeltacommits:
    """The metadata table's completed deltacommits (and compactions) on storage, by instant:
    version 6 asks for one file's existence (its name is the instant's), versions 8+ list the
    timeline once (names carry completion times, `completion`)."""

    def __init__(self, st: TableStorage, lay: MetadataTableLayout):
        self.st = st
        self.lay = lay
        self._completion: dict[str, str] | None = None

    def _listed(self) -> dict[str, str]:
        if self._completion is None:
            out: dict[str, str] = {}
            for n in self.st.listing(self.lay.timeline_dir):
                ts, _, action = n.partition(".")
                if action in (DELTACOMMIT, "commit"):
                    instant, _, completion = ts.partition("_")
                    out[instant] = completion or instant
            self._completion = out
        return self._completion

    def all(self) -> set[str]:
        return set(self._listed())

    def completion(self, ts: str) -> str | None:
        """The completion time of instant `ts`'s deltacommit (versions 8+; None when not completed)."""
        return self._listed().get(ts) if self.lay.table_version >= 8 else None

    def __contains__(self, ts: object) -> bool:
        if self.lay.table_version < 8 and self._completion is None:  # (or Hudi's writer's compaction)
            return isinstance(ts, str) and (self.st.exists(self.lay.deltacommit_file(ts, COMPLETED)) or
                                            self.st.exists(f"{self.lay.timeline_dir}/{ts}.commit"))
        return ts in self._listed()
