"""pipeline.write sets the session's shuffle partitions to the write's own count while it runs
(Spark's implicit shuffles of a write: counting, joins, distinct) and restores the user's value."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pipeline.config import WriteConfig
from pipeline.writer import SHUFFLE_PARTITIONS, _Job


class _Conf:
    def __init__(self, values):
        self.values = dict(values)
        self.history: list[str] = []

    def get(self, key, *default):
        return self.values.get(key, *default)

    def set(self, key, value):
        self.values[key] = value
        if key == SHUFFLE_PARTITIONS:
            self.history.append(value)


def _job(conf: _Conf, options=None) -> _Job:
    job = _Job.__new__(_Job)
    job.cfg = WriteConfig.from_options("upsert", options)
    job.spark = SimpleNamespace(conf=conf, sparkContext=SimpleNamespace(defaultParallelism=2))
    return job


def test_the_write_uses_its_own_count_and_restores_the_sessions():
    conf = _Conf({SHUFFLE_PARTITIONS: "200"})
    job = _job(conf)
    with job._session_shuffles() as use:
        assert conf.values[SHUFFLE_PARTITIONS] == "2"  # before the batch is counted: the least
        use(job._parallelism(50_000))
        assert conf.values[SHUFFLE_PARTITIONS] == "5"
        assert job._parallelism(50_000_000) == 200  # capped by the session's value, not the write's
    assert conf.values[SHUFFLE_PARTITIONS] == "200" and conf.history == ["2", "5", "200"]


def test_restored_after_a_failure_and_an_explicit_setting_wins():
    conf = _Conf({SHUFFLE_PARTITIONS: "64"})
    job = _job(conf, {"hoodie.upsert.shuffle.parallelism": "7"})
    with pytest.raises(RuntimeError), job._session_shuffles():
        assert conf.values[SHUFFLE_PARTITIONS] == "7"
        raise RuntimeError("write failed")
    assert conf.values[SHUFFLE_PARTITIONS] == "64"
