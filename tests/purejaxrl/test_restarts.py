"""Restarts from the agent's own late states (`--restart-share`, restarts.py, training.md §1.7).

The ring remembers only eligible states and wraps; a restart replaces only the
finished games it draws, from a fair sample of a remembered state (the same
observation, a fresh seed); with the share at 0 or an empty ring nothing
changes; in a trainer the restarted games are played but left out of the
episode statistics, and the checks refuse bad settings.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import rollout_config

from hackmatrix import jax_env
from hackmatrix.purejaxrl import config as cfg
from hackmatrix.purejaxrl import restarts
from hackmatrix.purejaxrl.train import make_train

NUM_ENVS = 6


def _observations(states):
    return jax.vmap(lambda s: jax_env.flatten_observation(jax_env.observe(s)))(states)


@pytest.fixture(scope="module")
def games():
    """Six live games at stages 1..3 (a curriculum start), and their observations."""
    params = jax_env.curriculum_params(1.0, stage_weights=[1, 1, 1, 0, 0, 0, 0, 0])
    keys = jax.random.split(jax.random.PRNGKey(0), NUM_ENVS)
    obs, states = jax.vmap(jax_env.reset, in_axes=(0, None))(keys, params)
    return obs, states


def test_remember_copies_one_eligible_state_and_wraps(games):
    _, states = games
    ring = restarts.init(states, 2)
    assert int(ring.remembered) == 0 and ring.restarted.shape == (NUM_ENVS,)
    none = jnp.zeros(NUM_ENVS, bool)
    assert int(restarts.remember(ring, jax.random.PRNGKey(1), states, none).remembered) == 0
    only = none.at[4].set(True)
    for i in range(3):  # a ring of 2: the third write goes to slot 0 again
        ring = restarts.remember(ring, jax.random.PRNGKey(i), states, only)
    assert (int(ring.remembered), int(ring.cursor)) == (3, 1)
    env4 = jax.tree_util.tree_map(lambda x: x[4], states)
    for slot in range(2):
        kept = jax.tree_util.tree_map(lambda x, s=slot: x[s], ring.states)
        for a, b in zip(
            jax.tree_util.tree_leaves(kept), jax.tree_util.tree_leaves(env4), strict=True
        ):
            np.testing.assert_array_equal(a, b)


def test_a_restart_is_a_fair_sample_of_a_remembered_state(games):
    obs, states = games
    late = jnp.asarray(states.stage >= 2)
    ring = restarts.init(states, 8)
    for i in range(8):
        ring = restarts.remember(ring, jax.random.PRNGKey(10 + i), states, late)
    done = jnp.array([True, False, True, False, False, True])
    ring, new_states, new_obs, chosen = restarts.restart(
        ring, jax.random.PRNGKey(5), done, states, obs, 1.0, jax_env
    )
    np.testing.assert_array_equal(chosen, done)
    np.testing.assert_array_equal(ring.restarted, done)
    np.testing.assert_array_equal(new_obs, _observations(new_states))  # obs of the new states
    remembered_obs = np.asarray(_observations(states))[np.asarray(late)]
    seeds, old_seeds = np.asarray(new_states.seed), np.asarray(states.seed)
    for env in range(NUM_ENVS):
        if done[env]:  # the observation of a remembered (late) state, a fresh seed
            assert any(np.array_equal(new_obs[env], o) for o in remembered_obs)
            assert int(new_states.stage[env]) >= 2
            assert seeds[env] not in old_seeds
        else:  # untouched
            np.testing.assert_array_equal(new_obs[env], obs[env])
            assert seeds[env] == old_seeds[env]


def test_nothing_restarts_at_share_0_or_from_an_empty_ring(games):
    obs, states = games
    done = jnp.ones(NUM_ENVS, bool)
    empty = restarts.init(states, 4)
    full = restarts.remember(empty, jax.random.PRNGKey(0), states, done)
    for ring, share in ((empty, 1.0), (full, 0.0)):
        _, _, new_obs, chosen = restarts.restart(
            ring, jax.random.PRNGKey(1), done, states, obs, share, jax_env
        )
        assert not np.any(chosen)
        np.testing.assert_array_equal(new_obs, obs)


@pytest.fixture(scope="module")
def trainer_run():
    """A trainer whose games start at stage 3 and end by a 6-step limit: the ring fills at
    once and, at share 1, every game after each env's first restarts. One trainer (with
    advantages apart, §68) serves both tests below: its first rollout and one update."""
    config = rollout_config(
        restart_share=1.0, restart_min_stage=3, max_episode_steps=6, restart_advantages="apart"
    )
    params = jax_env.curriculum_params(1.0, stage_weights=[0, 0, 1, 0, 0, 0, 0, 0])
    trainer = make_train(config, jax_env, env_params=params)
    runner = trainer.init(jax.random.PRNGKey(2))
    traj = jax.jit(lambda r: trainer.phases["rollout"](r)[1])(runner)
    after, metrics = jax.jit(trainer.phases["update"])(runner)
    return config, traj, after, metrics


def test_a_trainer_restarts_games_but_counts_only_whole_ones(trainer_run):
    """The episode statistics count none of the restarted games."""
    config, _, runner, metrics = trainer_run
    finished = metrics["restarts/finished_games"]
    assert finished >= 2 * config.num_envs
    assert metrics["restarts/games"] == finished  # at share 1 every finished game restarts
    # only each env's first game began at a reset, and only those are counted
    assert metrics["train/num_episodes"] == config.num_envs
    assert 0 < metrics["restarts/remembered"] == min(int(runner.restarts.remembered), 1024)
    assert bool(np.all(runner.restarts.restarted))


def test_off_by_default_and_bad_settings_are_clear_errors():
    config = cfg.TrainConfig()
    assert (config.restart_share, config.restart_min_stage, config.restart_buffer) == (
        0.0,
        5,
        1024,
    )
    for fields, message in [
        ({"restart_share": 1.5}, "--restart-share must be a number in"),
        ({"restart_share": float("nan")}, "--restart-share"),
        ({"restart_min_stage": 1}, "--restart-min-stage must be a whole stage in 2..8"),
        ({"restart_min_stage": 9}, "--restart-min-stage"),
        ({"restart_buffer": 0}, "--restart-buffer must be a whole number >= 1"),
    ]:
        with pytest.raises(ValueError, match=message):
            cfg.check_restarts(cfg.TrainConfig(**fields))


# ------------------------------------------------ --restart-advantages apart


def test_advantages_together_are_the_plain_normalisation_bit_for_bit():
    from hackmatrix.purejaxrl.train import normalised_advantages

    advantages = jax.random.normal(jax.random.PRNGKey(0), (64,)) * 3 + 1
    plain = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    np.testing.assert_array_equal(normalised_advantages(advantages), plain)


def test_advantages_apart_are_normalised_within_each_origin():
    from hackmatrix.purejaxrl.train import normalised_advantages

    key_a, key_b = jax.random.split(jax.random.PRNGKey(1))
    canonical = jax.random.normal(key_a, (48,)) * 2 + 1  # the early stages' narrow spread
    restarted = jax.random.normal(key_b, (16,)) * 30 - 5  # a restarted game's wide one
    advantages = jnp.concatenate([canonical, restarted])
    origin = jnp.arange(64) >= 48
    out = np.asarray(normalised_advantages(advantages, origin))
    for group in (out[:48], out[48:]):
        np.testing.assert_allclose([group.mean(), group.std()], [0.0, 1.0], atol=1e-5)
    # Together, the wide group sets the scale: the canonical steps shrink to a tenth or so.
    assert np.asarray(normalised_advantages(advantages))[:48].std() < 0.2
    # One origin only: apart is together.
    np.testing.assert_allclose(
        normalised_advantages(canonical, jnp.zeros(48, bool)),
        normalised_advantages(canonical),
        rtol=1e-5,
        atol=1e-6,
    )


def test_restart_advantages_settings_are_checked():
    assert cfg.TrainConfig().restart_advantages == "together"
    for fields, message in [
        ({"restart_advantages": "sideways"}, "--restart-advantages must be together or apart"),
        ({"restart_advantages": "apart"}, "needs --restart-share above 0"),
        (
            {"restart_advantages": "apart", "restart_share": 0.25, "algorithm": "expert-iteration"},
            "is PPO's",
        ),
    ]:
        with pytest.raises(ValueError, match=message):
            cfg.check_restarts(cfg.TrainConfig(**fields))
    cfg.check_restarts(cfg.TrainConfig(restart_advantages="apart", restart_share=0.25))


def test_a_trainer_keeps_restarted_games_advantages_apart(trainer_run):
    """The steps of each env's first game are marked canonical, the later ones restarted,
    and the update trains on both."""
    _, traj, _, metrics = trainer_run
    origin, done = np.asarray(traj.restart_origin), np.asarray(traj.done)
    first_end = done.argmax(axis=0)  # each env's first game ends by step 6
    steps = np.arange(done.shape[0])[:, None]
    np.testing.assert_array_equal(origin, steps > first_end)
    assert np.isfinite(float(metrics["train/pg_loss"]))
