"""`--free-program-spending` (training.md §1.1): a program's price is not charged in reward.

The refund rule on hand-made steps, then a rollout of the stand-in game whose
programs spend and whose UNDO gives back.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import standin_env
from conftest import (
    components_with,
    first_rollout,
    rollout_config,
    shaper_term,
    standin_whose_programs_spend,
)

from hackmatrix.names import FIRST_PROGRAM_ACTION, Program
from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl import shaping
from hackmatrix.purejaxrl.metrics import aggregate_chunk
from hackmatrix.purejaxrl.train import make_train

NAMES = tuple(standin_env.REWARD_COMPONENT_NAMES)
GAIN = NAMES.index("resource_gain")
PROGRAM = FIRST_PROGRAM_ACTION  # WAIT; any program but UNDO
UNDO = FIRST_PROGRAM_ACTION + Program.UNDO
SIPHON = 4


def test_flag_parses_and_defaults_off():
    parse = cfg.build_parser().parse_args
    assert cfg.config_from_args(parse([])).free_program_spending is False
    assert cfg.config_from_args(parse(["--free-program-spending"])).free_program_spending is True
    assert shaping.build(cfg.TrainConfig(free_program_spending=False), NAMES) == ()


def refund(actions, components, weights):
    return shaper_term(
        {"free_program_spending": True},
        NAMES,
        action=actions,
        components=components,
        weights=weights,
    )[0]


def test_programs_spend_for_free_and_undo_gives_nothing_back():
    # move, siphon gain, program spend, program gain, UNDO of a spend, UNDO of a gain
    actions = jnp.array([0, SIPHON, PROGRAM, PROGRAM + 1, UNDO, UNDO])
    gains = [0.10, 0.20, -0.25, 0.20, 0.25, -0.20]
    got = refund(actions, components_with("resource_gain", gains), None)
    np.testing.assert_allclose(got, [0.0, 0.0, 0.25, 0.0, -0.25, 0.0], atol=1e-7)
    # Scaled by the resource_gain weight, fixed or annealed.
    weights = np.ones(len(NAMES), np.float32)
    weights[GAIN] = 2.0
    np.testing.assert_allclose(
        refund(actions, components_with("resource_gain", gains), jnp.asarray(weights)),
        [0.0, 0.0, 0.5, 0.0, -0.5, 0.0],
        atol=1e-7,
    )


def test_no_loop_of_program_siphon_and_undo_earns_resources():
    def trained_gain(actions, gains):
        comps = components_with("resource_gain", gains)
        return float(jnp.sum(comps[:, GAIN] + refund(jnp.array(actions), comps, None)))

    assert trained_gain([PROGRAM, UNDO], [-0.25, 0.25]) == pytest.approx(0.0)
    assert trained_gain([SIPHON, UNDO], [0.20, -0.20]) == pytest.approx(0.0)
    # A spend is free, not paid: the program alone nets 0, never more.
    assert trained_gain([PROGRAM], [-0.25]) == pytest.approx(0.0)


# ------------------------------------------------------------------ a rollout


@pytest.fixture(scope="module")
def rollout():
    trainer = make_train(
        rollout_config(num_steps=64, free_program_spending=True), standin_whose_programs_spend()
    )
    traj, metrics = first_rollout(trainer, jax.random.PRNGKey(2))
    return jax.device_get(traj), jax.device_get(metrics)


def test_the_rollout_trains_on_the_refunded_reward(rollout):
    traj, _ = rollout
    expected = np.where(
        traj.action == UNDO, -0.25, np.where(traj.action >= FIRST_PROGRAM_ACTION, 0.25, 0.0)
    )
    assert (
        (traj.action == UNDO).any() and (traj.action == PROGRAM).any() and (traj.action < 4).any()
    )
    np.testing.assert_allclose(traj.shaping_terms["spending_refund"], expected, atol=1e-6)
    np.testing.assert_allclose(
        traj.reward, traj.env_reward + traj.shaping_terms["spending_refund"], atol=1e-6
    )
    # The env's own reward keeps the charge: the canonical return is untouched.
    np.testing.assert_allclose(traj.components[..., GAIN] < 0, traj.action == PROGRAM)


def test_the_refund_is_logged_beside_the_canonical_reward(rollout):
    traj, metrics = rollout
    point = aggregate_chunk(jax.tree_util.tree_map(lambda x: np.asarray(x)[None], metrics), 1)
    assert point["train/spending_refund"] == pytest.approx(
        traj.shaping_terms["spending_refund"].mean(), abs=1e-6
    )
    assert point["train/mean_reward"] == pytest.approx(traj.env_reward.mean(), abs=1e-6)
    assert point["train/weighted_mean_reward"] == pytest.approx(traj.reward.mean(), abs=1e-6)


def test_without_the_flag_nothing_is_refunded():
    trainer = make_train(rollout_config(num_steps=8), standin_whose_programs_spend())
    traj, metrics = jax.device_get(first_rollout(trainer, jax.random.PRNGKey(2)))
    assert traj.shaping_terms == {} and traj.env_reward is None
    assert "train/spending_refund" not in metrics
