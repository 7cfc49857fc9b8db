"""The parity proof: the committed corpus and a bounded fuzz slice replay
identically through the Swift CLI and the JAX engine; and the harness catches
a deliberately perturbed JAX result at the right step and field."""

from __future__ import annotations

import os

import pytest

from parity.corpus import TRACES
from parity.coverage import Coverage
from parity.engines import JaxAdapter
from parity.fuzz import FuzzConfig, fuzz
from parity.policies import RandomPolicy
from parity.record import record
from parity.replay import replay
from parity.scenarios import RESET_SCENARIOS, SCENARIOS
from parity.shrink import shrink
from parity.trace import find_traces, read_trace

pytestmark = pytest.mark.swift

CORPUS = find_traces([TRACES]) if TRACES.is_dir() else []


def _id(path):
    return str(path.relative_to(TRACES))


@pytest.mark.parametrize("path", CORPUS, ids=[_id(p) for p in CORPUS])
def test_corpus_trace_replays_identically_in_both_engines(path, engines):
    swift, jax_engine = engines
    result = replay(read_trace(path), swift, jax_engine)
    assert result.ok, result.divergence.report()


def test_corpus_contains_every_scenario():
    names = {p.name.split(".")[0] for p in (TRACES / "scenarios").iterdir()}
    missing = [s.name for s in SCENARIOS + RESET_SCENARIOS if s.name not in names]
    assert not missing, f"scenarios without a trace (run python -m parity corpus): {missing}"


def test_corpus_coverage_has_no_gaps(engines):
    _, jax_engine = engines
    coverage = Coverage()
    for path in CORPUS:
        trace = read_trace(path)

        def count(step, outcome, actions=trace.actions):
            if step < 0:
                coverage.add_start(outcome.obs)
            else:
                coverage.add_step(actions[step], outcome.obs, outcome.components, outcome.done)

        replay(trace, jax_engine, check_expectations=False, state_every=0, on_step=count)
    assert coverage.gaps() == [], coverage.table()


def test_bounded_fuzz_slice_finds_no_divergence(swift_binary, tmp_path):
    config = FuzzConfig(
        episodes=256, batch=64, max_steps=150, seed=2026, state_every=20, found_dir=tmp_path
    )
    result = fuzz(config, str(swift_binary))
    assert not result.divergences, "\n\n".join(d.report() for d in result.divergences)
    assert result.steps >= 10000
    assert result.coverage.actions[4] > 0 and result.coverage.enemies_seen["cryptog"] > 0


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("HACKMATRIX_SLOW"), reason="set HACKMATRIX_SLOW=1 for the long fuzz run"
)
def test_long_fuzz_run_finds_no_divergence(swift_binary, tmp_path):
    config = FuzzConfig(episodes=2048, batch=256, max_steps=300, seed=7, found_dir=tmp_path)
    result = fuzz(config, str(swift_binary))
    assert not result.divergences, "\n\n".join(d.report() for d in result.divergences)


# --- the harness must be able to fail on the real engines ------------------------------------


@pytest.fixture(scope="module")
def random_trace(engines):
    swift, _ = engines
    trace = record(swift, RandomPolicy(11), seed=11, max_steps=12)
    assert len(trace.steps) >= 6
    return trace


def _perturb_step(monkeypatch, at_step, mutate):
    """Makes JaxAdapter.step corrupt its result on its ``at_step``-th call after a start."""
    calls = {"n": 0}
    original_step, original_start = JaxAdapter.step, JaxAdapter.start

    def start(self, seed, state):
        calls["n"] = 0
        return original_start(self, seed, state)

    def step(self, action):
        outcome = original_step(self, action)
        if calls["n"] == at_step:
            mutate(outcome)
        calls["n"] += 1
        return outcome

    monkeypatch.setattr(JaxAdapter, "start", start)
    monkeypatch.setattr(JaxAdapter, "step", step)


def _kills(outcome):
    outcome.components["kills"] += 0.3


def _obs(outcome):
    outcome.obs[33 + 42 * 7 + 37] += 0.25  # grid[1,1,37] credits on the cell


def _mask(outcome):
    outcome.mask[14] = not outcome.mask[14]


@pytest.mark.parametrize(
    "mutate, field",
    [
        (_kills, "reward_components.kills"),
        (_obs, "obs grid[1,1,37] (credits on the cell) = flat[364]"),
        (_mask, "mask[14 (UNDO)]"),
    ],
)
def test_perturbed_jax_result_is_reported_at_its_step(
    engines, random_trace, monkeypatch, mutate, field
):
    swift, jax_engine = engines
    _perturb_step(monkeypatch, 4, mutate)
    divergence = replay(random_trace.without_expectations(), swift, jax_engine).divergence
    assert divergence is not None and divergence.step == 4
    assert divergence.fields[0] == field


def test_perturbed_jax_state_field_is_reported_by_path(engines, random_trace, monkeypatch):
    swift, jax_engine = engines
    original = JaxAdapter.get_state

    def get_state(self):
        state = original(self)
        if state["stepIndex"] == 5:
            state["player"]["score"] += 1
        return state

    monkeypatch.setattr(JaxAdapter, "get_state", get_state)
    divergence = replay(random_trace.without_expectations(), swift, jax_engine).divergence
    assert divergence.step == 4 and divergence.fields == ["state.player.score"]


def test_shrink_turns_a_late_divergence_into_a_one_step_setstate_trace(
    engines, random_trace, monkeypatch
):
    swift, jax_engine = engines
    original = JaxAdapter.step

    def step(self, action):  # diverges whenever stepIndex 5 -> 6 is played, from any start
        before = int(self._env.state_to_json(self.state)["stepIndex"])
        outcome = original(self, action)
        if before == 5:
            outcome.components["score_gain"] += 1.0
        return outcome

    monkeypatch.setattr(JaxAdapter, "step", step)
    trace = random_trace.without_expectations()
    check = lambda t: replay(t, swift, jax_engine).divergence  # noqa: E731
    divergence = check(trace)
    assert divergence.step == 5
    small = shrink(trace, divergence, check, swift)
    assert small.start_state is not None and small.start_state["stepIndex"] == 5
    assert len(small.steps) == 1 and check(small).fields == ["reward_components.score_gain"]


def test_fuzz_reports_a_perturbed_jax_batch(swift_binary, tmp_path, monkeypatch):
    from parity.fuzz import JaxBatch

    original, calls = JaxBatch.step, {"n": 0}

    def step(self, states, actions):
        out = original(self, states, actions)
        calls["n"] += 1
        if calls["n"] == 3:  # third lock-step tick: every live episode gets a phantom kill
            out[5][:, 3] += 0.3
        return out

    monkeypatch.setattr(JaxBatch, "step", step)
    config = FuzzConfig(
        episodes=64, batch=64, max_steps=10, seed=5, found_dir=tmp_path, max_divergences=1
    )
    result = fuzz(config, str(swift_binary))
    assert len(result.divergences) == 1
    divergence = result.divergences[0]
    assert divergence.step == 2 and divergence.fields[0] == "reward_components.kills"
