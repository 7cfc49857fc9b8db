"""`--program-use-bonus W` (training.md §1.1): W for the first program an episode runs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import standin_env
from conftest import first_rollout, rollout_config

from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl.checkpoint import load_checkpoint, restore_runner, save_checkpoint
from hackmatrix.purejaxrl.metrics import aggregate_chunk
from hackmatrix.purejaxrl.train import make_train

BONUS = 0.75
PROGRAM = 5  # the first program action (WAIT); the stand-in treats it as a rejected no-op


def standin_with_a_program_always_offered():
    """The stand-in game whose mask also offers action 5, so the policy sometimes runs it."""

    def action_mask(state):
        return standin_env.action_mask(state).at[PROGRAM].set(True)

    return standin_env.variant(action_mask=action_mask)


def test_flag_parses_defaults_off_and_refuses_non_finite(capsys):
    parse = cfg.build_parser().parse_args
    assert cfg.config_from_args(parse([])).program_use_bonus == 0.0
    assert cfg.config_from_args(parse(["--program-use-bonus", "2"])).program_use_bonus == 2.0
    with pytest.raises(SystemExit):
        parse(["--program-use-bonus", "much"])
    assert "--program-use-bonus" in capsys.readouterr().err
    config = cfg.config_from_args(parse(["--program-use-bonus", "inf"]))
    with pytest.raises(ValueError, match="--program-use-bonus must be a finite number"):
        cfg.validate(config)


@pytest.fixture(scope="module")
def trained():
    trainer = make_train(
        rollout_config(num_steps=64, program_use_bonus=BONUS),
        standin_with_a_program_always_offered(),
    )
    runner = trainer.init(jax.random.PRNGKey(5))
    traj, metrics = first_rollout(trainer, jax.random.PRNGKey(5))
    return trainer, runner, jax.device_get(traj), jax.device_get(metrics)


def test_the_bonus_is_paid_once_per_episode_at_its_first_program(trained):
    _, _, traj, _ = trained
    np.testing.assert_allclose(
        traj.reward, traj.env_reward + traj.shaping_terms["program_use_bonus"], atol=1e-6
    )
    ran = traj.action >= PROGRAM
    assert ran.any() and (~ran).any()
    paid_somewhere_twice = False
    for env in range(traj.action.shape[1]):
        used = False  # every env starts a fresh episode at init
        for t in range(traj.action.shape[0]):
            expected = BONUS if ran[t, env] and not used else 0.0
            paid_somewhere_twice |= ran[t, env] and used
            assert traj.shaping_terms["program_use_bonus"][t, env] == pytest.approx(expected), (
                t,
                env,
            )
            used = (used or ran[t, env]) and not traj.done[t, env]
    assert paid_somewhere_twice  # later programs of an episode were run and not paid


def test_the_bonus_is_logged_beside_the_canonical_reward(trained):
    _, _, traj, metrics = trained
    point = aggregate_chunk(jax.tree_util.tree_map(lambda x: np.asarray(x)[None], metrics), 1)
    assert point["train/program_use_bonus"] == pytest.approx(
        traj.shaping_terms["program_use_bonus"].mean()
    )
    assert point["train/mean_reward"] == pytest.approx(traj.env_reward.mean(), abs=1e-6)
    assert point["train/weighted_mean_reward"] == pytest.approx(
        point["train/mean_reward"] + point["train/program_use_bonus"], abs=1e-6
    )


def test_a_resume_keeps_which_episodes_were_paid(trained, tmp_path):
    trainer, runner, _, _ = trained
    used = jnp.arange(8) % 3 == 0
    runner = runner._replace(shaping_carry={"program_use_bonus": used})
    pkl, _ = save_checkpoint(
        tmp_path, 1, runner, {}, metrics={}, metrics_history=[], last_logged_step=0
    )
    fresh = trainer.init(jax.random.PRNGKey(9))
    restored, with_env = restore_runner(pkl, load_checkpoint(pkl), jax.device_get(fresh))
    assert with_env
    np.testing.assert_array_equal(restored.shaping_carry["program_use_bonus"], np.asarray(used))


def test_without_the_flag_there_is_no_flag_state():
    trainer = make_train(rollout_config(num_steps=64), standin_env)
    assert trainer.init(jax.random.PRNGKey(0)).shaping_carry == {}
