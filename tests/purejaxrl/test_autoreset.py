"""The slot-based auto-reset gives exactly what resetting every env and selecting would."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import standin_env as env

from hackmatrix.purejaxrl.autoreset import make_auto_reset, reset_slots


def reset_everything(reset_key, done, state, obs, num_envs):
    fresh_obs, fresh_state = jax.vmap(env.reset, in_axes=(0, None))(
        jax.random.split(reset_key, num_envs), env.EnvParams()
    )

    def pick(new, old):
        return jnp.where(done.reshape(done.shape + (1,) * (old.ndim - 1)), new, old)

    return jax.tree_util.tree_map(pick, fresh_state, state), pick(fresh_obs, obs)


@pytest.mark.parametrize("done_count", [0, 1, 5, 13, 32])  # 32 envs have 4 slots: up to 8 rounds
def test_matches_reset_everything(done_count):
    num_envs = 32
    assert reset_slots(num_envs) == 4
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(
        jax.random.split(jax.random.PRNGKey(0), num_envs), env.EnvParams()
    )
    # make the current states differ from any fresh reset
    state = state.replace(pos=state.pos + 1, stage=state.stage + 1)
    obs = obs + 0.5
    done = (
        jnp.zeros(num_envs, bool)
        .at[jax.random.permutation(jax.random.PRNGKey(done_count), num_envs)[:done_count]]
        .set(True)
    )
    key = jax.random.PRNGKey(9)
    auto_reset = jax.jit(make_auto_reset(env, env.EnvParams(), num_envs))
    got = auto_reset(key, done, state, obs)
    want = reset_everything(key, done, state, obs, num_envs)
    jax.tree_util.tree_map(np.testing.assert_array_equal, got, want)


def env_at(states, i):
    """Env `i`'s state from a batch."""
    return jax.tree_util.tree_map(lambda leaf: leaf[i], states)


def test_env_reset_where_is_used_and_resets_exactly_the_finished_envs():
    """With hackmatrix.jax_env the env's own reset_where runs: finished envs get
    the game of their seed, the others keep state and observation."""
    import hackmatrix.jax_env as J

    num_envs = 8
    obs, state = jax.jit(jax.vmap(J.reset_from_seed))(jnp.arange(num_envs, dtype=jnp.uint32) + 500)
    obs = obs + 0.5
    done = jnp.asarray([True, False, False, True, False, False, False, True])
    key = jax.random.PRNGKey(3)
    got_state, got_obs = jax.jit(make_auto_reset(J, None, num_envs))(key, done, state, obs)
    fresh_obs, fresh = jax.jit(jax.vmap(J.reset_from_seed))(
        jax.random.bits(key, (num_envs,), jnp.uint32)
    )
    for i in range(num_envs):
        want_obs = fresh_obs[i] if done[i] else obs[i]
        want = env_at(fresh if done[i] else state, i)
        np.testing.assert_array_equal(got_obs[i], want_obs)
        assert J.state_to_json(env_at(got_state, i)) == J.state_to_json(want)
