"""Self-tests of the harness with a fake engine: it must be able to fail, and
report the right step and field when it does."""

from __future__ import annotations

import json

import numpy as np
import pytest

from parity.names import flat_index_name
from parity.policies import RandomPolicy
from parity.record import record
from parity.replay import START, replay
from parity.tests.fake_engine import FakeEngine, Perturbed
from parity.trace import TraceFormatError, obs_digest, parse_lines, read_trace, write_trace


def recorded_trace(seed=7, steps=12):
    return record(FakeEngine("swift"), RandomPolicy(seed), seed=seed, max_steps=steps, note="fake")


def test_recorded_trace_round_trips_through_disk(tmp_path):
    trace = recorded_trace()
    for name in ("t.jsonl", "t.jsonl.gz"):
        again = read_trace(write_trace(trace, tmp_path / name))
        assert again.lines() == trace.lines()


def test_identical_engines_agree_and_match_recording():
    trace = recorded_trace()
    result = replay(trace, FakeEngine("swift"), FakeEngine("jax"))
    assert result.ok, result.divergence and result.divergence.report()
    assert result.steps_run == len(trace.steps)


def perturbed_replay(at_step, **mutation):
    trace = recorded_trace(steps=12)
    right = Perturbed(FakeEngine("jax"), at_step, **mutation)
    return replay(trace.without_expectations(), FakeEngine("swift"), right)


def test_perturbed_reward_component_is_reported_at_its_step():
    def bump(outcome):
        outcome.components["kills"] += 0.3
        outcome.reward += 0.3

    divergence = perturbed_replay(5, outcome=bump).divergence
    assert divergence.step == 5
    assert divergence.fields == ["reward_components.kills", "reward"]


def test_small_component_error_within_tolerance_is_accepted():
    def nudge(outcome):
        outcome.components["kills"] += 5e-5

    assert perturbed_replay(3, outcome=nudge).ok


def test_perturbed_observation_entry_is_named():
    def flip(outcome):
        outcome.obs[33 + 42 * (6 * 2 + 3) + 10] = 0.5

    divergence = perturbed_replay(4, outcome=flip).divergence
    assert divergence.step == 4
    assert divergence.fields == ["obs grid[2,3,10] (block points) = flat[673]"]
    assert divergence.differences[0].right == 0.5


def test_perturbed_mask_bit_and_done_are_reported():
    def corrupt(outcome):
        outcome.mask[21] = not outcome.mask[21]
        outcome.done = not outcome.done

    divergence = perturbed_replay(2, outcome=corrupt).divergence
    assert divergence.step == 2
    assert divergence.fields == ["mask[21 (D_BOM)]", "done"]


def test_perturbed_state_field_is_reported_by_json_path():
    def corrupt(state):
        state["credits"] += 1

    divergence = perturbed_replay(6, state=corrupt).divergence
    assert divergence.step == 6
    assert divergence.fields == ["state.credits"]
    report = divergence.report()
    assert "state before the step:" in report and "--step 6" in report


def test_rejected_action_is_a_divergence():
    trace = recorded_trace(steps=5).without_expectations()
    trace.steps[2].action = 27  # the fake engine never allows action 27
    divergence = replay(trace, FakeEngine("swift"), FakeEngine("jax")).divergence
    assert divergence.step == 2 and divergence.fields == ["action accepted"]


def test_recorded_expectation_mismatch_is_reported():
    trace = recorded_trace(steps=8)
    trace.steps[3].reward_components["victory"] = 500.0
    divergence = replay(trace, FakeEngine("swift")).divergence
    assert (divergence.step, divergence.left_name) == (3, "recorded")
    assert divergence.fields == ["reward_components.victory"]


def test_start_digest_mismatch_is_a_start_divergence():
    trace = recorded_trace(steps=3)
    trace.start.obs_digest = obs_digest(np.ones(1545, np.float32))
    assert replay(trace, FakeEngine("swift")).divergence.step == START


def test_total_tolerance_has_a_relative_term():
    from parity.compare import total_within

    assert total_within(1600.14, 1600.14 + 1.5e-4)
    assert not total_within(1.0, 1.0 + 2e-4)


def test_digest_treats_negative_zero_as_zero():
    values = np.zeros(1545, np.float32)
    negative = values.copy()
    negative[7] = -0.0
    assert obs_digest(values) == obs_digest(negative)
    with pytest.raises(ValueError):
        obs_digest(np.zeros(10))


def test_flat_names_follow_observation_layout():
    assert flat_index_name(2) == "player[2] (health)"
    assert flat_index_name(23) == "programs[13] (owns SHOW)"
    assert flat_index_name(1543) == "grid[5,5,40] (exit)"
    assert flat_index_name(846) == "grid[3,1,15] (block holds program WARP)"


@pytest.mark.parametrize(
    "lines, message",
    [
        ([], "empty trace"),
        ([{"format": "other", "version": 1, "seed": 1, "source": "swift"}], "format"),
        ([{"format": "hackmatrix-trace", "version": 2, "seed": 1, "source": "swift"}], "version"),
        (
            [{"format": "hackmatrix-trace", "version": 1, "seed": None, "source": "swift"}],
            "no setState",
        ),
        ([{"format": "hackmatrix-trace", "version": 1, "seed": 1, "source": "robot"}], "source"),
        (
            [
                {"format": "hackmatrix-trace", "version": 1, "seed": 1, "source": "swift"},
                {"type": "step", "step": 1, "action": 0},
            ],
            "without gaps",
        ),
        (
            [
                {"format": "hackmatrix-trace", "version": 1, "seed": 1, "source": "swift"},
                {"type": "step", "step": 0, "action": 28},
            ],
            "0..27",
        ),
        (
            [
                {"format": "hackmatrix-trace", "version": 1, "seed": 1, "source": "swift"},
                {"type": "step", "step": 0, "action": 0, "done": True},
                {"type": "step", "step": 1, "action": 0},
            ],
            "done: true",
        ),
        (
            [
                {"format": "hackmatrix-trace", "version": 1, "seed": 1, "source": "swift"},
                {"type": "step", "step": 0, "action": 0, "mask": [True] * 27},
            ],
            "28 booleans",
        ),
        (
            [
                {"format": "hackmatrix-trace", "version": 1, "seed": 1, "source": "swift"},
                {"type": "step", "step": 0, "action": 0, "reward_components": {"kills": 0}},
            ],
            "15 keys",
        ),
        (
            [
                {"format": "hackmatrix-trace", "version": 1, "seed": 3, "source": "swift"},
                {"type": "setState", "state": {"seed": 4}},
            ],
            "equal state.seed",
        ),
    ],
)
def test_malformed_traces_are_rejected_with_a_clear_message(lines, message):
    with pytest.raises(TraceFormatError, match=message):
        parse_lines(json.loads(json.dumps(lines)), "bad.jsonl")


def test_bad_json_line_names_the_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"format": "hackmatrix-trace", "version": 1, "seed": 1, "source": "swift"}\nnot json\n'
    )
    with pytest.raises(TraceFormatError, match=r"bad.jsonl:2: not valid JSON"):
        read_trace(path)


def test_shrink_falls_back_to_removing_actions_when_a_setstate_start_does_not_reproduce():
    from parity.replay import replay as run
    from parity.shrink import shrink

    # The perturbation counts steps since the start, so it is not a property of any state:
    # a one-step setState trace cannot reproduce it and the shrinker must cut actions instead.
    trace = recorded_trace(seed=8, steps=14).without_expectations()
    assert len(trace.steps) == 14

    def check(t):
        def corrupt(outcome):
            outcome.components["kills"] = 0.3

        return run(
            t, FakeEngine("swift"), Perturbed(FakeEngine("jax"), 9, outcome=corrupt)
        ).divergence

    divergence = check(trace)
    assert divergence.step == 9
    small = shrink(trace, divergence, check, FakeEngine("swift"))
    assert small.start_state is None and len(small.steps) == 10
    assert check(small).step == 9
