"""The metastore's own facts (`metastore_info`): the database UUID Hive clients ask for."""

from __future__ import annotations

import uuid

from sqlalchemy import Connection, select

from store.db import schema as S
from store.db.database import Store

_INFO = S.metastore_info


def _read(conn: Connection, key: str) -> str | None:
    return conn.execute(select(_INFO.c.info_value).where(_INFO.c.info_key == key)).scalar()


class MetastoreInfo:
    def __init__(self, store: Store):
        self.store = store

    def db_uuid(self) -> str:
        """This metastore's UUID, made on first request and the same for every server on the database."""
        with self.store.read() as conn:
            existing = _read(conn, "uuid")
        if existing:
            return existing
        new = str(uuid.uuid4())

        def claim(conn: Connection) -> str:
            current = _read(conn, "uuid")
            if current:
                return current
            conn.execute(_INFO.insert().values(info_key="uuid", info_value=new))
            return new

        return self.store.run_write(claim)
