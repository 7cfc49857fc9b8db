"""`export_params.py` / `checkpoint.export_policy`: a run's weights out as a small .npz with
its config beside it, readable by every tool that takes a policy."""

import json
import pickle
from pathlib import Path

import jax
import numpy as np
import pytest
from script_loading import load_script

from hackmatrix.pretrained import PRETRAINED_CONFIG, PRETRAINED_PARAMS
from hackmatrix.purejaxrl.checkpoint import FORMAT_VERSION, load_params, load_policy
from hackmatrix.purejaxrl.network import OBS_SIZE

export_params = load_script("export_params")


def _checkpoint(run_dir: Path, step: int) -> Path:
    """A checkpoint holding the shipped weights and config, as the trainer writes one (with a
    stand-in optimizer state and env batch: the export must leave them behind)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    payload = {
        "format_version": FORMAT_VERSION,
        "step": step,
        "timesteps": step * 32_768,
        "params": load_params(PRETRAINED_PARAMS),
        "opt_state": np.zeros(100_000, np.float32),
        "rng": np.zeros(2, np.uint32),
        "config": json.loads(PRETRAINED_CONFIG.read_text())["config"],
        "metrics": {},
        "last_logged_step": step,
    }
    path = run_dir / f"checkpoint_{step}.pkl"
    path.write_bytes(pickle.dumps(payload))
    return path


def test_a_run_directory_exports_its_latest_checkpoint(tmp_path, capsys):
    run = tmp_path / "checkpoints" / "duel-expert-s11"
    _checkpoint(run, 3)
    latest = _checkpoint(run, 9)
    out = tmp_path / "out" / "duel-expert-s11.npz"
    assert export_params.main([str(run), str(out)]) == 0
    assert "update 9, 294,912 env steps" in capsys.readouterr().out
    record = json.loads(out.with_suffix(".json").read_text())
    assert record["source"]["checkpoint"] == latest.name
    assert record["source"]["run"] == "duel-expert-s11" and "exported" in record["source"]
    assert out.stat().st_size < latest.stat().st_size  # the optimizer and env batch stay behind
    # What evaluate and the viewers read: the same network and weights, without the run.
    exported, shipped = load_policy(out), load_policy(PRETRAINED_PARAMS)
    assert exported.config == shipped.config
    same = jax.tree_util.tree_map(np.array_equal, exported.params, shipped.params)
    assert jax.tree_util.tree_leaves(same) and all(jax.tree_util.tree_leaves(same))


@pytest.mark.parametrize(
    ("source", "out", "message"),
    [
        ("missing", "w.npz", "no such file"),
        ("empty", "w.npz", "contains no checkpoint_"),
        ("notes.txt", "w.npz", "expected a checkpoint_*.pkl"),
        ("params.npz", "w.npz", "give a run directory or a checkpoint_N.pkl"),
    ],
)
def test_bad_sources_are_clear_errors_and_write_nothing(tmp_path, capsys, source, out, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "params.npz").write_bytes(b"")  # already an export: nothing to copy out
    assert export_params.main([str(tmp_path / source), str(tmp_path / out)]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / out).exists()


def test_the_output_must_be_an_npz(tmp_path, capsys):
    with pytest.raises(SystemExit):
        export_params.main([str(tmp_path), str(tmp_path / "w.pkl")])
    assert "must be a .npz" in capsys.readouterr().err


def _value_checkpoint(run_dir: Path, step: int, **config_changes) -> Path:
    """A checkpoint like `_checkpoint`'s whose every weight is moved (so its value differs
    from the shipped one's), its config changed by `config_changes`."""
    path = _checkpoint(run_dir, step)
    payload = pickle.loads(path.read_bytes())
    payload["params"] = jax.tree_util.tree_map(lambda x: x * 1.5 + 0.01, payload["params"])
    payload["config"] = {**payload["config"], **config_changes}
    path.write_bytes(pickle.dumps(payload))
    return path


def test_a_policy_ships_with_another_runs_value(tmp_path, monkeypatch, capsys):
    """`ship_policy.py --value-from` (experiments §74): one network whose logits are the
    first checkpoint's and whose value is the second's, its record naming both."""
    import hackmatrix.pretrained as pretrained

    ship_policy = load_script("ship_policy")
    prior = _checkpoint(tmp_path / "runs" / "prior-run", 190)
    value = _value_checkpoint(tmp_path / "runs" / "value-run", 180)
    out = tmp_path / "package" / "policy.npz"
    out.parent.mkdir()
    monkeypatch.setattr(pretrained, "PRETRAINED_PARAMS", out)
    monkeypatch.setattr(pretrained, "PRETRAINED_CONFIG", out.with_suffix(".json"))
    assert ship_policy.main([str(prior), "--value-from", str(value)]) == 0
    assert "value-run/checkpoint_180.pkl's (update 180)" in capsys.readouterr().out
    record = json.loads(out.with_suffix(".json").read_text())
    assert record["source"]["run"] == "prior-run" and record["config"]["value_trunk"] == "separate"
    assert record["value_source"]["run"] == "value-run" and record["value_source"]["update"] == 180
    shipped, first, second = load_policy(out), load_policy(prior), load_policy(value)
    obs = np.linspace(0, 1, 2 * OBS_SIZE, dtype=np.float32).reshape(2, OBS_SIZE)
    logits, merged_value = shipped.network.apply(shipped.params, obs)
    np.testing.assert_array_equal(logits, first.network.apply(first.params, obs)[0])
    np.testing.assert_array_equal(merged_value, second.network.apply(second.params, obs)[1])
    assert not np.array_equal(merged_value, first.network.apply(first.params, obs)[1])


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"gamma": 0.995}, "gamma 0.99 against 0.995"), ({"program_bonus": 2.0}, "program_bonus")],
)
def test_a_value_that_means_something_else_is_refused(tmp_path, changes, message):
    from hackmatrix.purejaxrl.checkpoint import CheckpointError, export_policy

    prior = _checkpoint(tmp_path / "prior-run", 190)
    value = _value_checkpoint(tmp_path / "value-run", 180, **changes)
    out = tmp_path / "policy.npz"
    with pytest.raises(CheckpointError, match=message):
        export_policy(prior, out, value_checkpoint=value)
    assert not out.exists()
