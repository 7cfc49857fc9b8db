"""Run naming and resume resolution (training.md §4.4, §4.5)."""

import datetime
import hashlib
import os

import pytest

from hackmatrix import run_names
from hackmatrix.purejaxrl.checkpoint import (
    CheckpointError,
    latest_checkpoint,
    next_run_name,
    prune_checkpoints,
    resolve_params_path,
    resolve_resume,
)
from hackmatrix.purejaxrl.config import RESUME_LATEST
from hackmatrix.run_names import wandb_run_id

DAY = datetime.date(2026, 2, 5)


def test_run_names_count_up_per_day(tmp_path):
    assert next_run_name(tmp_path, today=DAY) == "hackmatrix-jax-feb05-26-1"
    (tmp_path / "hackmatrix-jax-feb05-26-1").mkdir()
    (tmp_path / "hackmatrix-jax-feb05-26-7-bignet").mkdir()
    (tmp_path / "hackmatrix-jax-feb04-26-9").mkdir()
    assert next_run_name(tmp_path, today=DAY) == "hackmatrix-jax-feb05-26-8"
    assert next_run_name(tmp_path, "BigNet", today=DAY) == "hackmatrix-jax-feb05-26-8-bignet"


def test_jax_run_names_count_files_too_and_sb3_names_only_directories(tmp_path):
    (tmp_path / "hackmatrix-jax-feb05-26-4-notes").write_text("")
    (tmp_path / "hackmatrix-feb05-26-4-notes").write_text("")
    assert next_run_name(tmp_path, today=DAY) == "hackmatrix-jax-feb05-26-5"
    assert run_names.next_run_name(tmp_path, "X", DAY) == "hackmatrix-feb05-26-1-X"


def test_wandb_id_is_md5_prefix():
    assert wandb_run_id("run") == hashlib.md5(b"run").hexdigest()[:8]


def make_run(root, name, steps):
    run = root / name
    run.mkdir()
    for step in steps:
        (run / f"checkpoint_{step}.pkl").write_bytes(b"x")
    return run


def test_resume_targets_resolve(tmp_path):
    old = make_run(tmp_path, "old", [5])
    new = make_run(tmp_path, "new", [2, 10, 9])
    assert latest_checkpoint(new).name == "checkpoint_10.pkl"  # numeric, not lexical
    assert resolve_resume(str(new), None, tmp_path, RESUME_LATEST) == new / "checkpoint_10.pkl"
    assert resolve_resume("old", None, tmp_path, RESUME_LATEST) == old / "checkpoint_5.pkl"
    path = old / "checkpoint_5.pkl"
    assert resolve_resume(str(path), None, tmp_path, RESUME_LATEST) == path
    assert resolve_resume(None, wandb_run_id("old"), tmp_path, RESUME_LATEST) == path
    assert resolve_resume(None, "new", tmp_path, RESUME_LATEST).parent == new
    assert resolve_resume(None, None, tmp_path, RESUME_LATEST) is None
    os.utime(old, (1e10, 1e10))
    assert resolve_resume(RESUME_LATEST, None, tmp_path, RESUME_LATEST).parent == old


@pytest.mark.parametrize("value, run", [("missing", None), (None, "deadbeef")])
def test_unknown_resume_targets_are_errors(tmp_path, value, run):
    make_run(tmp_path, "a", [1])
    with pytest.raises(CheckpointError):
        resolve_resume(value, run, tmp_path, RESUME_LATEST)


def test_empty_run_directory_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="no checkpoint"):
        resolve_resume(str(tmp_path / "empty"), None, tmp_path, RESUME_LATEST)


def test_a_run_directory_means_its_latest_checkpoint_or_for_watching_its_last_weights(tmp_path):
    run = make_run(tmp_path, "run", [3, 12])
    assert resolve_params_path(run) == run / "checkpoint_12.pkl"
    assert resolve_params_path(run, prefer_final_params=True) == run / "checkpoint_12.pkl"
    for step in (4, 20):
        (run / f"params_{step}.npz").write_bytes(b"x")
    assert resolve_params_path(run) == run / "checkpoint_12.pkl"
    assert resolve_params_path(run, prefer_final_params=True) == run / "params_20.npz"
    (run / "final_params.npz").write_bytes(b"x")
    assert resolve_params_path(run, prefer_final_params=True) == run / "final_params.npz"
    assert resolve_params_path(run / "params_4.npz") == run / "params_4.npz"


@pytest.mark.parametrize("prefer_final_params", [False, True])
def test_unusable_parameter_paths_are_clear_errors(tmp_path, prefer_final_params):
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("hello")
    for name, message in [
        ("empty", "contains no"),
        ("missing.npz", "no such file"),
        ("notes.txt", "expected a checkpoint_"),
    ]:
        with pytest.raises(CheckpointError, match=message):
            resolve_params_path(tmp_path / name, prefer_final_params=prefer_final_params)


def _write_checkpoints(run_dir, steps_in_write_order):
    """Empty checkpoint and params files, written one second apart in the given order."""
    run_dir.mkdir()
    for second, step in enumerate(steps_in_write_order):
        for name in (f"checkpoint_{step}.pkl", f"params_{step}.npz"):
            (run_dir / name).write_bytes(b"x")
            os.utime(run_dir / name, ns=(0, (1_000 + second) * 1_000_000_000))


def test_pruning_keeps_the_newest_written_checkpoints_and_every_params_file(tmp_path):
    run = tmp_path / "run"
    _write_checkpoints(run, [10, 20, 30, 40])
    removed = prune_checkpoints(run, 2)
    assert sorted(p.name for p in removed) == ["checkpoint_10.pkl", "checkpoint_20.pkl"]
    assert sorted(p.name for p in run.glob("checkpoint_*")) == [
        "checkpoint_30.pkl",
        "checkpoint_40.pkl",
    ]
    assert len(list(run.glob("params_*.npz"))) == 4
    assert prune_checkpoints(run, 2) == []  # nothing more to do


def test_pruning_after_a_resume_from_an_earlier_checkpoint_drops_the_abandoned_branch(tmp_path):
    # Written 10, 20, 30 (30 abandoned), then a resume from 10 wrote 15 and 25:
    # the newest two by write order are 15 and 25, though 30 has the higher step.
    run = tmp_path / "run"
    _write_checkpoints(run, [10, 20, 30, 15, 25])
    prune_checkpoints(run, 2)
    assert sorted(p.name for p in run.glob("checkpoint_*")) == [
        "checkpoint_15.pkl",
        "checkpoint_25.pkl",
    ]


def test_pruning_with_zero_keeps_everything_and_a_negative_count_is_refused(tmp_path):
    run = tmp_path / "run"
    _write_checkpoints(run, [1, 2, 3])
    assert prune_checkpoints(run, 0) == []
    assert len(list(run.glob("checkpoint_*"))) == 3
    with pytest.raises(ValueError, match="0 or more"):
        prune_checkpoints(run, -1)
