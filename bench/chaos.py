"""Chaos run: readers and writers under load while the server's database connections are terminated
again and again (PostgreSQL `pg_terminate_backend`, MariaDB/MySQL `KILL CONNECTION`).

    python -m bench.chaos [--backend postgresql|mysql|both] [--seconds 20] [--readers 8]
                          [--writers 4] [--kill-every 1.0] [--workers 1]

Passes when no read failed, and every write answered with an error is absent from the store while
every write answered with success is present (checked after the run). Database URLs:
HMS_TEST_POSTGRES_URL / HMS_TEST_MYSQL_URL (any database on the server; a fresh one is created and
dropped). Exit code 1 when the run does not pass. Figures of a run are in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from bench.procs import start_ours, stop_pid
from thrift_idl.hive_metastore.ttypes import (
    Database,
    FieldSchema,
    NoSuchObjectException,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
)

URL_ENV = {"postgresql": "HMS_TEST_POSTGRES_URL", "mysql": "HMS_TEST_MYSQL_URL"}
DEFAULT_URL = {"postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
               "mysql": "mysql+pymysql://root@127.0.0.1:3306/mysql"}
DB, TABLE, PARTITIONS = "chaos", "t", 50


@dataclass
class Tally:
    reads: int = 0
    read_errors: list[str] = field(default_factory=list)
    writes: dict[tuple[str, str], bool] = field(default_factory=dict)  # (kind, name) -> answered ok
    write_errors: Counter = field(default_factory=Counter)
    kills: int = 0
    rounds: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _client(port: int):
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    from thrift_idl.hive_metastore import ThriftHiveMetastore

    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(60_000)
    transport = TTransport.TBufferedTransport(sock)
    transport.open()
    return ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport)), transport


def _sd() -> StorageDescriptor:
    return StorageDescriptor(
        cols=[FieldSchema("x", "int", None)], inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", parameters={}))


def _table(name: str) -> Table:
    return Table(tableName=name, dbName=DB, owner="chaos", sd=_sd(), tableType="EXTERNAL_TABLE",
                 partitionKeys=[FieldSchema("p", "string", None)], parameters={})


def _part(value: str) -> Partition:
    return Partition(values=[value], dbName=DB, tableName=TABLE, sd=_sd(), parameters={})


# --------------------------------------------------------------------------- the database


def fresh_database(backend: str) -> tuple[str, object]:
    """(URL of a fresh database, function dropping it)."""
    base = os.environ.get(URL_ENV[backend]) or DEFAULT_URL[backend]
    name = f"hms_chaos_{uuid.uuid4().hex[:8]}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {name}"))

    def drop() -> None:
        with admin.connect() as conn:
            force = " WITH (FORCE)" if backend == "postgresql" else ""
            conn.execute(text(f"DROP DATABASE IF EXISTS {name}{force}"))
        admin.dispose()

    return make_url(base).set(database=name).render_as_string(hide_password=False), drop


def terminate(admin, backend: str, database: str) -> int:
    """Terminate every connection to `database` but the admin's own; returns how many."""
    with admin.connect() as conn:
        if backend == "postgresql":
            return len(conn.execute(text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = :d AND pid <> pg_backend_pid()"), {"d": database}).all())
        ids = conn.execute(text("SELECT id FROM information_schema.processlist "
                                "WHERE db = :d AND id <> CONNECTION_ID()"), {"d": database}).scalars().all()
        n = 0
        for i in ids:
            try:
                conn.execute(text(f"KILL CONNECTION {int(i)}"))
                n += 1
            except Exception:  # noqa: BLE001 - it ended by itself meanwhile
                pass
        return n


# --------------------------------------------------------------------------- load


def reader(port: int, stop: threading.Event, tally: Tally) -> None:
    client, transport = _client(port)
    try:
        while not stop.is_set():
            try:
                assert client.get_table(DB, TABLE).tableName == TABLE
                assert len(client.get_partition_names(DB, TABLE, -1)) >= PARTITIONS
                assert client.get_database(DB).name == DB
                client.get_partitions(DB, TABLE, 20)
                with tally.lock:
                    tally.reads += 4
            except Exception as exc:  # noqa: BLE001 - every failed read is reported
                with tally.lock:
                    tally.read_errors.append(repr(exc)[:300])
    finally:
        transport.close()


def writer(port: int, stop: threading.Event, tally: Tally) -> None:
    client, transport = _client(port)
    kinds = ("database", "table", "partition")
    try:
        i = 0
        while not stop.is_set():
            kind, name = kinds[i % 3], f"w{uuid.uuid4().hex[:10]}"
            i += 1
            try:
                if kind == "database":
                    client.create_database(Database(name=name, parameters={}))
                elif kind == "table":
                    client.create_table(_table(name))
                else:
                    client.add_partition(_part(name))
                ok = True
            except Exception as exc:  # noqa: BLE001 - checked against the store afterwards
                ok = False
                with tally.lock:
                    tally.write_errors[re.sub(r"error id \w+", "error id …", repr(exc))[:200]] += 1
            with tally.lock:
                tally.writes[(kind, name)] = ok
    finally:
        transport.close()


def killer(admin, backend: str, database: str, every: float, stop: threading.Event, tally: Tally) -> None:
    while not stop.wait(every):
        tally.kills += terminate(admin, backend, database)
        tally.rounds += 1


def exists(client, kind: str, name: str) -> bool:
    try:
        if kind == "database":
            client.get_database(name)
        elif kind == "table":
            client.get_table(DB, name)
        else:
            client.get_partition(DB, TABLE, [name])
        return True
    except NoSuchObjectException:
        return False


# --------------------------------------------------------------------------- one run


def run(backend: str, args) -> dict:
    url, drop = fresh_database(backend)
    workdir = Path(tempfile.mkdtemp(prefix=f"chaos-{backend}-"))
    server = start_ours(url, workdir, workers=args.workers, log_level="INFO")
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        setup, transport = _client(server.port)
        setup.create_database(Database(name=DB, parameters={}))
        setup.create_table(_table(TABLE))
        setup.add_partitions([_part(f"p{i}") for i in range(PARTITIONS)])
        tally, stop = Tally(), threading.Event()
        threads = [threading.Thread(target=reader, args=(server.port, stop, tally)) for _ in range(args.readers)]
        threads += [threading.Thread(target=writer, args=(server.port, stop, tally)) for _ in range(args.writers)]
        threads.append(threading.Thread(target=killer, args=(admin, backend, make_url(url).database,
                                                             args.kill_every, stop, tally)))
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        stop.set()
        for t in threads:
            t.join(timeout=120)
        failed = [k for k, ok in tally.writes.items() if not ok]
        made = [k for k, ok in tally.writes.items() if ok]
        result = {
            "backend": backend, "seconds": args.seconds, "readers": args.readers, "writers": args.writers,
            "kill_rounds": tally.rounds, "connections_terminated": tally.kills,
            "reads_ok": tally.reads, "reads_failed": len(tally.read_errors),
            "writes_ok": len(made), "writes_failed": len(failed),
            "failed_writes_present": sum(exists(setup, *k) for k in failed),
            "ok_writes_missing": sum(not exists(setup, *k) for k in made),
            "read_retries_logged": server.log_path.read_text("utf-8", "replace").count("on a fresh one"),
            "read_errors": tally.read_errors[:5], "write_errors": dict(tally.write_errors.most_common(5)),
        }
        transport.close()
        return result
    finally:
        stop_pid(server.pid)
        admin.dispose()
        drop()


def passed(r: dict) -> bool:
    return r["reads_failed"] == 0 and r["failed_writes_present"] == 0 and r["ok_writes_missing"] == 0


def render(r: dict) -> str:
    lines = [f"{r['backend']}: {r['seconds']} s, {r['readers']} readers, {r['writers']} writers, "
             f"{r['kill_rounds']} kill rounds, {r['connections_terminated']} connections terminated",
             f"  reads: {r['reads_ok']} ok, {r['reads_failed']} failed; read retries logged: "
             f"{r['read_retries_logged']}",
             f"  writes: {r['writes_ok']} ok, {r['writes_failed']} failed; failed writes present: "
             f"{r['failed_writes_present']}; successful writes missing: {r['ok_writes_missing']}",
             f"  {'PASS' if passed(r) else 'FAIL'}"]
    lines += [f"  read error: {e}" for e in r["read_errors"]]
    lines += [f"  write error x{n}: {e}" for e, n in r["write_errors"].items()]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.chaos", description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=["postgresql", "mysql", "both"], default="both")
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--readers", type=int, default=8)
    p.add_argument("--writers", type=int, default=4)
    p.add_argument("--kill-every", type=float, default=1.0, help="seconds between kill rounds")
    p.add_argument("--workers", type=int, default=1, help="server worker processes")
    args = p.parse_args(argv)
    backends = ["postgresql", "mysql"] if args.backend == "both" else [args.backend]
    ok = True
    for backend in backends:
        r = run(backend, args)
        print(render(r), flush=True)
        ok = ok and passed(r)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
