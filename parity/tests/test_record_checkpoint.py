"""Recording a trained checkpoint (issue 4): the policy loads the trainer's
parameter files through the viewer's loader, only plays allowed actions, is
reproducible, and its traces replay identically through both engines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from parity.__main__ import main
from parity.record import record
from parity.trace import read_trace

jax = pytest.importorskip("jax")

STEPS = 25


def tiny_params(path: Path, hidden_dim: int = 16, num_layers: int = 1) -> Path:
    """Freshly initialised parameters saved the way the trainer saves them (training.md §4.1)."""
    from hackmatrix.purejaxrl.checkpoint import save_params_npz
    from hackmatrix.purejaxrl.network import ActorCritic

    params = ActorCritic(hidden_dim=hidden_dim, num_layers=num_layers).init(
        jax.random.PRNGKey(1), np.zeros((1545,), np.float32)
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_params_npz(path, params)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("checkpoints") / "hackmatrix-jax-test-1"
    tiny_params(run / "params_2.npz", hidden_dim=16, num_layers=2)
    return run


@pytest.fixture(scope="module")
def jax_engine():
    from parity.engines import JaxAdapter

    engine = JaxAdapter()
    yield engine
    engine.close()


def masks_before_each_step(trace) -> list[list[bool]]:
    return [trace.start.mask] + [step.mask for step in trace.steps[:-1]]


def assert_only_allowed_actions(trace) -> None:
    assert trace.steps, "the policy recorded no step"
    for step, mask in zip(trace.steps, masks_before_each_step(trace)):
        assert mask[step.action], (
            f"step {step.step}: action {step.action} was not allowed by the mask"
        )


def record_on_jax(*options: str, seed: int, out: Path) -> int:
    """``python -m parity record --engine jax OPTIONS --seed SEED --out OUT``, in this process."""
    return main(["record", "--engine", "jax", *options, "--seed", str(seed), "--out", str(out)])


def test_cli_records_a_greedy_checkpoint_trace_on_jax(run_dir, tmp_path, capsys):
    out = tmp_path / "greedy.jsonl"
    options = ("--policy", "checkpoint", "--checkpoint", str(run_dir), "--max-steps", str(STEPS))
    assert record_on_jax(*options, seed=5, out=out) == 0
    # the run directory resolved to its file
    assert "params_2.npz (greedy)" in capsys.readouterr().out
    trace = read_trace(out)
    assert trace.seed == 5 and trace.source.startswith("jax")
    assert 1 <= len(trace.steps) <= STEPS
    assert_only_allowed_actions(trace)


def test_greedy_recording_is_deterministic(run_dir, jax_engine):
    from parity.policies import CheckpointPolicy

    first = record(jax_engine, CheckpointPolicy(run_dir / "params_2.npz"), seed=11, max_steps=STEPS)
    second = record(
        jax_engine, CheckpointPolicy(run_dir / "params_2.npz", seed=99), seed=11, max_steps=STEPS
    )
    assert_only_allowed_actions(first)
    assert first.lines() == second.lines()  # the policy seed does not matter when greedy


def test_sampled_recording_follows_the_policy_seed(run_dir, jax_engine):
    from parity.policies import CheckpointPolicy

    def sampled(seed):
        return record(
            jax_engine, CheckpointPolicy(run_dir, greedy=False, seed=seed), seed=3, max_steps=STEPS
        )

    first = sampled(4)
    assert_only_allowed_actions(first)
    assert sampled(4).lines() == first.lines()


@pytest.mark.parametrize(
    "name, message",
    [
        ("missing.npz", "no such file"),
        ("garbage.npz", "unreadable"),
        ("empty-run", "contains no final_params.npz"),
    ],
)
def test_bad_checkpoint_is_a_clear_error_naming_the_file(tmp_path, name, message):
    (tmp_path / "garbage.npz").write_bytes(b"not a zip archive")
    (tmp_path / "empty-run").mkdir()
    bad = tmp_path / name
    with pytest.raises(SystemExit) as raised:
        record_on_jax(
            "--policy", "checkpoint", "--checkpoint", str(bad), seed=1, out=tmp_path / "never.jsonl"
        )
    assert str(bad) in str(raised.value) and message in str(raised.value)
    assert not (tmp_path / "never.jsonl").exists()


def test_checkpoint_option_needs_the_checkpoint_policy(tmp_path, run_dir):
    for argv in (["--policy", "checkpoint"], ["--policy", "random", "--checkpoint", str(run_dir)]):
        with pytest.raises(SystemExit, match="--checkpoint PATH goes with --policy checkpoint"):
            record_on_jax(*argv, seed=1, out=tmp_path / "t.jsonl")


@pytest.mark.swift
def test_checkpoint_recordings_replay_identically_in_both_engines(run_dir, engines):
    from parity.policies import CheckpointPolicy
    from parity.replay import replay

    swift, jax_engine = engines
    for recorder in (swift, jax_engine):
        trace = record(recorder, CheckpointPolicy(run_dir), seed=8, max_steps=STEPS)
        assert_only_allowed_actions(trace)
        result = replay(trace, swift, jax_engine)
        assert result.ok, result.divergence.report()
        assert result.steps_run == len(trace.steps)
