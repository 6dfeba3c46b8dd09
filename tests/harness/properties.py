"""Hypothesis profiles of the property tests (tests/conftest.py loads one; docs/testing.md).

* ``ci`` (the default): a new random seed every run, so a run explores examples no earlier run
  tried; a failure prints the seed (``--hypothesis-seed=N`` replays it) and its example's blob.
* ``thorough`` (``HYPOTHESIS_PROFILE=thorough``): the same, with several times the examples, and
  the benchmark smoke tests at larger sizes and more iterations (:func:`thorough`).
* ``replay`` (``HYPOTHESIS_PROFILE=replay``): derandomized, the fixed examples of earlier releases.

Tests say how many examples each profile runs with :func:`examples`; every other setting comes
from the profile.
"""

from __future__ import annotations

import os
import random
import zlib

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")

_COMMON = dict(deadline=None, database=None, print_blob=True, suppress_health_check=list(HealthCheck))
settings.register_profile("ci", derandomize=False, **_COMMON)
settings.register_profile("thorough", derandomize=False, **_COMMON)
settings.register_profile("replay", derandomize=True, **_COMMON)


def load() -> None:
    if PROFILE not in ("ci", "thorough", "replay"):
        raise ValueError(f"HYPOTHESIS_PROFILE={PROFILE!r}: expected ci, thorough or replay")
    settings.load_profile(PROFILE)


def thorough() -> bool:
    """The thorough run (``HYPOTHESIS_PROFILE=thorough``): the benchmark smoke tests run bigger."""
    return PROFILE == "thorough"


def examples(ci: int, thorough: int) -> int:
    """How many examples a property test runs under the loaded profile (``replay`` as ``thorough``)."""
    return ci if PROFILE == "ci" else thorough


def rotating(cases: list, ci: int) -> list:
    """The cases a test runs: under ``ci``, ``ci`` of them in a row from a start drawn by the run
    (:func:`drawn`), so that runs go through every case over time; under ``thorough`` and
    ``replay`` all of them."""
    if PROFILE != "ci" or ci >= len(cases):
        return list(cases)
    start = cases.index(drawn(cases))
    return [cases[(start + i) % len(cases)] for i in range(ci)]


def drawn(options: list, key: str = ""):
    """One of `options`, drawn by the run: from pytest-xdist's run id (the same in every worker,
    whose collections must agree) and `key` (which spreads the tests of one run over the options);
    without xdist from a random id of the process."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or _LOCAL_RUN
    return options[zlib.crc32((run + key).encode()) % len(options)]


_LOCAL_RUN = f"{random.getrandbits(64):x}"  # without xdist: one draw per process
