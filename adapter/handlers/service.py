"""fb303 base service, session setup (set_ugi), configuration and catalogs."""

from __future__ import annotations

import threading
import time

from adapter.naming import CATALOG, check_catalog
from store.hms.metastore_info import MetastoreInfo
from thrift_idl.fb303.ttypes import fb_status
from thrift_idl.hive_metastore.ttypes import (
    Catalog,
    ConfigValSecurityException,
    GetCatalogResponse,
    GetCatalogsResponse,
    InvalidOperationException,
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


class ServiceHandler:
    def __init__(self, info: MetastoreInfo, warehouse_uri: str):
        self.info = info
        self.started = int(time.time())
        self.conf = dict(DEFAULT_CONF, **{"hive.metastore.warehouse.dir": warehouse_uri})
        self._session = threading.local()  # one thread per connection: setMetaConf is per session

    # fb303
    def getName(self):
        return "hudi-metastore"

    def getVersion(self):
        return VERSION

    def getStatus(self):
        return fb_status.ALIVE

    def getStatusDetails(self):
        return "ALIVE"

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
        return [user_name] + list(group_names or [])

    def get_config_value(self, name, default_value):
        if name is None:
            raise ConfigValSecurityException("Config name is null")
        value = self.conf.get(name)
        return default_value if value is None else value

    @property
    def session_conf(self) -> dict[str, str]:
        conf = getattr(self._session, "conf", None)
        if conf is None:
            conf = self._session.conf = {}
        return conf

    def getMetaConf(self, key):
        if key in self.session_conf:
            return self.session_conf[key]
        if key in self.conf and self.conf[key] is not None:
            return self.conf[key]
        raise MetaException(f"Invalid configuration key {key}")

    def setMetaConf(self, key, value):
        if not key or not key.startswith(("hive.metastore.", "metastore.")):
            raise MetaException(f"Invalid configuration key {key}")
        self.session_conf[key] = value

    def get_metastore_db_uuid(self):
        return self.info.db_uuid()

    # catalogs: one, `hive`
    def _catalog(self):
        return Catalog(name=CATALOG, description="Default catalog, for Hive",
                       locationUri=self.conf["hive.metastore.warehouse.dir"], createTime=self.started)

    def get_catalogs(self):
        return GetCatalogsResponse(names=[CATALOG])

    def get_catalog(self, catName):
        check_catalog(catName.name if catName else None)
        return GetCatalogResponse(catalog=self._catalog())

    def create_catalog(self, catalog):
        raise InvalidOperationException("This metastore serves only the catalog 'hive'")


    def get_role_names(self):
        return []

    def list_roles(self, principal_name, principal_type):
        return []
