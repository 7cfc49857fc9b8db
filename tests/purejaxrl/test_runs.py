"""End-to-end trainer runs on CPU: files, resume, checkpoint safety, multi-device.

All runs share one tiny config so the persistent compilation cache serves the
repeated compiles.
"""

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import (
    REPO,
    TINY_BATCH,
    TINY_FLAGS,
    game_module_name,
    standin_run,
    subprocess_env,
)

from hackmatrix.purejaxrl import cli
from hackmatrix.purejaxrl.checkpoint import (
    CheckpointError,
    atomic_write,
    latest_checkpoint,
    load_checkpoint,
    load_params,
)
from hackmatrix.purejaxrl.metrics import SUPERSEDED_METRICS, set_aside_records_after
from hackmatrix.run_names import wandb_run_id

TINY = TINY_FLAGS
BATCH = TINY_BATCH


def train(tmp_path, *extra, run_name="run", episode_gif=False):
    """One in-process run. The checkpoint GIF is off unless a test asks for it: playing and
    rendering an episode at every save would only slow these runs down."""
    argv = [*TINY, "--checkpoint-dir", str(tmp_path), "--env-module", game_module_name(), *extra]
    if not episode_gif:
        argv.append("--no-episode-gif")
    if "--resume" not in extra:
        argv += ["--run-name", run_name]
    return cli.main(argv)


def read_metrics(run_dir):
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("ckpt")
    assert train(root, "--total-timesteps", str(6 * BATCH)) == 0
    return root / "run"


def test_run_writes_metrics_checkpoints_and_params(finished_run):
    records = read_metrics(finished_run)
    assert [r["update"] for r in records] == [2, 4, 6]
    rewards = {k for k in records[-1] if k.startswith("reward/")}
    assert len(rewards) == 15
    for key in (
        "train/approx_kl",
        "train/clip_frac",
        "train/entropy",
        "train/steps_per_second",
        "train/timesteps",
        "actions/move_frac",
        "stats/empty_mask_steps",
        "key/mean_episode_return",
    ):
        assert key in records[-1], key
    assert records[-1]["train/timesteps"] == 6 * BATCH
    shares = sum(records[-1][f"actions/{k}_frac"] for k in ("move", "siphon", "program"))
    assert shares == pytest.approx(1.0)
    for name in ("checkpoint_6.pkl", "params_6.npz", "final_params.npz", "checkpoint_2.pkl"):
        assert (finished_run / name).is_file(), name
    assert not list(finished_run.glob("episode_*"))  # train() passes --no-episode-gif
    payload = load_checkpoint(finished_run / "checkpoint_6.pkl")
    assert payload["step"] == 6 and payload["metrics"]["train/update_step"] == 6
    assert payload["config"]["num_envs"] == 8 and payload["obs_size"] == 1545
    assert len(payload["metrics_history"]) == 3
    params = load_params(finished_run / "params_6.npz")
    assert params["params"]["Dense_0"]["kernel"].shape == (1545, 32)


def test_fresh_run_refuses_an_existing_run_directory(finished_run, capsys):
    assert train(finished_run.parent, "--total-timesteps", str(6 * BATCH)) == 2
    assert "already exists" in capsys.readouterr().err


def test_missing_resume_path_fails_before_compiling(tmp_path, capsys):
    assert train(tmp_path, "--resume", str(tmp_path / "nope.pkl")) == 2
    assert "nope.pkl" in capsys.readouterr().err


def test_resume_matches_an_uninterrupted_run(finished_run, tmp_path):
    assert train(tmp_path, "--total-timesteps", str(4 * BATCH)) == 0
    assert (
        train(tmp_path, "--resume", str(tmp_path / "run"), "--total-timesteps", str(6 * BATCH)) == 0
    )
    resumed = read_metrics(tmp_path / "run")
    assert [r["update"] for r in resumed] == [2, 4, 6]  # the step count continues
    reference = read_metrics(finished_run)[-1]
    for key in ("train/total_loss", "train/approx_kl", "train/mean_reward", "train/entropy"):
        assert resumed[-1][key] == pytest.approx(reference[key], rel=1e-5, abs=1e-7), key


def test_resume_from_an_earlier_checkpoint_sets_the_abandoned_records_aside(
    finished_run, tmp_path, capsys
):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    before = read_metrics(run)
    resume = ["--resume", str(run / "checkpoint_4.pkl"), "--total-timesteps", str(6 * BATCH)]
    assert train(tmp_path, *resume) == 0
    assert [r["update"] for r in read_metrics(run)] == [2, 4, 6]  # one timeline
    aside = (run / SUPERSEDED_METRICS).read_text().splitlines()
    assert [json.loads(line) for line in aside] == [r for r in before if r["update"] > 4]
    assert "1 records logged after update 4" in capsys.readouterr().out


def test_a_run_records_its_software_and_a_resume_elsewhere_says_so(finished_run, tmp_path, capsys):
    from hackmatrix.purejaxrl.device import describe_software, provenance_changes

    software = describe_software()
    stored = load_checkpoint(finished_run / "checkpoint_4.pkl")["config"]["provenance"]
    assert stored == software and stored["jax"] != "absent" and stored["cpu"]
    # The checkpoint as if trained with another JAX release: the resume goes on, noted.
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    payload = load_checkpoint(run / "checkpoint_4.pkl")
    payload["config"]["provenance"]["jax"] = "0.0.1"
    atomic_write(run / "checkpoint_4.pkl", lambda f: pickle.dump(payload, f))
    resume = ["--resume", str(run / "checkpoint_4.pkl"), "--total-timesteps", str(6 * BATCH)]
    assert train(tmp_path, *resume) == 0
    out = capsys.readouterr().out
    assert f"Software: python {software['python']}, jax {software['jax']}" in out
    assert f"other software or hardware (jax: 0.0.1 -> {software['jax']})" in out
    # Checkpoints from before the record, and an unchanged one, say nothing.
    assert provenance_changes(None, software) == provenance_changes(software, software) == []


def test_setting_aside_keeps_every_line_somewhere(tmp_path):
    path = tmp_path / "metrics.jsonl"
    lines = ['{"update": 2, "a": 1}', '{"update": 5, "a": 2}', "{torn", '{"update": 3}']
    path.write_text("\n".join(lines))  # no newline after the last record
    assert set_aside_records_after(path, 3) == 1
    assert path.read_text().splitlines() == [lines[0], lines[2], lines[3]]
    assert (tmp_path / SUPERSEDED_METRICS).read_text() == lines[1] + "\n"
    assert set_aside_records_after(path, 3) == 0  # nothing left past update 3
    assert set_aside_records_after(tmp_path / "missing.jsonl", 0) == 0


def test_resume_with_nothing_left_exits_cleanly(finished_run, capsys):
    assert train(finished_run.parent, "--resume", "run", "--total-timesteps", str(6 * BATCH)) == 0
    assert "Nothing left" in capsys.readouterr().out


def test_truncated_checkpoint_gives_a_clear_error(finished_run, tmp_path):
    data = (finished_run / "checkpoint_6.pkl").read_bytes()
    broken = tmp_path / "checkpoint_9.pkl"
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="checkpoint_9.pkl.*truncated"):
        load_checkpoint(broken)


def test_mismatched_checkpoint_names_file_and_shape(finished_run, tmp_path, capsys):
    run = tmp_path / "other"
    run.mkdir()
    payload = load_checkpoint(finished_run / "checkpoint_6.pkl")
    payload["params"]["params"]["Dense_0"]["kernel"] = np.zeros((1545, 7), np.float32)
    (run / "checkpoint_6.pkl").write_bytes(pickle.dumps(payload))
    assert train(tmp_path, "--resume", str(run), "--total-timesteps", str(8 * BATCH)) == 2
    err = capsys.readouterr().err
    assert "checkpoint_6.pkl" in err and "(1545, 7)" in err and "(1545, 32)" in err


def test_interrupted_atomic_write_keeps_the_previous_file(tmp_path):
    target = tmp_path / "checkpoint_1.pkl"
    atomic_write(target, lambda f: pickle.dump({"v": 1}, f))

    def half_then_crash(f):
        f.write(b"\x80\x05partial")
        raise OSError("disk vanished")

    with pytest.raises(OSError):
        atomic_write(target, half_then_crash)
    assert pickle.loads(target.read_bytes()) == {"v": 1}
    assert os.listdir(tmp_path) == ["checkpoint_1.pkl"]


KILLER = """
import pickle, sys, numpy as np
from hackmatrix.purejaxrl.checkpoint import atomic_write
big = {"params": np.random.rand(4_000_000)}
print("ready", flush=True)
i = 0
while True:
    i += 1
    big["step"] = i
    atomic_write(sys.argv[1], lambda f: pickle.dump(big, f))
"""


def test_kill_9_during_saves_leaves_a_loadable_checkpoint(tmp_path):
    target = tmp_path / "checkpoint.pkl"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLER, str(target)], stdout=subprocess.PIPE, env=subprocess_env()
    )
    try:
        assert proc.stdout.readline().strip() == b"ready"
        deadline = time.time() + 30
        while not target.exists() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.7)  # several 32 MB writes are in flight by now
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    payload = pickle.loads(target.read_bytes())
    assert payload["step"] >= 1 and payload["params"].shape == (4_000_000,)


def test_keep_checkpoints_leaves_the_newest_and_every_params_file(tmp_path, capsys):
    assert train(tmp_path, "--total-timesteps", str(6 * BATCH), "--keep-checkpoints", "2") == 0
    out = capsys.readouterr().out
    run = tmp_path / "run"
    assert sorted(p.name for p in run.glob("checkpoint_*.pkl")) == [
        "checkpoint_4.pkl",
        "checkpoint_6.pkl",
    ]
    assert sorted(p.name for p in run.glob("params_*.npz")) == [
        "params_2.npz",
        "params_4.npz",
        "params_6.npz",
    ]
    assert "keeping the newest 2" in out and "Removed checkpoint_2.pkl (--keep-checkpoints)" in out


def test_keep_checkpoints_must_be_a_whole_number_of_zero_or_more(tmp_path, capsys):
    for bad in ("-1", "two"):
        with pytest.raises(SystemExit):
            train(tmp_path, "--total-timesteps", str(2 * BATCH), "--keep-checkpoints", bad)
        assert "--keep-checkpoints" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_sigterm_saves_and_exits_cleanly(tmp_path):
    cmd = [
        sys.executable,
        str(REPO / "python/scripts/train_purejaxrl.py"),
        *TINY,
        "--total-timesteps",
        str(2000 * BATCH),
        "--checkpoint-dir",
        str(tmp_path),
        "--run-name",
        "term",
        "--env-module",
        "standin_env",  # the signal handling is the CLI's, whatever the game
        "--save-interval",
        "100000",
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=subprocess_env(), text=True
    )
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("[Update"):
            proc.send_signal(signal.SIGTERM)
            break
    out = "".join(lines) + proc.communicate(timeout=120)[0]
    assert proc.returncode == 0, out
    assert "SIGTERM" in out and (tmp_path / "term" / "interrupted_params.npz").is_file()
    saved = sorted(p.name for p in (tmp_path / "term").glob("checkpoint_*.pkl"))
    assert len(saved) == 1


MULTI = """
import json, sys, jax
from hackmatrix.purejaxrl.config import TrainConfig
from hackmatrix.purejaxrl.train import make_train, make_mesh
import importlib
env = importlib.import_module(sys.argv[1])
config = TrainConfig(num_envs=8, num_steps=16, hidden_dim=32, log_interval=2,
                     num_minibatches=2, update_epochs=2)
trainer = make_train(config, env, mesh=make_mesh(jax.devices()))
runner = trainer.init(jax.random.PRNGKey(7))
runner, metrics = trainer.train_chunk(runner, 2)
params = jax.tree_util.tree_leaves(runner.train_state.params)
print(json.dumps({"devices": jax.device_count(),
                  "metrics": {k: v.tolist() for k, v in jax.device_get(metrics).items()},
                  "param_sums": [float(abs(p).sum()) for p in params]}))
"""


def run_multi(devices, game):
    flags = f"--xla_force_host_platform_device_count={devices}"
    out = subprocess.run(
        [sys.executable, "-c", MULTI, game],
        capture_output=True,
        text=True,
        env=subprocess_env(XLA_FLAGS=flags),
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# The batch's split over devices is the trainer's, whatever the game: the stand-in game in
# CI; the real game's two compiles (~70 s) with HACKMATRIX_SLOW=1.
GAMES_ON_DEVICES = [
    "standin_env",
    pytest.param(
        game_module_name(),
        marks=[
            pytest.mark.slow,
            pytest.mark.skipif(
                not os.environ.get("HACKMATRIX_SLOW"),
                reason="set HACKMATRIX_SLOW=1 for the real game on four devices",
            ),
        ],
    ),
]


@pytest.mark.parametrize("game", GAMES_ON_DEVICES)
def test_four_devices_match_one_device(game):
    one, four = run_multi(1, game), run_multi(4, game)
    assert (one["devices"], four["devices"]) == (1, 4)
    for key, values in one["metrics"].items():
        np.testing.assert_allclose(four["metrics"][key], values, rtol=2e-4, atol=1e-5, err_msg=key)
    np.testing.assert_allclose(four["param_sums"], one["param_sums"], rtol=1e-4)


def test_wandb_offline_run_logs_without_credentials(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    argv = [a for a in TINY if a != "--no-wandb"]
    assert (
        cli.main(
            [
                *argv,
                "--checkpoint-dir",
                str(tmp_path / "ck"),
                "--run-name",
                "wb",
                "--env-module",
                "standin_env",  # W&B's offline logging is the CLI's, whatever the game
                "--total-timesteps",
                str(4 * BATCH),
            ]
        )
        == 0
    )
    runs = list((tmp_path / "wandb").glob("offline-run-*"))
    assert len(runs) == 1 and runs[0].name.endswith("-" + wandb_run_id("wb"))
    assert len(read_metrics(tmp_path / "ck" / "wb")) == 2


def test_gradient_parts_add_up_to_the_loss_gradient(tmp_path, capsys):
    """`hackmatrix-gradients` (training.md §3.8): each loss term's gradient on the run's own
    rollout; the parts sum to the gradient of the whole loss, and the shared layers are
    everything but the two heads. The tool is the trainer's loss, whatever the game: a
    stand-in run keeps the real game's gradient compile out of the suite."""
    from hackmatrix.commands import gradients

    standin_run(tmp_path, "run", 2)
    finished_run = tmp_path / "run"
    out = tmp_path / "parts.json"
    argv = [str(finished_run), "--rollouts", "1", "--json", str(out)]
    assert gradients.main([*argv, "--env-module", "standin_env"]) == 0
    text = capsys.readouterr().out
    latest = latest_checkpoint(finished_run).name  # the run's last save
    assert f"{latest} (update " in text and "value / policy, shared layers" in text
    report = json.loads(out.read_text())
    assert len(report["minibatches"]) == 2 and len(report["rollouts"]) == 1  # 2 minibatches
    for row in report["minibatches"]:
        assert row["parts_sum_error"] <= 1e-4 * row["total"] + 1e-6
        for part in ("policy", "value", "entropy"):
            assert 0 < row[f"{part}_shared"] <= row[part] + 1e-6
        assert -1 <= row["cosine_shared"] <= 1
    assert gradients.main([str(next(finished_run.glob("params_*.npz")))]) == 2
    assert "needs a checkpoint_*.pkl" in capsys.readouterr().err
    assert gradients.main([str(tmp_path / "missing.pkl")]) == 2
    assert "no such file" in capsys.readouterr().err
