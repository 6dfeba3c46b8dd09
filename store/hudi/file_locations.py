"""Physical paths of a table's data files (RFC-60 federated storage layout).

The file listing keeps each file's partition and name; where the file lives follows from the
table's storage strategy, which the table config records and which a table cannot switch. The
snapshot answers carry each file's full path, converted on the fly as the RFC proposes, so readers
never compose paths from the base path. The server converts for its built-in strategies (`hive`,
`object-store`) only: it never imports code a client names, so files of a table with a custom
strategy are answered without a path and the client maps them with its own copy of the strategy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from hudi_format.config_keys import STORAGE_PATH, STORAGE_STRATEGY_CLASS
from hudi_format.file_slice import FileInfo, FileSlice
from hudi_format.storage_strategy import (
    HIVE,
    OBJECT_STORE,
    file_location,
    load_strategy,
    strategy_name,
)
from store.hudi.tables import HudiTableRef

Locator = Callable[[str, str], str]  # (partition path, file name) -> full path


def locator(ref: HudiTableRef) -> Locator | None:
    """The table's (partition, name) -> full path; None for a custom strategy (or a broken config)."""
    props = ref.config.properties or {}
    name = strategy_name(props.get(STORAGE_STRATEGY_CLASS))
    if name.lower() not in (HIVE, OBJECT_STORE):
        return None
    try:
        strategy = load_strategy(name, ref.base_path, props.get(STORAGE_PATH) or None,
                                 ref.config.table_name or ref.name)
    except ValueError:  # object-store without a storage path: refused at registration, never stored
        return None
    if name.lower() == OBJECT_STORE:
        return lambda partition, file_name: file_location(strategy, partition, file_name)
    folders: dict[str, str] = {}  # hive: the folder follows from the partition alone

    def in_partition(partition: str, file_name: str) -> str:
        folder = folders.get(partition)
        if folder is None:
            folder = folders[partition] = file_location(strategy, partition, "")
        return f"{folder}/{file_name}" if folder else file_name

    return in_partition


def locate_files(ref: HudiTableRef, files: Iterable[FileInfo]) -> None:
    """Set each file's path (in place)."""
    where = locator(ref)
    if where is None:
        return
    for f in files:
        f.path = where(f.partition_path, f.name)


def locate_slices(ref: HudiTableRef, slices: Iterable[FileSlice]) -> None:
    """Set the path of each slice's base and log files (in place)."""
    where = locator(ref)
    if where is None:
        return
    for s in slices:
        if s.base_file is not None:
            s.base_file.path = where(s.base_file.partition_path, s.base_file.name)
        for f in s.log_files:
            f.path = where(f.partition_path, f.name)
