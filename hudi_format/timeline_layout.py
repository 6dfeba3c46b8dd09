"""The timeline's file layout per table version, as the storage mirror writes it.

* layout 1 (table version 6, Hudi 0.14/0.15): instant files directly in `.hoodie/`, named by
  `hudi_format.layout.instant_file_name`; archived instants in `.hoodie/archived/`;
* layout 2 (table versions 8 and 9, Hudi 1.x; Hudi's InstantFileNameGeneratorV2): instant files in
  `.hoodie/timeline/` (`hoodie.timeline.path`): `<ts>.<action>.requested`, `<ts>.<action>.inflight`
  (`<ts>.inflight` for a commit), the completed `<ts>_<completion ts>.<action>`; instant metadata
  in Avro (a commit's `HoodieCommitMetadata`, `avro_commit_metadata`); archived instants in the LSM
  timeline `.hoodie/timeline/history/` (`hoodie.timeline.history.path`, hudi_format/lsm_timeline.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_format.config_keys import ARCHIVELOG_FOLDER, TIMELINE_HISTORY_PATH, TIMELINE_PATH, default_of
from hudi_format.instant import COMPLETED, COMPLETED_AS, INFLIGHT, REQUESTED
from hudi_format.layout import HOODIE, LAYOUT_DIRS, instant_file_name, parse_instant_file
from hudi_format.storage_timeline import parse_timeline_name

# Folders Hudi 1.x's HoodieTableMetaClient.initTable creates (relative to `.hoodie`), besides the
# timeline's own: the table version 8/9 fixtures have them.
_V2_DIRS = (".aux", ".aux/.bootstrap", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids",
            ".schema", ".temp")


@dataclass(frozen=True)
class TimelineLayout:
    version: int  # 1 or 2
    timeline_dir: str  # relative to the base path
    archive_dir: str  # relative to the base path
    dirs: tuple[str, ...]  # folders under `.hoodie` Hudi creates with a table

    def file_name(self, ts: str, action: str, state: int, completion_ts: str | None = None) -> str | None:
        """The file name of an instant in a state (`action` as requested); None: no such file."""
        if self.version == 1:
            return instant_file_name(ts, action, state)
        if state == COMPLETED:
            return f"{ts}_{completion_ts or ts}.{COMPLETED_AS.get(action, action)}"
        if action == "commit" and state == INFLIGHT:
            return f"{ts}.inflight"
        if action == "savepoint" and state == REQUESTED:
            return None
        return f"{ts}.{action}.{'requested' if state == REQUESTED else 'inflight'}"

    def instant_of(self, name: str) -> str | None:
        """The instant time of a timeline file name, None for other files."""
        if self.version == 1:
            return parse_instant_file(name)
        parsed = parse_timeline_name(name, 2)
        return parsed[0] if parsed else None


def timeline_layout(table_version: int, properties: dict[str, str] | None = None) -> TimelineLayout:
    """The layout of a table version (`properties`: its config, which may move the folders)."""
    props = properties or {}
    if table_version < 8:
        archived = props.get(ARCHIVELOG_FOLDER) or default_of(ARCHIVELOG_FOLDER)
        return TimelineLayout(1, HOODIE, f"{HOODIE}/{archived}", LAYOUT_DIRS)
    timeline = f"{HOODIE}/{props.get(TIMELINE_PATH) or default_of(TIMELINE_PATH)}"
    history = f"{timeline}/{props.get(TIMELINE_HISTORY_PATH) or default_of(TIMELINE_HISTORY_PATH)}"
    rel = timeline[len(HOODIE) + 1:]
    return TimelineLayout(2, timeline, history, (*_V2_DIRS, rel, history[len(HOODIE) + 1:]))
