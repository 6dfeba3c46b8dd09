"""A Hudi table's config and active timeline as its storage holds them (what import-hudi reads).

Two layouts:

* timeline layout 1 (table version 6, Hudi 0.14/0.15): files directly in `.hoodie/`:
  `<ts>.<action>.requested`, `<ts>.<action>.inflight` (`<ts>.inflight` for a commit) and the
  completed `<ts>.<action>`; no completion times (the instant time stands in for one);
* timeline layout 2 (table versions 8 and 9, Hudi 1.0/1.1): the same in `.hoodie/timeline/`
  (`hoodie.timeline.path`), completed instants named `<requested>_<completed>.<action>`.

A savepoint shares the instant time of the commit it saves (`<T>.savepoint.inflight`, `<T>.savepoint`
beside `<T>.commit`): it is an instant of its own, ordered after its commit.

A compaction completes as a `commit`, a log compaction as a `deltacommit`, a clustering as a
`replacecommit`; the action an instant is known by is the one it was requested with. Archived
instants (`.hoodie/archived/`, layout 2's `timeline/history/`) are not read: their files are found
by a listing of the table (hudi_format/listing.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hudi_format.config_keys import (
    ARCHIVELOG_FOLDER,
    PROPERTIES_FILE,
    TABLE_NAME,
    TABLE_VERSION,
    TIMELINE_HISTORY_PATH,
    TIMELINE_LAYOUT_VERSION,
    TIMELINE_PATH,
    default_of,
)
from hudi_format.errors import CorruptTimeline, NotAHudiTable, UnsupportedTableVersion
from hudi_format.instant import ACTIONS, COMPLETED, COMPLETED_AS, INFLIGHT, REQUESTED, InstantKey, instant_key
from hudi_format.layout import HOODIE
from hudi_format.storage import TableStorage
from hudi_format.table_config import read_properties

SUPPORTED_TABLE_VERSIONS = (6, 8, 9)
_COMPLETED_ACTIONS = {COMPLETED_AS.get(a, a) for a in ACTIONS}
_INSTANT_LIKE = re.compile(r"^\d{14,17}(?:_\d{14,17})?\.")
_NAME = re.compile(r"^(?P<ts>\d{14,17})(?:_(?P<done>\d{14,17}))?\.(?P<rest>[a-z]+(?:\.[a-z]+)?)$")


@dataclass
class StorageInstant:
    ts: str
    action: str  # as requested
    state: int  # the latest state on storage
    completion_ts: str | None = None
    files: dict[int, str] = field(default_factory=dict)  # state -> file name in the timeline folder

    @property
    def done_action(self) -> str:
        return COMPLETED_AS.get(self.action, self.action)

    @property
    def key(self) -> InstantKey:
        return instant_key(self.ts, self.action)


def parse_timeline_name(name: str, layout: int) -> tuple[str, str, int, str | None] | None:
    """(ts, action, state, completion ts) of a timeline file name; None for other files."""
    m = _NAME.match(name)
    if not m:
        return None
    ts, done, rest = m.group("ts"), m.group("done"), m.group("rest")
    if done is not None:
        if layout < 2 or rest not in _COMPLETED_ACTIONS:
            return None
        return ts, rest, COMPLETED, done
    if rest == "inflight":
        return ts, "commit", INFLIGHT, None
    action, _, state = rest.partition(".")
    if state in ("requested", "inflight"):
        return (ts, action, REQUESTED if state == "requested" else INFLIGHT, None) if action in ACTIONS else None
    if not state and action in _COMPLETED_ACTIONS:
        return ts, action, COMPLETED, None
    return None


class StorageTimeline:
    """`hoodie.properties` and the active timeline of the table at `base_path`."""

    def __init__(self, base_path: str, properties: dict[str, str], storage: TableStorage):
        self.base_path = base_path
        self.properties = properties
        self.storage = storage
        self.table_version = int(properties[TABLE_VERSION])
        default_layout = "1" if self.table_version < 8 else "2"
        self.layout = int(properties.get(TIMELINE_LAYOUT_VERSION, default_layout) or default_layout)
        if self.table_version >= 8:
            self.timeline_dir = f"{HOODIE}/{properties.get(TIMELINE_PATH) or default_of(TIMELINE_PATH)}"
            history = properties.get(TIMELINE_HISTORY_PATH) or default_of(TIMELINE_HISTORY_PATH)
            self.archive_dir = f"{self.timeline_dir}/{history}"
        else:
            self.timeline_dir = HOODIE
            self.archive_dir = f"{HOODIE}/{properties.get(ARCHIVELOG_FOLDER) or default_of(ARCHIVELOG_FOLDER)}"
        self.instants: list[StorageInstant] = []
        self.unrecognised: list[str] = []  # files named as instants whose action or state is unknown

    @classmethod
    def read(cls, base_path: str) -> StorageTimeline:
        try:
            st = TableStorage(base_path)
        except Exception as exc:  # an unknown protocol, a bad URL
            raise NotAHudiTable(f"{base_path}: cannot open storage: {exc}") from exc
        raw = st.read(f"{HOODIE}/{PROPERTIES_FILE}")
        if raw is None:  # Hudi falls back to the backup an interrupted upgrade leaves
            raw = st.read(f"{HOODIE}/{PROPERTIES_FILE}.backup")
        if raw is None:
            what = "does not exist" if not st.exists("") else f"has no {HOODIE}/{PROPERTIES_FILE}"
            raise NotAHudiTable(f"{base_path} is not a Hudi table: it {what}")
        try:
            props = read_properties(raw.decode("latin-1"))
        except Exception as exc:
            raise NotAHudiTable(f"{base_path}: unreadable {HOODIE}/{PROPERTIES_FILE}: {exc}") from exc
        if not props.get(TABLE_NAME):
            raise NotAHudiTable(f"{base_path}: {HOODIE}/{PROPERTIES_FILE} has no {TABLE_NAME}")
        version = props.get(TABLE_VERSION, "")
        if not version.isdigit() or int(version) not in SUPPORTED_TABLE_VERSIONS:
            raise UnsupportedTableVersion(
                f"{base_path}: Hudi table version {version or '(none)'} is not supported "
                f"(supported: {', '.join(map(str, SUPPORTED_TABLE_VERSIONS))})")
        tl = cls(base_path, props, st)
        tl._load()
        return tl

    def _load(self) -> None:
        by_key: dict[InstantKey, StorageInstant] = {}
        for name, size in sorted(self.storage.listing(self.timeline_dir).items()):
            if size is None:
                continue
            parsed = parse_timeline_name(name, self.layout)
            if parsed is None:
                if _INSTANT_LIKE.match(name):
                    self.unrecognised.append(name)
                continue
            ts, action, state, done = parsed
            inst = by_key.setdefault(instant_key(ts, action), StorageInstant(ts, action, state))
            if state in inst.files:
                raise CorruptTimeline(f"{self.base_path}: instant {ts} has two "
                                      f"{('', 'requested', 'inflight', 'completed')[state]} files: "
                                      f"{inst.files[state]}, {name}")
            inst.files[state] = name
            if state == COMPLETED:
                inst.completion_ts = done or ts
        for inst in by_key.values():
            self._settle(inst)
        self.instants = sorted(by_key.values(), key=lambda i: i.key)

    def _settle(self, inst: StorageInstant) -> None:
        """The requested action from the requested (else inflight) file; it must complete as the
        completed file says."""
        requested = self._action_of(inst, REQUESTED) or self._action_of(inst, INFLIGHT)
        completed = self._action_of(inst, COMPLETED)
        if requested == "commit" and self._action_of(inst, REQUESTED) is None and completed:
            requested = completed  # only `<ts>.inflight`: the action is the completed one
        if completed and requested and COMPLETED_AS.get(requested, requested) != completed:
            raise CorruptTimeline(f"{self.base_path}: instant {inst.ts} was requested as {requested} "
                                  f"but completed as {completed}")
        inst.action = requested or completed or inst.action
        inst.state = max(inst.files)

    def _action_of(self, inst: StorageInstant, state: int) -> str | None:
        """The action the instant's file of `state` names, if it has one."""
        name = inst.files.get(state)
        parsed = parse_timeline_name(name, self.layout) if name else None
        return parsed[1] if parsed else None

    # --- queries --------------------------------------------------------------------------------

    def metadata(self, inst: StorageInstant, state: int) -> bytes | None:
        name = inst.files.get(state)
        if name is None:
            return None
        data = self.storage.read(f"{self.timeline_dir}/{name}")
        if data is None:
            raise CorruptTimeline(f"{self.base_path}: {name} disappeared while it was read")
        return data

    @property
    def completed(self) -> list[StorageInstant]:
        return [i for i in self.instants if i.state == COMPLETED]

    @property
    def earliest(self) -> str | None:
        """The first instant of the active timeline: anything before it is archived."""
        return self.instants[0].ts if self.instants else None

    def has_archive(self) -> bool:
        """Whether instants were archived (their files are then found by listing)."""
        return any(self.storage.listing(self.archive_dir))

