"""fb303 base service, the session (set_ugi, setMetaConf) and configuration."""

from __future__ import annotations

import getpass
import re
import threading
import time

from adapter import identity
from adapter.readiness import Readiness
from store.hms.common import MetastoreInfo
from thrift_idl.fb303.ttypes import fb_status
from thrift_idl.hive_metastore.ttypes import (
    ConfigValSecurityException,
    MetaException,
)

VERSION = "3.1.3"  # the Hive metastore API level we answer as

# Configuration that clients ask for with get_config_value / getMetaConf.
DEFAULT_CONF = {
    "hive.metastore.warehouse.dir": None,  # filled from the server's warehouse
    "hive.metastore.try.direct.sql": "true",
    "hive.metastore.batch.retrieve.max": "300",
    "hive.metastore.client.socket.timeout": "600s",
    "metastore.partition.name.whitelist.pattern": "",
    "hive.metastore.partition.name.whitelist.pattern": "",
    "hive.txn.timeout": "300s",
    "hive.exec.dynamic.partition.mode": "strict",
}


# What getMetaConf / setMetaConf take: Hive 4's user-configurable settings (MetastoreConf.metaConfVars), each
# by its name and its hive.-prefixed name, with Hive's defaults; other keys are refused.
META_CONF_DEFAULTS = {
    "try.direct.sql": "true", "try.direct.sql.ddl": "true", "client.socket.timeout": "600s",
    "partition.name.whitelist.pattern": "", "partition.order.expr": '"PART_NAME" asc',
    "client.capability.check": "true", "disallow.incompatible.col.type.changes": "true",
    "expression.proxy": "org.apache.hadoop.hive.ql.optimizer.ppr.PartitionExpressionForMetastore",
}


def _meta_conf_key(key: str | None) -> str | None:
    """The setting `key` names (without its prefix), None when it is no metastore session setting."""
    for prefix in ("hive.metastore.", "metastore."):
        if key and key.startswith(prefix) and key[len(prefix):] in META_CONF_DEFAULTS:
            return key[len(prefix):]
    return None


# One thread per connection: what set_ugi and setMetaConf set belongs to the connection's session.
_session = threading.local()


def session_setting(*keys: str) -> str | None:
    """What this connection's setMetaConf set for the first of `keys` it set, else None."""
    conf = getattr(_session, "conf", None) or {}
    return next((conf[k] for k in keys if k in conf), None)


def _process_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for the process's uid
        return "hive"


_PROCESS_USER = _process_user()


def ugi_user() -> str | None:
    """The caller's user (adapter/identity.py): authenticated, else what set_ugi named, else None."""
    return identity.current().user


def session_user() -> str:
    """Who this connection's calls run as: the caller's user, else (as Hive without
    authentication) the user the server runs as."""
    return identity.current().user or _PROCESS_USER


class ServiceHandler:
    def __init__(self, info: MetastoreInfo, warehouse_uri: str, readiness: Readiness | None = None):
        self.info = info
        self.readiness = readiness
        self.started = int(time.time())
        self.conf = dict(DEFAULT_CONF, **{"hive.metastore.warehouse.dir": warehouse_uri})

    # fb303
    def getName(self):
        return "hudi-metastore"

    def getVersion(self):
        return VERSION

    def getStatus(self):
        """ALIVE when the database answers with the schema this version needs, else WARNING."""
        if self.readiness is None or self.readiness.status().ready:
            return fb_status.ALIVE
        return fb_status.WARNING

    def getStatusDetails(self):
        if self.readiness is None:
            return "ALIVE"
        status = self.readiness.status()
        return f"{'ALIVE' if status.ready else 'WARNING'}: {status.detail}"

    def getCounters(self):
        return {}

    def getCounter(self, key):
        return 0

    def setOption(self, key, value):
        return None

    def getOption(self, key):
        return ""

    def getOptions(self):
        return {}

    def getCpuProfile(self, seconds):
        return ""

    def aliveSince(self):
        return self.started

    def reinitialize(self):
        return None

    def shutdown(self):
        """Clients call this on close: a no-op per connection, never a server stop."""
        return None

    # session and configuration
    def set_ugi(self, user_name, group_names):
        """The session's user (None keeps the server's). Answers the groups, as Hive 2.3 and 4 do
        (tests/test_conformance.py::test_set_ugi); null names are left out."""
        names = [name for name in (group_names or []) if name is not None]
        identity.apply_ugi(user_name, names)
        return names

    def get_config_value(self, name, default_value):
        if name is None:
            raise ConfigValSecurityException("Config name is null")
        if not re.match(r"(hive|hdfs|mapred|metastore)", name):  # Hive's rule: no other keys (passwords)
            shown = name if len(name) <= 256 else name[:256] + "..."  # (a reply as small as the request's answer)
            raise ConfigValSecurityException(f"For security reasons, the config key {shown} cannot be accessed")
        value = self.conf.get(name)
        return default_value if value is None else value

    @property
    def session_conf(self) -> dict[str, str]:
        conf = getattr(_session, "conf", None)
        if conf is None:
            conf = _session.conf = {}
        return conf

    def flushCache(self):
        """Hive's flushes its object caches; ours has none that can be stale (nothing to do)."""

    def getMetaConf(self, key):
        name = _meta_conf_key(key)
        if name is None:
            raise MetaException(f"Invalid configuration key {key}")
        if key in self.session_conf:
            return self.session_conf[key]
        if key in self.conf and self.conf[key] is not None:
            return self.conf[key]
        return META_CONF_DEFAULTS[name]

    def setMetaConf(self, key, value):
        if _meta_conf_key(key) is None:
            raise MetaException(f"Invalid configuration key {key}")
        self.session_conf[key] = value

    def get_metastore_db_uuid(self):
        return self.info.db_uuid()
