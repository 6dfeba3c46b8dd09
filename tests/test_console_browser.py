"""The web console (adapter/console/) in headless Chromium (Debian's chromium + chromedriver, driven
by Selenium): pages load and show the server's objects, partitions are paged, the file slices of a
partition are listed, and the Hudi timeline is drawn with one mark per instant; its screenshot is
decoded and must show the marks (not a blank image)."""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
import uuid
import zlib

import pytest

from adapter.commands.import_hudi import import_hudi_table
from client import HudiMetastoreClient
from tests.harness import free_port, start_our_server, stop_process
from tests.harness.hudi_tables import table_copy
from thrift_idl.hive_metastore.ttypes import (
    Database,
    FieldSchema,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1280,1800"]


def _need_browser():
    missing = [n for n, p in (("chromium", CHROMIUM), ("chromedriver", CHROMEDRIVER)) if not p]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip)")
    if missing:
        text = f"browser tests need {', '.join(missing)} (apt-get install chromium chromium-driver; .ci/services.sh)"
        if os.environ.get("CI"):
            pytest.fail(text)
        pytest.skip(text)


@pytest.fixture(scope="module")
def browser():
    _need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A server with the console, a Hudi table (imported fixture) and a plain table of 150 partitions."""
    tmp = tmp_path_factory.mktemp("console")
    http = free_port()
    port, proc = start_our_server(f"sqlite:///{tmp / 'm.db'}", tmp, extra_args=["--metrics-port", str(http)])
    uri = f"thrift://127.0.0.1:{port}"
    db = f"web_{uuid.uuid4().hex[:6]}"
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp)
    import_hudi_table(uri, base, db, "hudi_t")
    with HudiMetastoreClient(uri) as c:
        sd = StorageDescriptor(cols=[FieldSchema("a", "int", "")], location=str(tmp / "plain"),
                               inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                               outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                               serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy."
                                                                    "LazySimpleSerDe", parameters={}))
        c.create_table(Table(tableName="plain", dbName=db, tableType="EXTERNAL_TABLE", parameters={},
                             partitionKeys=[FieldSchema("n", "int", "")], sd=sd))
        c.add_partitions([Partition(values=[str(i)], dbName=db, tableName="plain", parameters={},
                                    sd=StorageDescriptor(cols=sd.cols, location=str(tmp / "plain" / f"n={i}"),
                                                         inputFormat=sd.inputFormat, outputFormat=sd.outputFormat,
                                                         serdeInfo=sd.serdeInfo))
                          for i in range(150)])
        c.create_database(Database(name=f"{db}_other", parameters={}))
        instants = c.list_instants(db, "hudi_t")
        partitions = c.get_hudi_partitions(db, "hudi_t")
        slices = {p: c.get_latest_file_slices(db, "hudi_t", [p]) for p in partitions}
    yield {"url": f"http://127.0.0.1:{http}", "db": db, "instants": instants, "slices": slices, "proc": proc}
    stop_process(proc)


def test_front_page_and_database(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(site["url"] + "/")
    names = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "a.database")]
    assert site["db"] in names and f"{site['db']}_other" in names and "default" in names
    browser.find_element(By.LINK_TEXT, site["db"]).click()
    assert browser.find_element(By.TAG_NAME, "h1").text == f"Database {site['db']}"
    assert sorted(a.text for a in browser.find_elements(By.CSS_SELECTOR, "a.table")) == ["hudi_t", "plain"]


def test_partitions_are_paged(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(f"{site['url']}/db/{site['db']}/plain")
    first = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".partition")]
    assert len(first) == 100 and "150 partition(s)" in browser.page_source
    browser.find_element(By.CSS_SELECTOR, "a[rel=next]").click()
    second = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".partition")]
    assert len(second) == 50 and not set(first) & set(second)
    assert set(first) | set(second) == {f"n={i}" for i in range(150)}
    assert not browser.find_elements(By.CSS_SELECTOR, "svg.timeline")  # not a Hudi table


def test_timeline_has_one_mark_per_instant(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(f"{site['url']}/db/{site['db']}/hudi_t")
    marks = browser.find_elements(By.CSS_SELECTOR, "svg.timeline rect.instant")
    assert sorted(m.get_attribute("data-ts") for m in marks) == sorted(i.timestamp for i in site["instants"])
    rows = browser.find_elements(By.CSS_SELECTOR, "table.instants tbody tr")
    assert len(rows) == len(site["instants"])
    operations = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "table.instants .operation")}
    assert operations and "-" not in operations  # each commit's operation (insert, upsert, ...)
    writes = [i for i in site["instants"] if i.action in ("commit", "deltacommit", "replacecommit")]
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.commit-sizes rect.commit")) == len(writes)
    png = browser.find_element(By.CSS_SELECTOR, "svg.timeline").screenshot_as_png
    width, height, pixels = decode_png(png)
    colours = {}
    for px in pixels:
        colours[px] = colours.get(px, 0) + 1
    white = colours.get((255, 255, 255), 0)
    assert width >= 900 and height >= 50
    assert white < 0.99 * len(pixels), "the timeline screenshot is blank"
    commit_blue = (0x2B, 0x6C, 0xB0)  # every instant of this table is a commit (svg.ACTION_COLOURS)
    assert all(m.get_attribute("data-action") == "commit" for m in marks)
    assert sum(n for c, n in colours.items() if all(abs(a - b) <= 8 for a, b in zip(c, commit_blue))) \
        >= 3 * 16 * len(marks) // 2, "the instants' marks are not in the screenshot"


def test_file_slices_of_a_partition(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(f"{site['url']}/db/{site['db']}/hudi_t")
    links = browser.find_elements(By.CSS_SELECTOR, "a.partition")
    assert sorted(a.text for a in links) == sorted(p or "(table)" for p in site["slices"])
    partition = sorted(site["slices"])[0]
    next(a for a in links if a.text == (partition or "(table)")).click()
    rows = browser.find_elements(By.CSS_SELECTOR, "table.slices tbody tr")
    want = site["slices"][partition]
    assert len(rows) == len(want)
    assert sorted(r.find_elements(By.TAG_NAME, "td")[0].text for r in rows) == sorted(s.fileId for s in want)


def test_server_page_and_missing_objects(browser, site):
    from selenium.webdriver.common.by import By

    browser.get(f"{site['url']}/server")  # readable sections; the raw text is /metrics'
    methods = [r.find_elements(By.TAG_NAME, "td")[0].text
               for r in browser.find_elements(By.CSS_SELECTOR, "table.calls tbody tr")]
    assert "list_instants" in methods and "ready" in browser.page_source
    assert browser.find_elements(By.CSS_SELECTOR, "table.hudi-metrics tbody tr")
    browser.get(f"{site['url']}/db/{site['db']}/no_such_table")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not found"


# --------------------------------------------------------------------------- PNG (no imaging library)


def decode_png(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """(width, height, RGB pixels) of an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    height = colour_type = 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour_type in (2, 6) and interlace == 0, (depth, colour_type, interlace)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = 4 if colour_type == 6 else 3
    raw, stride = zlib.decompress(idat), width * bpp
    prev, pixels, i = bytearray(stride), [], 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 0xFF
            elif f == 2:
                line[x] = (line[x] + b) & 0xFF
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        pixels += [tuple(line[x:x + 3]) for x in range(0, stride, bpp)]
        prev = line
    return width, height, pixels  # type: ignore[return-value]
