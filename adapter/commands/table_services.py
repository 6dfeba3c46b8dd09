"""`hudi-metastore table-services status DB.TABLE [--json] [--recent N]`: a Hudi table's services
(issue 38; docs/pipeline.md, Table services): their settings from the table's config (Hudi's names
and defaults), who runs them, the pending compactions, clusterings and cleans and the recent ones, and how far
the storage mirror archived the timeline on storage (read from the table's base path where this
command can read it). Log compactions (merge-on-read) are listed too: pending ones, and the recent
ones among the last LOG_COMPACTION_SCAN deltacommits. Exit status 0; 2 on errors.

`hudi-metastore table-services run DB.TABLE [--master URL]`: the table's pending compactions and
clusterings run as a Spark job (pipeline/table_services.py), each claimed on the server first;
attempts whose executor stopped heartbeating are rolled back first and run again; a plan the
server rolled back at its claim (it could no longer run) is printed `obsolete`, and the one it
scheduled instead runs. Exit status 0 when every one it found ran (or another executor had claimed it meanwhile); 1 when
nothing was waiting for an executor (none pending, or every pending one already running
elsewhere); 2 on errors, also when a service failed (the next run, once its heartbeat expired,
rolls it back and runs it again)."""

from __future__ import annotations

import json
import sys

from adapter.commands.table_cli import connect, reporting_errors, require_hudi_table, split_table
from hudi_format.commit_metadata import parse_commit
from hudi_format.config_keys import (
    ARCHIVE_MAX_COMMITS,
    ARCHIVE_MIN_COMMITS,
    CLEAN_AUTOMATIC,
    CLEANER_COMMITS_RETAINED,
    CLEANER_FILE_VERSIONS_RETAINED,
    CLEANER_HOURS_RETAINED,
    CLEANER_POLICY,
    CLUSTERING_INLINE,
    CLUSTERING_MAX_COMMITS,
    CLUSTERING_SMALL_FILE_LIMIT,
    CLUSTERING_SORT_COLUMNS,
    CLUSTERING_TARGET_FILE_MAX_BYTES,
    COMPACT_INLINE,
    COMPACT_MAX_DELTA_COMMITS,
    LOG_COMPACT_BLOCKS_THRESHOLD,
    LOG_COMPACT_ENABLE,
    LOG_COMPACT_INLINE,
    TIMELINE_SOURCE,
    default_of,
)
from hudi_format.table_config import MOR, log_compaction_enabled

PENDING = ("REQUESTED", "INFLIGHT")
COMPACT = "COMPACT"  # the operationType of a completed compaction (a commit)
CLUSTER = "CLUSTER"  # of a completed clustering (a replacecommit)
LOG_COMPACT = "LOG_COMPACT"  # of a completed log compaction (a deltacommit)
LOG_COMPACTION_SCAN = 200  # deltacommits looked at for the recent log compactions (newest first)


def _setting(props: dict[str, str], key: str) -> str:
    return str(props.get(key) or default_of(key))


def _settings(props: dict[str, str], table_type: str) -> dict[str, dict]:
    own = bool(props.get(TIMELINE_SOURCE))  # Hudi's own writers keep the timeline: they run the services
    compaction = {"enabled": table_type == MOR and _setting(props, COMPACT_INLINE).lower() == "true" and not own,
                  COMPACT_MAX_DELTA_COMMITS: _setting(props, COMPACT_MAX_DELTA_COMMITS),
                  "scheduled_by": "the server",
                  "run_by": "the pipeline (inline, before its next write) or table-services run"}
    log_compaction = {"enabled": table_type == MOR and log_compaction_enabled(props) and not own,
                      LOG_COMPACT_INLINE: _setting(props, LOG_COMPACT_INLINE),
                      LOG_COMPACT_ENABLE: _setting(props, LOG_COMPACT_ENABLE),
                      LOG_COMPACT_BLOCKS_THRESHOLD: _setting(props, LOG_COMPACT_BLOCKS_THRESHOLD),
                      "scheduled_by": "the server",
                      "run_by": "the pipeline (inline, before its next write) or table-services run"}
    policy = _setting(props, CLEANER_POLICY).upper()
    retained = {"KEEP_LATEST_FILE_VERSIONS": CLEANER_FILE_VERSIONS_RETAINED,
                "KEEP_LATEST_BY_HOURS": CLEANER_HOURS_RETAINED}.get(policy, CLEANER_COMMITS_RETAINED)
    clean = {"enabled": (props.get(CLEAN_AUTOMATIC) or "").lower() == "true" and not own,
             CLEANER_POLICY: policy, retained: _setting(props, retained), "run_by": "the server, after each commit"}
    archival = {ARCHIVE_MIN_COMMITS: _setting(props, ARCHIVE_MIN_COMMITS),
                ARCHIVE_MAX_COMMITS: _setting(props, ARCHIVE_MAX_COMMITS),
                "run_by": "the server's storage mirror, after each mirrored commit"}
    clustering = {"enabled": _setting(props, CLUSTERING_INLINE).lower() == "true" and not own,
                  CLUSTERING_MAX_COMMITS: _setting(props, CLUSTERING_MAX_COMMITS),
                  CLUSTERING_SMALL_FILE_LIMIT: _setting(props, CLUSTERING_SMALL_FILE_LIMIT),
                  CLUSTERING_TARGET_FILE_MAX_BYTES: _setting(props, CLUSTERING_TARGET_FILE_MAX_BYTES),
                  CLUSTERING_SORT_COLUMNS: props.get(CLUSTERING_SORT_COLUMNS) or "",
                  "scheduled_by": "the server",
                  "run_by": "the pipeline (inline, before its next write) or table-services run"}
    return {"compaction": compaction, "logcompaction": log_compaction, "clustering": clustering, "clean": clean,
            "archival": archival}


def _instant(i) -> dict:
    return {"instant": i.ts, "state": i.state, "completed": i.completion_ts}


def _archival(base_path: str, instants) -> dict:
    """What the active timeline on storage holds against the server's instants (the server keeps all)."""
    from hudi_format.storage_timeline import StorageTimeline

    try:
        active = StorageTimeline.read(base_path).instants
    except Exception as exc:  # storage this host cannot read: say so, the rest stands
        return {"storage": f"not readable from here: {exc}"}
    on_storage = {i.ts for i in active}
    oldest = min(on_storage, default=None)
    archived = [i.ts for i in instants if i.state == "COMPLETED" and oldest is not None and i.ts < oldest
                and i.ts not in on_storage]
    return {"active_instants": len(active), "oldest_active": oldest, "archived_instants": len(archived),
            "last_archived": max(archived, default=None)}


def _recent(c, db: str, tbl: str, done: list, operation: str, recent: int) -> list:
    """The newest of the completed instants `done` whose operationType is `operation`, oldest first."""
    found: list = []
    for i in reversed(done):
        if len(found) >= recent:
            break
        meta = c.get_instant_metadata(db, tbl, i.ts, i.action, "COMPLETED")
        try:
            if (parse_commit(meta).operation_type or "").upper() == operation:
                found.append(i)
        except ValueError:
            continue
    return list(reversed(found))


def status(c, db: str, tbl: str, recent: int) -> dict:
    cfg = c.get_hudi_table(db, tbl)
    props = dict(cfg.properties or {})
    doc: dict = {"table": f"{db}.{tbl}", "table_type": cfg.table_type,
                 "services": _settings(props, cfg.table_type)}
    instants = c.list_instants(db, tbl)
    compactions = [i for i in instants if i.action == "compaction"]  # pending ones keep the action
    clusterings = [i for i in instants if i.action == "clustering"]
    done = [i for i in instants if i.action == "commit" and i.state == "COMPLETED"] if cfg.table_type == MOR else []
    replaced = [i for i in instants if i.action == "replacecommit" and i.state == "COMPLETED"]
    cleans = [i for i in instants if i.action == "clean"]
    services = doc["services"]
    services["compaction"]["pending"] = [_instant(i) for i in compactions if i.state in PENDING]
    services["compaction"]["recent"] = [_instant(i) for i in _recent(c, db, tbl, done, COMPACT, recent)]
    deltas = [i for i in instants if i.action == "deltacommit" and i.state == "COMPLETED"][-LOG_COMPACTION_SCAN:]
    services["logcompaction"]["pending"] = [_instant(i) for i in instants
                                            if i.action == "logcompaction" and i.state in PENDING]
    services["logcompaction"]["recent"] = [_instant(i) for i in _recent(c, db, tbl, deltas, LOG_COMPACT, recent)] \
        if cfg.table_type == MOR else []
    services["clustering"]["pending"] = [_instant(i) for i in clusterings if i.state in PENDING]
    services["clustering"]["recent"] = [_instant(i) for i in _recent(c, db, tbl, replaced, CLUSTER, recent)]
    services["clean"]["pending"] = [_instant(i) for i in cleans if i.state in PENDING]
    services["clean"]["recent"] = [_instant(i) for i in [x for x in cleans if x.state == "COMPLETED"][-recent:]]
    services["archival"].update(_archival(cfg.base_path, instants))
    return doc


def _print(doc: dict) -> None:
    s = doc["services"]
    print(f"{doc['table']} ({doc['table_type']}): table services")
    comp, clust, clean, arch = s["compaction"], s["clustering"], s["clean"], s["archival"]
    logc = s["logcompaction"]
    if comp["enabled"]:
        print(f"compaction  on: after {comp[COMPACT_MAX_DELTA_COMMITS]} deltacommits; scheduled by "
              f"{comp['scheduled_by']}, run by {comp['run_by']}")
    else:
        print("compaction  off" + (" (copy-on-write)" if doc["table_type"] != MOR else ""))
    if logc["enabled"]:
        print(f"log compaction  on: slices of {logc[LOG_COMPACT_BLOCKS_THRESHOLD]} log blocks or more; scheduled by "
              f"{logc['scheduled_by']}, run by {logc['run_by']}")
    elif doc["table_type"] == MOR:
        on = "true" in (logc[LOG_COMPACT_INLINE].lower(), logc[LOG_COMPACT_ENABLE].lower())
        print("log compaction  off " + ("(Hudi's own writers keep the timeline)" if on else
                                        f"({LOG_COMPACT_INLINE}={logc[LOG_COMPACT_INLINE]}, "
                                        f"{LOG_COMPACT_ENABLE}={logc[LOG_COMPACT_ENABLE]})"))
    if clust["enabled"]:
        sort = f", sorted by {clust[CLUSTERING_SORT_COLUMNS]}" if clust[CLUSTERING_SORT_COLUMNS] else ""
        print(f"clustering  on: after {clust[CLUSTERING_MAX_COMMITS]} commits, file slices under "
              f"{clust[CLUSTERING_SMALL_FILE_LIMIT]} bytes into files of {clust[CLUSTERING_TARGET_FILE_MAX_BYTES]} "
              f"bytes{sort}; scheduled by {clust['scheduled_by']}, run by {clust['run_by']}")
    else:
        print(f"clustering  off ({CLUSTERING_INLINE}=false)")
    retained = next(k for k in clean if k.endswith(".retained"))
    print(f"clean       {'on' if clean['enabled'] else 'off'}: {clean[CLEANER_POLICY]}, {retained}={clean[retained]}; "
          f"run by {clean['run_by']}")
    print(f"archival    keep {arch[ARCHIVE_MIN_COMMITS]}-{arch[ARCHIVE_MAX_COMMITS]} write commits on storage; "
          f"run by {arch['run_by']}")
    print("SERVICE\tINSTANT\tSTATE\tCOMPLETED")
    rows = 0
    for name in ("compaction", "logcompaction", "clustering", "clean"):
        for i in s[name]["pending"] + s[name]["recent"]:
            print(f"{name}\t{i['instant']}\t{i['state']}\t{i['completed'] or '-'}")
            rows += 1
    if "storage" in arch:
        print(f"archival\t-\t-\t-  (storage {arch['storage']})")
    else:
        print(f"archival\t{arch['last_archived'] or '-'}\tARCHIVED\t-  ({arch['archived_instants']} instant(s) "
              f"archived; {arch['active_instants']} active on storage from {arch['oldest_active'] or '-'})")
    print(f"{rows} compaction, log compaction, clustering and clean instant(s)")


def run_status(args) -> int:
    def go() -> int:
        db, tbl = split_table(args.table)
        with connect(args) as c:
            require_hudi_table(c, db, tbl)
            doc = status(c, db, tbl, max(0, args.recent))
        if args.json:
            print(json.dumps(doc, indent=2))
        else:
            _print(doc)
        return 0

    return reporting_errors("table-services status", args.metastore, go)


def _spark(master: str | None):
    """The active session (a caller's, e.g. spark-submit's), else a new one; (session, made here)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    running = SparkContext._active_spark_context is not None  # this process's (a caller's) context
    builder = SparkSession.builder.appName("hudi-metastore table-services run")
    if master and not running:
        builder = builder.master(master)
    return builder.getOrCreate(), not running


def run_services(args) -> int:
    from adapter.commands.table_cli import security_of

    name = "table-services run"

    def go() -> int:
        from pipeline.table import load
        from pipeline.table_services import pending, recover, run

        db, tbl = split_table(args.table)
        security = security_of(args)
        with connect(args) as c:
            require_hudi_table(c, db, tbl)
            info = load(c, db, tbl)
            recovered = recover(c, info)  # failed attempts: to run again
            for o in recovered:
                print(f"{o.service}\t{o.instant}\t{o.result}\t{o.detail}")
            waiting = pending(c, info)
            requested = [p for p in waiting if p.state == "REQUESTED"]
            if not requested:
                running = ", ".join(f"{p.service} {p.instant}" for p in waiting)
                why = f"already being run by another executor: {running}" if running else "none pending"
                print(f"{name}: {db}.{tbl}: nothing to run ({why})", file=sys.stderr)
                return 1
            spark, made = _spark(args.master)
            try:
                outcomes = run(spark, c, info, args.metastore, security)
            finally:
                if made:
                    spark.stop()
        for o in outcomes:
            print(f"{o.service}\t{o.instant}\t{o.result}" + (f"\t{o.detail}" if o.detail else ""))
        failed = [o for o in outcomes if o.result == "failed"]
        for o in failed:
            print(f"{name}: {db}.{tbl}: {o.service} {o.instant} failed (once its heartbeat expired, the next "
                  f"run rolls it back and runs it again): {o.detail}", file=sys.stderr)
        if failed:
            return 2
        if not any(o.result == "completed" for o in outcomes):
            why = "another executor claimed every pending service"
            if any(o.result == "obsolete" for o in outcomes):
                why = "the server rolled back the plans that could no longer run; none was due again"
                if any(o.result == "claimed" for o in outcomes):
                    why += ", and another executor claimed the others"
            print(f"{name}: {db}.{tbl}: nothing ran ({why})", file=sys.stderr)
            return 1
        return 0

    return reporting_errors(name, args.metastore, go)
