"""A bounded wire fuzz run (issue 19): a few thousand mutated Thrift messages (bit flips,
truncations, bogus lengths, random types, odd names and message types, deep nesting, huge
containers, splices; bench/wire_fuzz.py), each on its own connection to a real server process.
After every batch the server answers a normal call on a new connection and its resident memory
stays bounded; every message whose header can be read is answered (oneway ones are not); nothing
the clients sent makes the server log a traceback. The longer campaign: `python -m bench.fuzz`.
"""

from __future__ import annotations

import pytest

from bench.wire_fuzz import campaign, rss_kb
from tests.harness import ServerStartError, start_checked_server

MESSAGES = 3_000
BATCH = 500
RSS_GROWTH_KB = 150 * 1024  # generous: a run grows the server by a few MB


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    try:
        srv = start_checked_server(tmp_path_factory.mktemp("fuzz-wire"))
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    yield srv
    srv.stop()


def test_mutated_messages_are_answered_or_refused_cleanly(server):
    pid = server.proc.pid
    limit = rss_kb(pid) + RSS_GROWTH_KB
    report = None
    for report in campaign(server.port, [pid], MESSAGES, seed=19, batch=BATCH, rss_limit_kb=limit):
        assert not report.violations, "\n".join(report.violations[:20])
    assert report is not None and report.sent == MESSAGES
    summary = report.summary()
    # the run exercised both sides of the rule
    assert summary["outcomes"].get("answered", 0) > MESSAGES // 2, summary
    assert summary["outcomes"].get("closed-unreadable", 0) > 0, summary
    assert summary["outcomes"].get("oneway-silent", 0) > 0, summary
    log = server.log_path.read_text(errors="replace")
    assert "Traceback" not in log, server.log()
    server.assert_healthy()
