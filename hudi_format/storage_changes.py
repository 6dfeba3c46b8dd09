"""What a Hudi table's storage holds that a metastore does not know yet: the instants new on storage
(or in a later state there), each state's file read and the completed one parsed, the files they
name, and the table config as storage has it.

One path for both who adopt a table's history from storage: `import-hudi` (adapter/commands,
through the server's API) and the server's catch-up of the tables it tracks from their first hive
sync (store/hudi/timeline/catch_up.py). Everything is read and parsed before anything is written: a
bad file is an error here, never half an import.
"""

from __future__ import annotations

from collections.abc import Mapping

from hudi_format.commit_metadata import (
    WRITE_ACTIONS,
    parse_clean,
    parse_commit,
    parse_restore,
    parse_rollback,
    parse_savepoint,
)
from hudi_format.config_keys import CHECKSUM, STORAGE_STRATEGY_CLASS, TABLE_NAME
from hudi_format.errors import InvalidMetadata
from hudi_format.file_slice import split_path
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED, SAVEPOINT, InstantKey
from hudi_format.storage_strategy import HIVE, strategy_name
from hudi_format.storage_timeline import StorageInstant, StorageTimeline
from hudi_format.table_config import HudiTableConfig

# the completed actions a metastore follows
FOLLOWED = (*WRITE_ACTIONS, "clean", "rollback", "restore", SAVEPOINT)


def instant_files(tl: StorageTimeline, inst: StorageInstant) -> dict[int, bytes | None]:
    """Each state's file, the completed one parsed: InvalidMetadata (naming the file) for a corrupt one."""
    out = {}
    for state in (REQUESTED, INFLIGHT, COMPLETED):
        if state <= inst.state:
            out[state] = tl.metadata(inst, state)
    if inst.state == COMPLETED:
        data, action = out[COMPLETED], inst.done_action
        try:
            if action in WRITE_ACTIONS:
                parse_commit(data)
            elif action == "clean":
                parse_clean(data)
            elif action == "rollback":
                parse_rollback(data)
            elif action == "restore":
                parse_restore(data)
            elif action == SAVEPOINT:
                parse_savepoint(data)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # InvalidMetadata is a ValueError
            text = getattr(exc, "message", None) or str(exc)
            raise InvalidMetadata(f"{tl.base_path}: corrupt instant file {tl.timeline_dir}/{inst.files[COMPLETED]}: "
                                  f"{text}") from None
    return out


def written_by(inst: StorageInstant, data: bytes | None) -> set[tuple[str, str]]:
    """(partition, file name) of the files a completed instant's metadata names."""
    action = inst.done_action
    if action in WRITE_ACTIONS:
        stats = parse_commit(data).write_stats
    elif action == "rollback":
        stats = parse_rollback(data)[2].write_stats
    elif action == "restore":
        stats = [s for rb in parse_restore(data) for s in rb[2].write_stats]
    else:
        return set()
    out = set()
    for s in stats:
        partition, name = split_path(s.path)
        out.add((s.partition_path if s.partition_path is not None else partition, name))
    return out


def check_partitions(tl: StorageTimeline, cfg: HudiTableConfig, inst: StorageInstant,
                     written: set[tuple[str, str]]) -> None:
    """Partition paths an instant wrote must fit the table's partition fields."""
    for partition in sorted({p for p, _ in written}):
        try:
            if partition or cfg.partition_fields:
                cfg.values_of(partition)
        except ValueError as exc:
            raise InvalidMetadata(f"{tl.base_path}: instant {inst.ts} wrote {exc}") from None


def new_instants(tl: StorageTimeline, known: Mapping[InstantKey, int]) -> list[StorageInstant]:
    """The instants of storage's active timeline the metastore lacks, or has in an earlier state
    (`known`: instant key (hudi_format.instant.instant_key) -> state, REQUESTED | INFLIGHT | COMPLETED)."""
    return [i for i in tl.instants if i.key not in known or known[i.key] < i.state]


def archive_unseen(tl: StorageTimeline, known: Mapping[InstantKey, int]) -> bool:
    """Whether instants the metastore never saw were archived: its latest completed instant precedes
    the active timeline and the archive holds something (the files are then found by a listing)."""
    completed = [ts for (ts, _), state in known.items() if state == COMPLETED]
    return bool(known) and tl.earliest is not None and (not completed or max(completed) < tl.earliest) \
        and tl.has_archive()


def config_from_storage(tl: StorageTimeline, db: str, table: str) -> HudiTableConfig:
    """`hoodie.properties` as the config of db.table; InvalidMetadata when it is unusable."""
    cfg = HudiTableConfig.from_properties(db.lower(), table.lower(), dict(tl.properties), tl.base_path)
    cfg.properties.pop(CHECKSUM, None)  # of the storage's db.table, not ours
    try:
        cfg.validate()
    except InvalidMetadata as exc:
        raise InvalidMetadata(f"{tl.base_path}: {exc.message}") from None
    stored_name = (tl.properties.get(TABLE_NAME) or "").lower()
    strategy = tl.properties.get(STORAGE_STRATEGY_CLASS)
    if strategy_name(strategy).lower() != HIVE and stored_name != cfg.table_name:
        # its data files are under <storage path>/<prefix>/<table name>/...: the name is part of their paths
        raise InvalidMetadata(f"{tl.base_path}: a table with storage strategy "
                              f"{strategy!r} keeps its table name in its files' paths; "
                              f"import it as {db.lower()}.{stored_name}, not {db.lower()}.{cfg.table_name}")
    return cfg
