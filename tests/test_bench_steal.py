"""The CPU-steal reading the JAX engine benchmark prints beside its timings."""

import pytest
from script_loading import load_script


@pytest.fixture(scope="module")
def bench():
    return load_script("bench_jax_env")


def test_steal_percent(bench, monkeypatch):
    readings = iter([(100, 1000), (150, 1500)])
    monkeypatch.setattr(bench, "steal_reading", lambda: next(readings))
    before = bench.steal_reading()
    assert bench.steal_percent(before) == pytest.approx(10.0)
    assert bench.steal_percent(None) is None


def test_steal_reading_is_a_pair_of_tick_counts_or_none(bench):
    reading = bench.steal_reading()
    assert reading is None or (0 <= reading[0] <= reading[1])
