"""`--ent-coef-final` / `--ent-coef-anneal` (training.md §1.1): the entropy
coefficient moves linearly from `--ent-coef` to its final value.

The schedule, its checks, the traced coefficient of the chunk, and a real run
that logs it.
"""

import jax
import numpy as np
import pytest
import standin_env
from conftest import schedule_config, standin_run

from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl.checkpoint import stored_config
from hackmatrix.purejaxrl.metrics import aggregate_chunk
from hackmatrix.purejaxrl.train import ent_coef_at, make_train


def scheduled_config(start=0.15, final=None, anneal=None, num_updates=100):
    return schedule_config(
        num_updates, ent_coef=start, ent_coef_final=final, ent_coef_anneal=anneal
    )


# ------------------------------------------------------------------ the schedule


def test_coefficient_moves_linearly_to_the_final_value_then_stays():
    config = scheduled_config(0.15, 0.05, 0.5)  # 100 updates: 0.05 from update 50 on
    assert ent_coef_at(config, 0) == 0.15
    assert ent_coef_at(config, 25) == pytest.approx(0.10)
    assert ent_coef_at(config, 10) == pytest.approx(0.13)
    for update in (50, 80, 99):
        assert ent_coef_at(config, update) == pytest.approx(0.05)


def test_coefficient_may_also_rise():
    config = scheduled_config(0.0, 0.2, 1.0)
    assert [ent_coef_at(config, u) for u in (0, 50, 100)] == pytest.approx([0.0, 0.1, 0.2])


def test_without_the_schedule_the_coefficient_is_constant():
    config = scheduled_config(0.07)
    assert ent_coef_at(config, 0) == ent_coef_at(config, 99) == 0.07


@pytest.mark.parametrize(
    "final, anneal, message",
    [
        (0.05, None, "--ent-coef-final needs --ent-coef-anneal"),
        (None, 0.5, "--ent-coef-anneal needs --ent-coef-final"),
        (-0.1, 0.5, "--ent-coef-final must be a finite non-negative"),
        (float("inf"), 0.5, "--ent-coef-final must be a finite non-negative"),
        (0.05, 0.0, r"in \(0, 1\]"),
        (0.05, 1.5, r"in \(0, 1\]"),
        (0.05, float("nan"), r"in \(0, 1\]"),
    ],
)
def test_bad_settings_are_refused(final, anneal, message):
    with pytest.raises(ValueError, match=message):
        scheduled_config(0.15, final, anneal)


def test_flags_parse_and_default_to_off():
    parse = cfg.build_parser().parse_args
    config = cfg.config_from_args(parse([]))
    assert config.ent_coef_final is None and config.ent_coef_anneal is None
    args = parse(["--ent-coef", "0.2", "--ent-coef-final", "0.05", "--ent-coef-anneal", "0.3"])
    config = cfg.config_from_args(args)
    assert (config.ent_coef, config.ent_coef_final, config.ent_coef_anneal) == (0.2, 0.05, 0.3)


# ------------------------------------------------------------------ the chunk


def tiny_trainer(constant):
    config = scheduled_config(constant, num_updates=4)
    config.log_interval, config.hidden_dim = 1, 32
    return make_train(config, standin_env)


def first_update(trainer, ent_coef=None):
    runner = trainer.init(jax.random.PRNGKey(3))
    inputs = {} if ent_coef is None else {"ent_coef": np.asarray([ent_coef], np.float32)}
    runner, per_update = trainer.train_chunk(runner, 1, inputs)
    params = jax.device_get(runner.train_state.params)
    return aggregate_chunk(jax.device_get(per_update), 1), params


def test_traced_coefficient_replaces_the_fixed_one():
    fixed, fixed_params = first_update(tiny_trainer(0.05))
    traced = tiny_trainer(0.15)  # its constant is never used: the traced value wins
    same, same_params = first_update(traced, 0.05)
    other, other_params = first_update(traced, 0.5)
    # The same coefficient, baked in or traced, trains to the same weights.
    assert same["train/total_loss"] == pytest.approx(fixed["train/total_loss"], rel=1e-6)
    same_leaves = jax.tree_util.tree_leaves(same_params)
    for a, b in zip(jax.tree_util.tree_leaves(fixed_params), same_leaves, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    # The rollout is the same game; only the loss (and so the update) changes.
    assert other["train/mean_reward"] == fixed["train/mean_reward"]
    assert other["train/total_loss"] < fixed["train/total_loss"]  # -c x entropy, c larger
    assert any(
        not np.allclose(a, b)
        for a, b in zip(
            jax.tree_util.tree_leaves(fixed_params),
            jax.tree_util.tree_leaves(other_params),
            strict=True,
        )
    )


# ------------------------------------------------------------------ a real run


def test_a_run_logs_the_coefficient_of_each_chunk(tmp_path, capsys):
    records = standin_run(
        tmp_path,
        "entsched",
        8,
        "--ent-coef",
        "0.2",
        "--ent-coef-final",
        "0.0",
        "--ent-coef-anneal",
        "0.5",
    )
    assert "ent_coef_anneal" in capsys.readouterr().out
    coefficients = [r["train/ent_coef"] for r in records if "train/total_loss" in r]
    # 8 updates in chunks of 2, 0.0 from update 4: the coefficient moves every update
    # (0.2, 0.15, 0.1, 0.05, 0, ...), each chunk logs the mean of its two.
    assert coefficients == pytest.approx([0.175, 0.075, 0.0, 0.0])
    stored = stored_config(tmp_path / "entsched" / "final_params.npz")
    assert (stored["ent_coef_final"], stored["ent_coef_anneal"]) == (0.0, 0.5)


def test_a_run_without_the_schedule_logs_no_coefficient(tmp_path):
    records = standin_run(tmp_path, "constant", 2)
    assert not any("train/ent_coef" in r for r in records)
