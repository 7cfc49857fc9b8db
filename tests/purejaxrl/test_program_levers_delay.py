"""`--program-levers-from-update N` (training.md §1.1): the program bonus, the program-use
bonus and free program spending pay nothing before update N.

The switch, its checks, the rollout with the levers off and on, and a real run whose
levers come in on their own update, inside a chunk.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import (
    rollout_config,
    schedule_config,
    standin_run,
    standin_whose_programs_spend,
)

from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl.checkpoint import stored_config
from hackmatrix.purejaxrl.train import make_train, program_levers_at

# ------------------------------------------------------------------ the switch


def test_levers_pay_from_the_given_update_on():
    config = schedule_config(100, free_program_spending=True, program_levers_from_update=40)
    assert [program_levers_at(config, u) for u in (0, 39, 40, 99)] == [0.0, 0.0, 1.0, 1.0]


def test_by_default_the_levers_pay_from_the_start():
    config = schedule_config(100, program_bonus=1.0)
    assert config.program_levers_from_update == 0
    assert program_levers_at(config, 0) == 1.0


@pytest.mark.parametrize(
    "fields, message",
    [
        (dict(program_bonus=1.0, program_levers_from_update=-1), "whole update number >= 0"),
        (dict(program_bonus=1.0, program_levers_from_update=2.5), "whole update number >= 0"),
        (dict(program_levers_from_update=10), "nothing to delay"),
    ],
)
def test_bad_settings_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        schedule_config(100, **fields)


def test_a_run_that_ends_before_the_levers_is_noted_not_refused():
    config = schedule_config(100, program_use_bonus=1.0, program_levers_from_update=100)
    assert program_levers_at(config, 99) == 0.0
    note = cfg.program_levers_note(config)
    assert "update 100" in note and "(100)" in note and "resume" in note
    inside = schedule_config(100, program_use_bonus=1.0, program_levers_from_update=99)
    assert cfg.program_levers_note(inside) is None
    assert cfg.program_levers_note(schedule_config(100, program_bonus=1.0)) is None


def test_a_delay_at_another_batch_is_noted_in_env_steps():
    fields = dict(program_bonus=1.0, program_levers_from_update=120)
    big = cfg.TrainConfig(num_envs=2048, num_steps=128, total_timesteps=10**9, **fields)
    note = cfg.program_levers_batch_note(big)
    assert "update 120" in note and "31.46M env steps" in note and "2048 envs" in note
    assert "3.93M steps" in note
    measured = cfg.TrainConfig(num_envs=256, num_steps=128, **fields)
    assert cfg.program_levers_batch_note(measured) is None
    assert cfg.program_levers_batch_note(cfg.TrainConfig(num_envs=2048, program_bonus=1.0)) is None


def test_free_spending_can_be_switched_off_again():
    parse = cfg.build_parser().parse_args
    args = parse(["--free-program-spending", "--no-free-program-spending"])
    assert cfg.config_from_args(args).free_program_spending is False


def test_flag_parses():
    parse = cfg.build_parser().parse_args
    assert cfg.config_from_args(parse([])).program_levers_from_update == 0
    args = parse(["--program-bonus", "1", "--program-levers-from-update", "120"])
    assert cfg.config_from_args(args).program_levers_from_update == 120


def test_bad_flag_value_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit):
        cfg.build_parser().parse_args(["--program-levers-from-update", "soon"])
    assert "--program-levers-from-update" in capsys.readouterr().err


# ------------------------------------------------------------------ the rollout


@pytest.fixture(scope="module")
def rollouts():
    """The first rollout of one trainer, with the levers left out, switched off and on."""
    config = rollout_config(num_steps=64, free_program_spending=True, program_use_bonus=0.5)
    trainer = make_train(config, standin_whose_programs_spend())
    runner = trainer.init(jax.random.PRNGKey(2))
    run = jax.jit(lambda r, levers: trainer.phases["rollout"](r, {"program_levers": levers})[1])
    default = jax.jit(lambda r: trainer.phases["rollout"](r)[1])(runner)
    off, on = (jax.device_get(run(runner, jnp.float32(v))) for v in (0.0, 1.0))
    return jax.device_get(default), off, on


def test_levers_off_train_on_the_env_reward(rollouts):
    default, off, _ = rollouts
    # The same game is played: only what PPO is paid changes.
    np.testing.assert_array_equal(off.action, default.action)
    assert np.any(default.shaping_terms["spending_refund"] != 0) and np.any(
        default.shaping_terms["program_use_bonus"] != 0
    )
    assert not np.any(off.shaping_terms["spending_refund"]) and not np.any(
        off.shaping_terms["program_use_bonus"]
    )
    np.testing.assert_array_equal(off.reward, off.env_reward)


def test_levers_on_are_the_levers_without_the_switch(rollouts):
    default, _, on = rollouts
    for name in ("action", "reward"):
        np.testing.assert_array_equal(getattr(on, name), getattr(default, name))
    for name in ("spending_refund", "program_use_bonus"):
        np.testing.assert_array_equal(on.shaping_terms[name], default.shaping_terms[name])


# ------------------------------------------------------------------ a real run


def test_a_run_switches_the_levers_on_at_their_update(tmp_path, capsys):
    records = standin_run(
        tmp_path,
        "delayed",
        8,
        "--free-program-spending",
        "--program-levers-from-update",
        "3",
    )
    assert "program_levers_from" in capsys.readouterr().out
    chunks = [r for r in records if "train/total_loss" in r]
    # Chunks of 2 updates are not cut where the levers come in: the chunk of updates 2-3
    # switches them on at update 3 (logged as the share of its updates with them on).
    assert [r["update"] for r in chunks] == [2, 4, 6, 8]
    assert [r["train/program_levers"] for r in chunks] == [0.0, 0.5, 1.0, 1.0]
    stored = stored_config(tmp_path / "delayed" / "final_params.npz")
    assert stored["program_levers_from_update"] == 3


def test_a_run_without_the_delay_logs_no_switch(tmp_path):
    records = standin_run(tmp_path, "undelayed", 2, "--free-program-spending")
    assert not any("train/program_levers" in r for r in records)


# ------------------------------------------------------------------ a resume


def resume_standin(checkpoint, updates, *flags):
    """Resume the stand-in run at `checkpoint` to `updates` updates with `flags`."""
    import json

    from conftest import TINY_BATCH, TINY_FLAGS

    from hackmatrix.purejaxrl import cli

    code = cli.main(
        [
            *TINY_FLAGS,
            "--no-episode-gif",
            "--env-module",
            "standin_env",
            "--checkpoint-dir",
            str(checkpoint.parent.parent),
            "--resume",
            str(checkpoint),
            "--total-timesteps",
            str(updates * TINY_BATCH),
            *flags,
        ]
    )
    assert code == 0
    return [json.loads(line) for line in (checkpoint.parent / "metrics.jsonl").open()]


def test_a_staged_run_ends_before_its_levers_and_a_resume_keeps_them(tmp_path, capsys):
    # The first part: the levers come in after its last update, which is noted, not refused.
    staged = ("--program-bonus", "0.5", "--free-program-spending")
    standin_run(tmp_path, "staged", 4, *staged, "--program-levers-from-update", "6")
    assert "they pay nothing here unless a resume extends the run" in capsys.readouterr().out
    # A resume without the reward flags keeps them (and the switch) from the checkpoint.
    records = resume_standin(tmp_path / "staged" / "checkpoint_4.pkl", 8)
    out = capsys.readouterr().out
    assert "Reward: continuing the checkpoint's" in out and "program_bonus=0.5" in out
    chunks = [r for r in records if "train/total_loss" in r]
    assert [(r["update"], r["train/program_levers"]) for r in chunks] == [
        (2, 0.0),
        (4, 0.0),
        (6, 0.0),
        (8, 1.0),
    ]
    stored = stored_config(tmp_path / "staged" / "final_params.npz")
    assert (stored["program_bonus"], stored["free_program_spending"]) == (0.5, True)
    assert stored["program_levers_from_update"] == 6


def test_a_resume_flag_changes_the_reward_and_says_so(tmp_path, capsys):
    standin_run(tmp_path, "paid", 2, "--program-bonus", "0.5", "--free-program-spending")
    capsys.readouterr()
    resume_standin(tmp_path / "paid" / "checkpoint_2.pkl", 4, "--no-free-program-spending")
    out = capsys.readouterr().out
    assert "Note: free program spending changes from True to False" in out
    assert "continuing the checkpoint's program_bonus=0.5" in out
    stored = stored_config(tmp_path / "paid" / "final_params.npz")
    assert (stored["program_bonus"], stored["free_program_spending"]) == (0.5, False)


def test_a_resume_may_move_the_switch_of_the_checkpoints_levers(tmp_path, capsys):
    # Only the delay is given: the bonus it delays comes from the checkpoint.
    standin_run(tmp_path, "moved", 2, "--program-bonus", "0.5")
    capsys.readouterr()
    records = resume_standin(
        tmp_path / "moved" / "checkpoint_2.pkl", 6, "--program-levers-from-update", "4"
    )
    assert "Note: program levers' first update changes from 0 to 4" in capsys.readouterr().out
    chunks = [r for r in records if "train/program_levers" in r]
    assert [(r["update"], r["train/program_levers"]) for r in chunks] == [(4, 0.0), (6, 1.0)]
