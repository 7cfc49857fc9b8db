"""`--max-episode-steps` (training.md §2.5): a time limit with a bootstrapped truncation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import standin_env
from conftest import first_rollout, rollout_config

from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl.metrics import aggregate_chunk
from hackmatrix.purejaxrl.train import Transition, make_train

LIMIT = 5


def test_flag_defaults_to_no_limit_and_refuses_bad_values(capsys):
    parse = cfg.build_parser().parse_args
    assert cfg.config_from_args(parse([])).max_episode_steps == 0
    assert cfg.config_from_args(parse(["--max-episode-steps", "1000"])).max_episode_steps == 1000
    with pytest.raises(SystemExit):
        parse(["--max-episode-steps", "2.5"])
    assert "--max-episode-steps" in capsys.readouterr().err
    config = cfg.config_from_args(parse(["--max-episode-steps=-3"]))
    with pytest.raises(ValueError, match="--max-episode-steps must be a whole number"):
        cfg.validate(config)


@pytest.fixture(scope="module")
def limited_rollout():
    trainer = make_train(rollout_config(max_episode_steps=LIMIT), standin_env)
    traj, metrics = first_rollout(trainer, jax.random.PRNGKey(3))
    return trainer, jax.device_get(traj), jax.device_get(metrics)


def test_no_episode_outlives_the_limit_and_truncations_are_ends(limited_rollout):
    _, traj, _ = limited_rollout
    lengths = traj.completed_length[traj.done]
    assert lengths.size > 0 and lengths.max() <= LIMIT
    assert traj.truncated.any()  # the stand-in's random walks run past 5 actions
    assert np.all(traj.done[traj.truncated])  # a truncation ends the episode ...
    np.testing.assert_array_equal(traj.completed_length[traj.truncated], LIMIT)
    # ... and each env's running length restarts after it: at most LIMIT steps between ends.
    for env in range(traj.done.shape[1]):
        ends = np.flatnonzero(traj.done[:, env])
        gaps = np.diff(np.concatenate([[-1], ends]))
        assert gaps.max() <= LIMIT


def test_only_truncated_steps_carry_a_bootstrap_value(limited_rollout):
    _, traj, _ = limited_rollout
    assert np.all(traj.truncation_value[~traj.truncated] == 0.0)
    # An untrained value head is small but not exactly zero on real observations.
    assert np.all(traj.truncation_value[traj.truncated] != 0.0)


def test_truncations_are_counted_in_the_metrics(limited_rollout):
    _, traj, metrics = limited_rollout
    point = aggregate_chunk(jax.tree_util.tree_map(lambda x: np.asarray(x)[None], metrics), 1)
    assert point["train/truncated_episodes"] == traj.truncated.sum()
    assert point["train/num_episodes"] == traj.done.sum()


def test_gae_adds_the_discounted_value_of_the_truncated_games_last_observation(limited_rollout):
    trainer, _, _ = limited_rollout
    gamma, lam = trainer.config.gamma, trainer.config.gae_lambda

    def one_env(values):
        return jnp.asarray(values, jnp.float32)[:, None]

    # Three steps of one env: the game is truncated at step 1 (V(o') = 2.0), then a new one.
    traj = Transition(
        obs=None,
        action=None,
        reward=one_env([1.0, 0.5, 0.25]),
        done=one_env([0, 1, 0]).astype(bool),
        log_prob=None,
        value=one_env([0.1, 0.2, 0.3]),
        mask=None,
        completed_return=None,
        completed_length=None,
        empty_mask=None,
        components=None,
        stage=None,
        env_reward=None,
        completed_weighted_return=None,
        shaping_terms={},
        truncated=one_env([0, 1, 0]).astype(bool),
        truncation_value=one_env([0.0, 2.0, 0.0]),
    )
    last_value = jnp.asarray([0.7], jnp.float32)
    advantages, targets = trainer.phases["compute_gae"](traj, last_value)
    a2 = 0.25 + gamma * 0.7 - 0.3
    a1 = 0.5 + gamma * 2.0 - 0.2  # the truncated step: bootstrap from V(o'), not from step 2
    a0 = 1.0 + gamma * 0.2 - 0.1 + gamma * lam * a1
    np.testing.assert_allclose(np.asarray(advantages)[:, 0], [a0, a1, a2], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(targets)[:, 0], [a0 + 0.1, a1 + 0.2, a2 + 0.3], rtol=1e-6)


def test_without_the_flag_nothing_is_truncated_or_logged():
    trainer = make_train(rollout_config(), standin_env)
    traj, metrics = first_rollout(trainer, jax.random.PRNGKey(3))
    assert traj.truncated is None and traj.truncation_value is None
    assert "train/truncated_episodes" not in metrics
