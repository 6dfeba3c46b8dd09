"""A Python Kerberos client of the metastore: thrift's TSaslClientTransport with pure-sasl's GSSAPI
mechanism, which uses PyPI's `kerberos` (pykerberos, built against MIT Kerberos: Debian's
libkrb5-dev). That module is built once into the cache (`module_dir()`), outside the test
virtualenv, and the client runs as a subprocess with it on its path and the ticket cache in its
environment:

    python -m tests.harness.kerberos_client HOST PORT TABLE   (creates default.TABLE; prints "owner X" or
                                                            "error ...")
    python -m tests.harness.kerberos_client HOST PORT --pyiceberg   (PyIceberg's HiveCatalog with
        hive.kerberos-authentication: prints "namespaces a,b,...", or "error ...")
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

PYKERBEROS = "kerberos==1.3.1"


def module_dir() -> Path | None:
    """The directory holding the built `kerberos` module (None: MIT's headers are missing)."""
    cache = Path(os.environ.get("HUDI_METASTORE_CACHE") or Path.home() / ".cache" / "hudi-metastore")
    target = cache / f"pykerberos-py{sys.version_info[0]}{sys.version_info[1]}"
    if any(target.glob("kerberos*.so")):
        return target
    if shutil.which("krb5-config") is None:
        return None
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(tmp), PYKERBEROS],
                   check=True, capture_output=True)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target


def main(argv: list[str]) -> int:
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    from thrift_idl.hive_metastore import ThriftHiveMetastore
    from thrift_idl.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

    host, port, name = argv[0], int(argv[1]), argv[2]
    if name == "--pyiceberg":
        return _pyiceberg(host, port)
    sock = TSocket.TSocket(host, port)
    sock.setTimeout(20_000)
    transport = TTransport.TSaslClientTransport(sock, host, "hive", mechanism="GSSAPI")
    try:
        transport.open()
        client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
        sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", None)],
                               inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                               outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                               serdeInfo=SerDeInfo(None, "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", {}))
        client.create_table(Table(tableName=name, dbName="default", owner="mallory", sd=sd, partitionKeys=[],
                                  parameters={}, tableType="MANAGED_TABLE"))
        print("owner", client.get_table("default", name).owner)
    except Exception as exc:  # noqa: BLE001 - the error is the result
        print("error", type(exc).__name__, exc)
    finally:
        transport.close()
    return 0


def _pyiceberg(host: str, port: int) -> int:
    from pyiceberg.catalog.hive import HiveCatalog

    try:
        catalog = HiveCatalog("kerberized", uri=f"thrift://{host}:{port}", **{"hive.kerberos-authentication": "true"})
        print("namespaces", ",".join(sorted(n[0] for n in catalog.list_namespaces())))
    except Exception as exc:  # noqa: BLE001 - the error is the result
        print("error", type(exc).__name__, exc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
