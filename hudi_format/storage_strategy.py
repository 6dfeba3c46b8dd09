"""Storage strategies (RFC-60 federated storage layout): where a table's data files live.

* `hive` (the default): `<base path>/<partition path>/<file>`, today's layout;
* `object-store`: `<storage path>/<hash of the file id>/<table name>/<partition path>/<file>`, files
  spread over hashed prefixes so no single prefix of an object store takes all requests; the hash
  is of the file id only, so a base file and its log files share a prefix;
* a custom strategy: a Python import path (`package.module.Class`) of a class built as
  `Class(base_path, storage_path, table_name)` with `storage_location(partition_path, file_id)`
  returning the folder (URL) of the file group's files.

`.hoodie/` and partition metadata always stay under the base path. The options are Hudi's names:
`hoodie.storage.strategy.class` and `hoodie.storage.path`, kept in the table's config.
"""

from __future__ import annotations

import hashlib
import importlib
from typing import Protocol

from hudi_format.config_keys import STORAGE_PATH, STORAGE_STRATEGY_CLASS, default_of

HIVE = default_of(STORAGE_STRATEGY_CLASS)  # "hive"
OBJECT_STORE = "object-store"
PREFIX_CHARS = 8  # hex characters of the hash prefix (2^32 prefixes)


class StorageStrategy(Protocol):
    def storage_location(self, partition_path: str, file_id: str) -> str: ...


def _join(*parts: str) -> str:
    return "/".join(p.strip("/") if i else p.rstrip("/") for i, p in enumerate(parts) if p)


class HiveStorageStrategy:
    def __init__(self, base_path: str, storage_path: str | None = None, table_name: str = ""):
        self.base_path = base_path

    def storage_location(self, partition_path: str, file_id: str) -> str:
        return _join(self.base_path, partition_path)


def hash_prefix(file_id: str) -> str:
    return hashlib.md5(file_id.encode(), usedforsecurity=False).hexdigest()[:PREFIX_CHARS]


class ObjectStoreStorageStrategy:
    def __init__(self, base_path: str, storage_path: str | None, table_name: str):
        if not storage_path:
            raise ValueError(f"storage strategy {OBJECT_STORE!r} needs {STORAGE_PATH}")
        self.storage_path, self.table_name = storage_path, table_name

    def storage_location(self, partition_path: str, file_id: str) -> str:
        return _join(self.storage_path, hash_prefix(file_id), self.table_name, partition_path)


_SHORT_NAMES = {HIVE: HiveStorageStrategy, OBJECT_STORE: ObjectStoreStorageStrategy}


def strategy_name(name: str | None) -> str:
    """The strategy option as stored: a short name or an import path; unset means `hive`."""
    return (name or HIVE).strip() or HIVE


def load_strategy(name: str | None, base_path: str, storage_path: str | None, table_name: str) -> StorageStrategy:
    """The strategy named by `hoodie.storage.strategy.class`; ValueError for a name that is none."""
    name = strategy_name(name)
    cls = _SHORT_NAMES.get(name.lower())
    if cls is None:
        module, _, attr = name.rpartition(".")
        if not module:
            raise ValueError(f"{STORAGE_STRATEGY_CLASS}={name!r}: not {HIVE!r}, {OBJECT_STORE!r} or an import path")
        try:
            cls = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"{STORAGE_STRATEGY_CLASS}={name!r}: cannot import it ({exc})") from exc
        if not callable(getattr(cls, "storage_location", None)):
            raise ValueError(f"{STORAGE_STRATEGY_CLASS}={name!r}: has no storage_location(partition_path, file_id)")
    return cls(base_path, storage_path, table_name)


def file_id_of(file_name: str) -> str:
    """The file id of a base file `<fileId>_<writeToken>_<instant>.parquet` (or a log file `.<fileId>_...`)."""
    return file_name.lstrip(".").split("_", 1)[0]


def file_location(strategy: StorageStrategy, partition_path: str, file_name: str) -> str:
    """The full path (URL) of a data file."""
    return _join(strategy.storage_location(partition_path, file_id_of(file_name)), file_name)
