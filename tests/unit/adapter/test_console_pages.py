"""The web console's pages (adapter/console/), rendered in-process over the store services: a table's
schema, properties, storage, Hive and column statistics; a Hudi table's configuration and its
instants' operations (insert, upsert, delete, not only "commit"); search by name; `/server` as
readable sections (the raw text stays at /metrics). The browser test (tests/test_console_browser.py)
checks the pages as drawn."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from adapter.console.app import Console
from adapter.serve import prepare_store
from hudi_format.table_config import COW, HudiTableConfig
from store import metrics
from store.services import open_services
from thrift_idl.hive_metastore.ttypes import (
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    Database,
    FieldSchema,
    LongColumnStatsData,
    SerDeInfo,
    StorageDescriptor,
    StringColumnStatsData,
    Table,
)

pytestmark = pytest.mark.backends("sqlite")


@pytest.fixture
def console(own_backend_url, tmp_path):
    prepare_store(own_backend_url)
    svc = open_services(own_backend_url, str(tmp_path / "wh"))
    svc.tables.create_database(Database(name="sales", parameters={}))
    sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", "the key"), FieldSchema("city", "string", None)],
                           location=str(tmp_path / "wh" / "sales.db" / "orders"), inputFormat="org.x.TextInputFormat",
                           outputFormat="org.x.TextOutputFormat",
                           serdeInfo=SerDeInfo(serializationLib="org.x.LazySimpleSerDe", parameters={}), parameters={})
    svc.tables.create_table(Table(tableName="orders", dbName="sales", sd=sd, tableType="MANAGED_TABLE", owner="ann",
                                  parameters={"numRows": "42", "totalSize": "1234", "comment": "<b>orders</b>"},
                                  partitionKeys=[FieldSchema("dt", "string", "day")]))
    svc.statistics.update(ColumnStatistics(
        statsDesc=ColumnStatisticsDesc(isTblLevel=True, dbName="sales", tableName="orders", lastAnalyzed=1),
        statsObj=[ColumnStatisticsObj("id", "bigint", ColumnStatisticsData(longStats=LongColumnStatsData(
                      lowValue=3, highValue=99, numNulls=0, numDVs=40))),
                  ColumnStatisticsObj("city", "string", ColumnStatisticsData(stringStats=StringColumnStatsData(
                      maxColLen=9, avgColLen=5.5, numNulls=2, numDVs=7)))]))
    tl = svc.timeline
    tl.register_table(HudiTableConfig(db_name="sales", table_name="events", table_type=COW, record_key_fields=["id"],
                                      partition_fields=["dt"], hive_style_partitioning=True,
                                      base_path=str(tmp_path / "events")))
    for op in ("INSERT", "UPSERT", "DELETE"):
        i = tl.create_instant("sales", "events", None, "commit", b"", 0)
        tl.transition_to_inflight("sales", "events", i.ts, "commit", b"")
        stat = {"fileId": "f1-0", "path": f"dt=1/f1-0_0-1-0_{i.ts}.parquet", "partitionPath": "dt=1",
                "fileSizeInBytes": 10, "prevCommit": "null"}
        tl.complete_instant("sales", "events", i.ts, "commit", json.dumps(
            {"partitionToWriteStats": {"dt=1": [stat]}, "operationType": op, "extraMetadata": {}}).encode())
    try:
        yield Console(svc)
    finally:
        svc.close()


class _Cells(HTMLParser):
    """The text of each row of the tables with a given class."""

    def __init__(self, css: str):
        super().__init__()
        self.css, self.depth, self.rows, self.cell = css, 0, [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.depth = self.depth + 1 if self.depth or dict(attrs).get("class") == self.css else 0
        elif self.depth and tag == "tr":
            self.rows.append([])
        elif self.depth and tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "table" and self.depth:
            self.depth -= 1
        elif self.depth and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def rows(html: str, css: str) -> list[list[str]]:
    p = _Cells(css)
    p.feed(html)
    return p.rows[1:]  # without the header


def get(console, path: str, query: str = "") -> str:
    status, ctype, body = console.get(path, query)
    assert status == 200 and ctype.startswith("text/html"), (status, body[:300])
    return body.decode()


def test_table_schema_properties_and_statistics(console):
    html = get(console, "/db/sales/orders")
    assert rows(html, "schema") == [["id", "bigint", "the key", ""], ["city", "string", "", ""],
                                    ["dt", "string", "day", "partition key"]]
    assert rows(html, "basic-stats") == [["numRows", "42"], ["totalSize", "1234"], [
        "COLUMN_STATS_ACCURATE", '{"COLUMN_STATS":{"city":"true","id":"true"}}']]
    assert rows(html, "column-stats") == [["city", "string", "2", "7", "", "", "5.5", "9", ""],
                                          ["id", "bigint", "0", "40", "3", "99", "", "", ""]]
    assert ["comment", "<b>orders</b>"] in rows(html, "properties") and "<b>orders</b>" not in html  # escaped
    assert ["serde", "org.x.LazySimpleSerDe"] in rows(html, "storage") and "owner ann" in html


def test_hudi_instants_show_their_operation(console):
    html = get(console, "/db/sales/events")
    instants = rows(html, "instants")
    assert [r[1:3] for r in instants] == [["commit", "delete"], ["commit", "upsert"], ["commit", "insert"]]
    assert ["table type", "COPY_ON_WRITE"] in rows(html, "hudi-config")
    assert ["record key", "id"] in rows(html, "hudi-config")


def test_search_by_name(console):
    html = get(console, "/search", "q=EVE")
    assert rows(html, "found-tables") == [["sales.events", "EXTERNAL_TABLE"]]
    assert not rows(html, "found-databases")
    html = get(console, "/search", "q=sal")
    assert rows(html, "found-databases") == [["sales"]] and not rows(html, "found-tables")
    assert 'action="/search"' in get(console, "/")  # every page has the search box
    assert "give a part of a name" in get(console, "/search")


def test_server_page_is_readable(console):
    metrics.registry.record_call("get_table", 0.004, "ok")
    metrics.registry.record_call("get_table", 0.002, "NoSuchObjectException")
    html = get(console, "/server")
    calls = {r[0]: r for r in rows(html, "calls")}
    assert calls["get_table"][1] == str(int(metrics.registry.counter(metrics.CALLS, {
        "method": "get_table", "status": "ok"}) + metrics.registry.counter(metrics.CALLS, {
            "method": "get_table", "status": "NoSuchObjectException"})))
    assert re.fullmatch(r"NoSuchObjectException \d+", calls["get_table"][3])
    assert any(r[0] == "hudi_commits" for r in rows(html, "hudi-metrics"))
    assert ["readiness", "unknown"] in rows(html, "worker")
    assert "# TYPE" not in html and 'href="/metrics"' in html  # the raw text is /metrics'


def test_hudi_table_page_shows_pending_and_recent_services(console):
    """Pending and recent compactions, clusterings and cleans (issue 38), from the timeline: a
    completed COMPACT commit, a pending clustering; the write commits are no service."""
    html = get(console, "/db/sales/events")
    assert rows(html, "services") == []
    assert "no compaction, log compaction, clustering or clean pending or recent" in html
    tl = console.services.timeline
    done = tl.create_instant("sales", "events", None, "commit", b"", 0).ts
    tl.transition_to_inflight("sales", "events", done, "commit", b"")
    tl.complete_instant("sales", "events", done, "commit", json.dumps({"partitionToWriteStats": {"dt=1": [{
        "fileId": "f1-0", "path": f"dt=1/f1-0_0-1-0_{done}.parquet", "partitionPath": "dt=1", "fileSizeInBytes": 10,
        "prevCommit": "null"}]}, "operationType": "COMPACT", "extraMetadata": {}}).encode())
    pending = tl.create_instant("sales", "events", None, "clustering", b"", 0).ts
    html = get(console, "/db/sales/events")
    assert [r[:3] for r in rows(html, "services")] == [["compaction", done, "COMPLETED"],
                                                       ["clustering", pending, "REQUESTED"]]
    # a log compaction (completed as a deltacommit of operationType LOG_COMPACT); other deltacommits are none
    for op in ("UPSERT", "LOG_COMPACT"):
        action = "logcompaction" if op == "LOG_COMPACT" else "deltacommit"
        lc = tl.create_instant("sales", "events", None, action, b"", 0).ts
        tl.transition_to_inflight("sales", "events", lc, action, b"")
        tl.complete_instant("sales", "events", lc, action, json.dumps({"partitionToWriteStats": {}, "operationType": op,
                                                                      "extraMetadata": {}}).encode())
    waiting = tl.create_instant("sales", "events", None, "logcompaction", b"", 0).ts
    html = get(console, "/db/sales/events")
    assert [r[:3] for r in rows(html, "services") if r[0] == "logcompaction"] == [
        ["logcompaction", waiting, "REQUESTED"], ["logcompaction", lc, "COMPLETED"]]
