"""The CPU-steal reading the JAX engine benchmark prints beside its timings."""

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "python" / "scripts" / "bench_jax_env.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_jax_env", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_steal_percent(bench, monkeypatch):
    readings = iter([(100, 1000), (150, 1500)])
    monkeypatch.setattr(bench, "steal_reading", lambda: next(readings))
    before = bench.steal_reading()
    assert bench.steal_percent(before) == pytest.approx(10.0)
    assert bench.steal_percent(None) is None


def test_steal_reading_is_a_pair_of_tick_counts_or_none(bench):
    reading = bench.steal_reading()
    assert reading is None or (0 <= reading[0] <= reading[1])
