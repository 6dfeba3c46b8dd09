"""Archival of the timeline the storage mirror wrote (Hudi's HoodieTimelineArchiver, for readers
that do not know the server): once the active timeline on storage holds more than
`hoodie.keep.max.commits` completed write commits (commit, deltacommit, replacecommit), the
completed instants older than the newest `hoodie.keep.min.commits` of them move to the archived
timeline (hudi_format/archived_timeline.py: version 6's archive log, versions 8/9's LSM timeline),
then their files leave the active timeline (requested, inflight, then completed: a reader listing
meanwhile still sees the instant completed).

As Hudi's archiver, it never archives at or after the first instant not completed, the first
savepoint, the earliest commit the last completed clean retained (the storage mirror passes it as
the floor: a reader may still time-travel there), or (tables with a metadata table) the metadata
table's current base file instant: the metadata table's log blocks of older instants are in that base
file. Everything it needs is read
from storage (the archived bytes are the active files' bytes); the server's rows keep every instant.
A crash between writing the archive and deleting the active files is harmless: instants the archive
holds already are not archived twice, their files are deleted by the next run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hudi_format import archived_timeline as A
from hudi_format.config_keys import ARCHIVE_MAX_COMMITS, ARCHIVE_MIN_COMMITS, default_of
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED
from hudi_format.storage import TableStorage
from hudi_format.storage_timeline import parse_timeline_name
from hudi_format.timeline_layout import TimelineLayout
from store.hudi.encoder_process import ENCODER

WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


@dataclass
class _OnStorage:
    ts: str
    action: str = ""  # as completed
    completion_ts: str | None = None
    files: dict[int, str] = field(default_factory=dict)  # state -> name
    savepoint: bool = False


def _setting(props: dict[str, str], key: str) -> int:
    try:
        return max(1, int(props.get(key) or default_of(key)))
    except ValueError:
        return int(default_of(key))


def archive(st: TableStorage, layout: TimelineLayout, files: dict[str, int | None], props: dict[str, str],
            floor: str | None = None, pause: Callable[[], None] | None = None) -> list[str]:
    """Archive what the rules allow from the active timeline `files` (name -> size, updated);
    `floor`: no instant at or after it is archived (the metadata table's base instant); `pause`:
    called between pieces of the encoding (a background archive gives way to commits). The
    archived instants' times."""
    keep, most = _setting(props, ARCHIVE_MIN_COMMITS), _setting(props, ARCHIVE_MAX_COMMITS)
    most = max(most, keep)
    by_ts: dict[tuple[str, bool], _OnStorage] = {}
    for name in files:
        parsed = parse_timeline_name(name, layout.version)
        if parsed is None:
            continue
        ts, action, state, done = parsed
        sp = action == "savepoint"
        inst = by_ts.setdefault((ts, sp), _OnStorage(ts, savepoint=sp))
        inst.files[state] = name
        if state == COMPLETED:
            inst.action, inst.completion_ts = action, done or ts
    instants = sorted(by_ts.values(), key=lambda i: (i.ts, i.savepoint))
    commits = [i for i in instants if COMPLETED in i.files and i.action in WRITE_ACTIONS and not i.savepoint]
    if len(commits) <= most:
        return []
    bounds = [commits[len(commits) - keep].ts]
    bounds += [i.ts for i in instants if COMPLETED not in i.files or i.savepoint][:1]
    if floor is not None:
        bounds.append(floor)
    boundary = min(bounds)
    chosen = [i for i in instants if i.ts < boundary and COMPLETED in i.files and not i.savepoint]
    if not chosen:
        return []
    if layout.version == 1:
        _write_log_archive(st, layout, chosen, pause)
    else:
        _write_lsm(st, layout, chosen)
    for i in chosen:  # requested, inflight, then completed
        for state in (REQUESTED, INFLIGHT, COMPLETED):
            gone = i.files.get(state)
            if gone:
                st.delete(f"{layout.timeline_dir}/{gone}")
                files.pop(gone, None)
    return [i.ts for i in chosen]


def _archived(st: TableStorage, layout: TimelineLayout, chosen: list[_OnStorage]) -> list[A.ArchivedInstant]:
    def read(i: _OnStorage, state: int) -> bytes:
        name = i.files.get(state)
        return (st.read(f"{layout.timeline_dir}/{name}") or b"") if name else b""

    return [A.ArchivedInstant(i.ts, i.completion_ts or i.ts, i.action, read(i, COMPLETED), read(i, REQUESTED),
                              read(i, INFLIGHT)) for i in chosen]


def _size(instants: list[A.ArchivedInstant]) -> int:
    return sum(len(i.metadata) + len(i.plan) + len(i.inflight) for i in instants)


def _write_lsm(st: TableStorage, layout: TimelineLayout, chosen: list[_OnStorage]) -> None:
    history = layout.archive_dir
    listing = st.listing(history)
    version = 0
    raw = st.read(f"{history}/{A.VERSION_FILE}") if A.VERSION_FILE in listing else None
    if raw is not None and raw.strip().isdigit():
        version = int(raw.strip())
    live = A.parse_manifest(st.read(f"{history}/{A.MANIFEST_PREFIX}{version}") or b"{}") if version else []
    top = A.max_archived(n for n, _ in live)
    new = [i for i in chosen if top is None or i.ts > top]
    if not new:
        return
    instants = _archived(st, layout, new)
    data = ENCODER.run(A.lsm_file, (instants,), _size(instants), lambda: A.lsm_file(instants))
    name = A.lsm_file_name([A.ArchivedInstant(i.ts, "", "", b"") for i in new])
    st.put(f"{history}/{name}", data)
    st.put(f"{history}/{A.MANIFEST_PREFIX}{version + 1}", A.manifest([*live, (name, len(data))]))
    st.put(f"{history}/{A.VERSION_FILE}", str(version + 1).encode())


def _write_log_archive(st: TableStorage, layout: TimelineLayout, chosen: list[_OnStorage],
                       pause: Callable[[], None] | None = None) -> None:
    folder = layout.archive_dir
    listing = st.listing(folder)
    versions = sorted(v for n in listing if (v := A.archive_log_version(n)) is not None)
    top = None
    if versions:
        last = A.archive_log_name(versions[-1])
        key = (st.path(folder), last, listing.get(last))
        top = _NEWEST.get(key, "")
        if top == "":  # not the file this process wrote last: read (its times alone, still seconds)
            top = max(A.archived_times(st.read(f"{folder}/{last}") or b""), default=None)
    new = [i for i in chosen if top is None or i.ts > top]
    if not new:
        return
    instants = _archived(st, layout, new)
    data = ENCODER.run(A.archive_log_block, (instants,), _size(instants),
                       lambda: A.archive_log_block(instants, pause))
    name = A.archive_log_name((versions[-1] if versions else 0) + 1)
    st.put(f"{folder}/{name}", data)
    if len(_NEWEST) >= _NEWEST_MAX:
        _NEWEST.clear()
    _NEWEST[(st.path(folder), name, len(data))] = max(i.ts for i in new)


# (archive folder, the archive log file this process wrote there last, its size) -> the newest
# instant in it: the next archive of the table need not decode it again while it is unchanged
_NEWEST: dict[tuple[str, str, int | None], str | None] = {}
_NEWEST_MAX = 1024
