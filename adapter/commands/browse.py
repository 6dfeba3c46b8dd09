"""Browsing and dropping what the metastore holds, as Hive's SHOW / DESCRIBE / DROP do: `databases
[PATTERN]`, `tables DB [PATTERN]`, `describe DB[.TABLE]`, `partitions DB.TABLE [--filter F]`,
`drop-table`, `drop-database`, `drop-partition`. Every one takes --json; the drops ask for
confirmation on a terminal (--yes in scripts). Through the client only, as the other table commands."""

from __future__ import annotations

import datetime as dt
import json

from adapter.commands.table_cli import BadArgument, confirmed, connect, reporting_errors, split_table
from client import HiveTable, HudiCatalog, NotFound


def _print_json(doc) -> None:
    print(json.dumps(doc, indent=2))


def _print_names(names: list[str], json_out: bool, heading: str, noun: str) -> None:
    if json_out:
        _print_json(names)
        return
    print(heading)
    for n in names:
        print(n)
    print(f"{len(names)} {noun}(s)")


def run_databases(args) -> int:
    def go() -> int:
        with connect(args) as c:
            names = c.list_databases(args.pattern)
        _print_names(names, args.json, "DATABASE", "database")
        return 0

    return reporting_errors("databases", args.metastore, go)


def _database_name(text: str) -> str:
    name = (text or "").strip()
    if not name or "." in name:
        raise BadArgument(f"expected a database name, got {text!r}")
    return name


def _missing_database(exc: NotFound, name: str) -> NotFound:
    """The server's answer for a missing database names it as `database hive.DB`: say it plainly."""
    return NotFound(f"database {name.lower()} does not exist", exc.kind)


def run_tables(args) -> int:
    def go() -> int:
        db = _database_name(args.database)
        with connect(args) as c:
            try:
                names = c.list_tables(db, args.pattern)
            except NotFound as exc:
                raise _missing_database(exc, db) from None
            tables = {t.name: t for t in c.get_tables(db, names)} if names else {}
        rows = [{"name": n, "table_type": tables[n].table_type if n in tables else None,
                 "format": _format(tables[n]) if n in tables else None} for n in names]
        if args.json:
            _print_json(rows)
        else:
            print("TABLE\tTYPE\tFORMAT")
            for r in rows:
                print(f"{r['name']}\t{r['table_type'] or '-'}\t{r['format'] or '-'}")
            print(f"{len(rows)} table(s) in {db.lower()}")
        return 0

    return reporting_errors("tables", args.metastore, go)


def _format(t: HiveTable) -> str:
    """hudi, iceberg, a Spark provider (parquet, delta, ...), view, or the input format's short name."""
    if t.is_hudi:
        return "hudi"
    if t.parameters.get("table_type", "").lower() == "iceberg":
        return "iceberg"
    if t.table_type == "VIRTUAL_VIEW":
        return "view"
    provider = t.parameters.get("spark.sql.sources.provider")
    if provider:
        return provider.lower()
    fmt = (t.input_format or "").rsplit(".", 1)[-1]
    return fmt.removesuffix("InputFormat").lower() or "-"


def _when(seconds: int | None) -> str | None:
    if not seconds:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _columns(cols) -> list[dict]:
    return [{"name": c.name, "type": c.type, "comment": c.comment or None} for c in cols]


def _hudi_doc(c: HudiCatalog, t: HiveTable) -> dict | None:
    """What the metastore's Hudi timeline says of the table; None: it has none."""
    try:
        cfg = c.get_hudi_table(t.db, t.name)
    except NotFound:
        return None
    done = c.list_instants(t.db, t.name, states=["COMPLETED"])
    last = done[-1] if done else None
    return {"table_type": cfg.table_type, "table_version": cfg.table_version, "base_path": cfg.base_path,
            "record_key_fields": list(cfg.record_key_fields), "partition_fields": list(cfg.partition_fields),
            "precombine_field": cfg.precombine_field or None, "completed_instants": len(done),
            "latest_instant": None if last is None else {"timestamp": last.ts, "action": last.action,
                                                          "completion_time": last.completion_ts}}


def _table_doc(c: HudiCatalog, t: HiveTable) -> dict:
    return {"database": t.db, "table": t.name, "table_type": t.table_type, "format": _format(t), "owner": t.owner,
            "created": _when(t.create_time), "location": t.location, "columns": _columns(t.columns),
            "partition_keys": _columns(t.partition_keys),
            "storage": {"input_format": t.input_format, "output_format": t.output_format, "serde": t.serde},
            "view_text": t.view_text, "parameters": dict(sorted(t.parameters.items())),
            "hudi": _hudi_doc(c, t)}


def _print_columns(title: str, cols: list[dict]) -> None:
    print(f"\n{title}")
    width = max([len(col["name"]) for col in cols] + [4])
    for col in cols:
        comment = f"  -- {col['comment']}" if col["comment"] else ""
        print(f"  {col['name']:<{width}}  {col['type']}{comment}")
    if not cols:
        print("  (none)")


def _print_table(doc: dict) -> None:
    print(f"table               {doc['database']}.{doc['table']}")
    print(f"type                {doc['table_type'] or '-'}")
    print(f"format              {doc['format']}")
    print(f"owner               {doc['owner'] or '-'}")
    print(f"created             {doc['created'] or '-'}")
    print(f"location            {doc['location'] or '-'}")
    st = doc["storage"]
    print(f"input format        {st['input_format'] or '-'}")
    print(f"output format       {st['output_format'] or '-'}")
    print(f"serde               {st['serde'] or '-'}")
    if doc["view_text"]:
        print(f"view text           {doc['view_text']}")
    h = doc["hudi"]
    if h is not None:
        last = h["latest_instant"]
        print(f"hudi table type     {h['table_type']} (table version {h['table_version']})")
        print(f"hudi base path      {h['base_path']}")
        print(f"hudi record key     {','.join(h['record_key_fields']) or '-'}")
        print(f"hudi latest instant {'-' if last is None else last['timestamp'] + '.' + last['action']}"
              f" ({h['completed_instants']} completed)")
    elif doc["format"] == "hudi":
        print("hudi                no Hudi timeline on the metastore (`import-hudi` adopts one from storage)")
    _print_columns("COLUMNS", doc["columns"])
    _print_columns("PARTITION KEYS", doc["partition_keys"])
    print("\nPARAMETERS")
    for k, v in doc["parameters"].items():
        print(f"  {k} = {v}")
    if not doc["parameters"]:
        print("  (none)")


def run_describe(args) -> int:
    def go() -> int:
        if "." in args.name:
            db, tbl = split_table(args.name)
            with connect(args) as c:
                doc = _table_doc(c, c.get_table(db, tbl))
            if args.json:
                _print_json(doc)
            else:
                _print_table(doc)
            return 0
        name = _database_name(args.name)
        with connect(args) as c:
            try:
                d = c.get_database(name)
            except NotFound as exc:
                raise _missing_database(exc, name) from None
            n_tables = len(c.list_tables(name))
        params = dict(sorted(d.parameters.items()))
        ddoc = {"database": d.name, "location": d.location, "description": d.description or None, "owner": d.owner,
                "tables": n_tables, "parameters": params}
        if args.json:
            _print_json(ddoc)
            return 0
        print(f"database            {d.name}")
        print(f"location            {d.location or '-'}")
        print(f"description         {d.description or '-'}")
        print(f"owner               {d.owner or '-'}")
        print(f"tables              {n_tables}")
        print("\nPARAMETERS")
        for k, v in params.items():
            print(f"  {k} = {v}")
        if not params:
            print("  (none)")
        return 0

    return reporting_errors("describe", args.metastore, go)


def run_partitions(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            t = c.get_table(db, tbl)
            if not t.partition_keys:
                raise BadArgument(f"{t.db}.{t.name} is not partitioned")
            names = c.list_partition_names(db, tbl, args.filter, args.limit)
        _print_names(names, args.json, "PARTITION", "partition")
        return 0

    return reporting_errors("partitions", args.metastore, go)


def _dropped(args, doc: dict, text: str) -> int:
    if args.json:
        _print_json(doc)
    else:
        print(text)
    return 0


def run_drop_table(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            try:
                t = c.get_table(db, tbl)
            except NotFound:
                if args.if_exists:
                    return _dropped(args, {"dropped": None, "table": f"{db.lower()}.{tbl.lower()}"},
                                    f"table {db.lower()}.{tbl.lower()} does not exist; nothing dropped")
                raise
            name = f"{t.db}.{t.name}"
            data = "kept" if args.keep_data or t.table_type != "MANAGED_TABLE" else "deleted"
            if not confirmed("drop-table", f"Drop table {name} ({t.table_type}, data {data})?", args.yes):
                return 1
            c.drop_table(t.db, t.name, delete_data=not args.keep_data)
        return _dropped(args, {"dropped": "table", "table": name, "table_type": t.table_type, "data": data},
                        f"dropped table {name} ({t.table_type}; data {data})")

    return reporting_errors("drop-table", args.metastore, go)


def run_drop_database(args) -> int:
    def go() -> int:
        name = _database_name(args.name)
        with connect(args) as c:
            try:
                c.get_database(name)
            except NotFound as exc:
                if args.if_exists:
                    return _dropped(args, {"dropped": None, "database": name.lower()},
                                    f"database {name.lower()} does not exist; nothing dropped")
                raise _missing_database(exc, name) from None
            tables = c.list_tables(name)
            if tables and not args.cascade:
                raise BadArgument(f"database {name.lower()} holds {len(tables)} table(s) ({', '.join(tables[:5])}"
                                  f"{', ...' if len(tables) > 5 else ''}): drop them first or give --cascade")
            what = f" and its {len(tables)} table(s)" if tables else ""
            if not confirmed("drop-database", f"Drop database {name.lower()}{what}?", args.yes):
                return 1
            c.drop_database(name, delete_data=not args.keep_data, cascade=args.cascade)
        return _dropped(args, {"dropped": "database", "database": name.lower(), "tables": tables},
                        f"dropped database {name.lower()}{what}")

    return reporting_errors("drop-database", args.metastore, go)


def run_drop_partition(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            t = c.get_table(db, tbl)
            if t.is_hudi:
                raise BadArgument(f"{t.db}.{t.name} is a Hudi table: its partitions are dropped by a write "
                                  "(delete_partition, Spark SQL's ALTER TABLE ... DROP PARTITION), which the "
                                  "metastore's partitions follow")
            if not t.partition_keys:
                raise BadArgument(f"{t.db}.{t.name} is not partitioned")
            missing = [p for p in args.partitions if p not in set(c.list_partition_names(t.db, t.name))]
            if missing:
                raise NotFound(f"{t.db}.{t.name} has no partition {', '.join(map(repr, missing))}")
            data = "kept" if args.keep_data or t.table_type != "MANAGED_TABLE" else "deleted"
            if not confirmed("drop-partition", f"Drop {len(args.partitions)} partition(s) of {t.db}.{t.name} "
                                               f"(data {data})?", args.yes):
                return 1
            for p in args.partitions:
                c.drop_partition(t.db, t.name, p, delete_data=not args.keep_data)
        return _dropped(args, {"dropped": "partitions", "table": f"{t.db}.{t.name}", "partitions": args.partitions,
                               "data": data},
                        f"dropped {len(args.partitions)} partition(s) of {t.db}.{t.name} (data {data})")

    return reporting_errors("drop-partition", args.metastore, go)


__all__ = ["run_databases", "run_tables", "run_describe", "run_partitions", "run_drop_table", "run_drop_database",
           "run_drop_partition"]
