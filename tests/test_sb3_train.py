"""The legacy SB3 path end to end: train -> save -> resume -> watch (training.md §5.2, §6)."""

import datetime
import importlib.util
import json
import re
import sqlite3

import pytest
from script_loading import load_script

from hackmatrix.commands import watch_sb3 as watch

train = load_script("train")


def test_run_names_count_up_per_day(tmp_path):
    day = datetime.date(2026, 2, 5)
    assert train.next_run_name(tmp_path, None, day) == "hackmatrix-feb05-26-1"
    (tmp_path / "hackmatrix-feb05-26-1").mkdir()
    (tmp_path / "hackmatrix-feb05-26-7-probe").mkdir()
    (tmp_path / "hackmatrix-feb04-26-9").mkdir()
    assert train.next_run_name(tmp_path, "x", day) == "hackmatrix-feb05-26-8-x"


def test_hyperparameters_default_to_the_seed_table_and_accept_overrides():
    args = train.parse_args([])
    assert train.requested_hyperparameters(args) == train.PRESETS["seed"]
    assert train.explicit_hyperparameters(args) == {}
    args = train.parse_args(["--preset", "original", "--ent-coef", "0.2"])
    config = train.requested_hyperparameters(args)
    assert (config["n_steps"], config["n_epochs"], config["ent_coef"], config["vf_coef"]) == (
        4096,
        20,
        0.2,
        1.0,
    )


def test_latest_model_follows_the_original_priority(tmp_path):
    run = tmp_path / "hackmatrix-jan01-26-1"
    run.mkdir()
    for name in (
        "maskable_ppo_hack_100_steps.zip",
        "maskable_ppo_hack_2000_steps.zip",
        "final_model.zip",
    ):
        (run / name).write_bytes(b"")
    assert watch.find_latest_model(tmp_path).name == "maskable_ppo_hack_2000_steps.zip"
    (run / "interrupted_model.zip").write_bytes(b"")
    assert watch.find_latest_model(tmp_path).name == "interrupted_model.zip"
    (run / "best_model.zip").write_bytes(b"")
    assert watch.find_latest_model(tmp_path).name == "best_model.zip"


SMALL = [
    "--n-steps",
    "256",
    "--batch-size",
    "64",
    "--n-epochs",
    "1",
    "--save-freq",
    "256",
    "--eval-freq",
    "256",
    "--eval-episodes",
    "1",
    "--max-episode-steps",
    "100",
    "--no-progress-bar",
]


@pytest.mark.swift
def test_train_resume_and_watch(tmp_path, swift_binary, monkeypatch, capsys):
    from sb3_contrib import MaskablePPO

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    models, logs = tmp_path / "models", tmp_path / "logs"
    common = ["--model-dir", str(models), "--log-dir", str(logs), "--binary", str(swift_binary)]

    assert train.main(["--timesteps", "512", "--seed", "1", *SMALL, *common]) == 0
    (run_dir,) = [d for d in models.iterdir() if d.is_dir()]
    for name in (
        "final_model.zip",
        "best_model.zip",
        "maskable_ppo_hack_256_steps.zip",
        "config.json",
    ):
        assert (run_dir / name).is_file(), name
    config = json.loads((run_dir / "config.json").read_text())
    assert config["swift_binary"] == str(swift_binary) and len(config["swift_binary_sha256"]) == 64
    assert (logs / run_dir.name / "swift_env0.log").is_file()
    if (
        importlib.util.find_spec("tensorboard") is None
    ):  # SB3 metrics then go to progress.csv, not /tmp
        assert (logs / run_dir.name / "progress.csv").is_file()
    with sqlite3.connect(models / "training_history.db") as db:
        rows = db.execute("SELECT run_id, total_reward, stats_json FROM episodes").fetchall()
    for run_id, total_reward, stats_json in rows:
        assert run_id == train.wandb_run_id(run_dir.name)
        assert json.loads(stats_json)["total_reward"] == pytest.approx(total_reward)
    out = capsys.readouterr().out
    assert re.search(r"step_penalty\s*\|\s*-0\.01\b", out), (
        "reward/step_penalty must be logged as -0.01"
    )

    final = run_dir / "final_model.zip"
    capsys.readouterr()
    assert (
        train.main(
            [
                "--resume",
                str(final),
                "--timesteps",
                "768",
                "--ent-coef",
                "0.05",
                "--no-wandb",
                "--no-progress-bar",
                *common,
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "changes ent_coef: 0.1 -> 0.05" in out
    assert "Training 256 timesteps (512 done, target 768)" in out
    resumed = MaskablePPO.load(final, device="cpu")
    assert resumed.num_timesteps == 768
    assert (resumed.ent_coef, resumed.n_steps, resumed.n_epochs) == (
        0.05,
        256,
        1,
    )  # nothing else moved

    with pytest.raises(SystemExit, match="n-steps"):
        train.main(
            [
                "--resume",
                str(final),
                "--timesteps",
                "2000",
                "--n-steps",
                "512",
                "--no-wandb",
                *common,
            ]
        )
    assert train.main(["--resume", str(final), "--timesteps", "500", "--no-wandb", *common]) == 0
    assert "nothing to do" in capsys.readouterr().out

    assert (
        watch.main(
            [
                str(run_dir),
                "--episodes",
                "1",
                "--max-steps",
                "20",
                "--quiet",
                "--seed",
                "3",
                "--binary",
                str(swift_binary),
            ]
        )
        == 0
    )
    assert "invalid actions 0" in capsys.readouterr().out
