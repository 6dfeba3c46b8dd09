"""The archive's encodings in a process of their own (store/hudi/encoder_process.py): the same bytes
as in the server's process, an encoding's own error raised as there, and the server's process taking
over when the encoder process cannot start or dies."""

from __future__ import annotations

import os
import signal
import time

import pytest

from hudi_format import archived_timeline as A
from store.hudi import encoder_process
from store.hudi.encoder_process import EncoderProcess
from tests.unit.hudi_format.test_archive_pauses import commit_json

INSTANTS = [A.ArchivedInstant(ts, ts, "commit", commit_json(ts, 400), b"", b"")
            for ts in ("20240101000000001", "20240101000000002")]


@pytest.fixture
def encoder(monkeypatch):
    monkeypatch.setattr(encoder_process, "APART_BYTES", 1)
    enc = EncoderProcess()
    yield enc
    enc.close()


def _pid() -> int:
    return os.getpid()


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.parametrize("fn", [A.archive_log_block, A.lsm_file])
def test_the_same_bytes_in_the_encoder_process(encoder, fn):
    here = fn(INSTANTS)
    assert encoder.run(fn, (INSTANTS,), 10, lambda: pytest.fail("encoded in this process")) == here
    assert encoder.run(_pid, (), 10, lambda: 0) != os.getpid()  # (the process is kept for the next)


def test_small_input_stays_here(encoder, monkeypatch):
    monkeypatch.setattr(encoder_process, "APART_BYTES", 1000)
    assert encoder.run(_pid, (), 999, lambda: "here") == "here"
    assert encoder._proc is None  # nothing started


def _bad_metadata() -> None:
    raise ValueError("not a commit's metadata")


def test_an_encodings_own_error_is_raised_as_here(encoder):
    with pytest.raises(ValueError, match="not a commit's metadata"):
        encoder.run(_bad_metadata, (), 10, lambda: pytest.fail("encoded in this process"))
    assert encoder.run(_pid, (), 10, lambda: 0) not in (0, os.getpid())  # the process goes on


def test_a_dead_encoder_process_leaves_the_encoding_here_and_is_started_again(encoder, caplog):
    assert encoder.run(_die, (), 10, lambda: "here") == "here"
    assert "the encoder process failed (EOFError: the encoder process ended (exit status -9))" in caplog.text
    assert encoder.run(_pid, (), 10, lambda: 0) not in (0, os.getpid())  # a new process


def test_an_encoder_process_that_cannot_start_leaves_every_encoding_here(encoder, monkeypatch):
    def refuse(*_a, **_k):
        raise OSError("no processes left")

    monkeypatch.setattr(encoder_process.subprocess, "Popen", refuse)
    for _ in range(encoder_process._MAX_FAILURES + 2):
        assert encoder.run(_pid, (), 10, lambda: "here") == "here"
    assert encoder._failures == encoder_process._MAX_FAILURES  # then it stops trying


def _sleep() -> None:
    time.sleep(60)


def test_a_hung_encoding_is_ended_and_done_here(encoder, monkeypatch):
    monkeypatch.setattr(encoder_process, "TIMEOUT_S", 1.0)
    t0 = time.monotonic()
    assert encoder.run(_sleep, (), 10, lambda: "here") == "here"
    assert time.monotonic() - t0 < 30


def _prints() -> str:
    print("a line on standard output")
    return "answer"


def test_what_an_encoding_prints_does_not_reach_the_answers(encoder):
    assert encoder.run(_prints, (), 10, lambda: "here") == "answer"
    assert encoder.run(_pid, (), 10, lambda: 0) not in (0, os.getpid())
