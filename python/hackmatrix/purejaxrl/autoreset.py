"""Resetting finished environments without paying for a reset in every env.

The straightforward auto-reset computes a fresh reset for *every* env on
every step and selects it where `done` (under vmap a `cond` becomes a
select). Level generation is expensive, and only a few envs finish on any
given step, so instead the indices of finished envs are gathered into a
small fixed-size slot array, only those are reset, and the results are
scattered back. A `while_loop` takes further rounds in the rare step where
more envs finish than there are slots. Env `i` always uses key `i` of the
step's split, so the outcome is identical to the reset-everything version.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp


def reset_slots(num_envs: int) -> int:
    """Resets computed per round: generous next to the ~1/episode-length finish rate."""
    return min(num_envs, max(4, num_envs // 8))


def make_auto_reset(env: ModuleType, env_params: Any, num_envs: int) -> Callable[..., Any]:
    """`auto_reset(reset_key, done, state, obs, params=None) -> (state, obs)` for `num_envs` envs.

    New games follow `params` when given (e.g. the chunk's traced curriculum
    params, training.md §1.7), else `env_params`.

    An env module that provides its own batched `reset_where(key, done, obs,
    states, params)` (hackmatrix.jax_env does: it generates new games only
    for the finished envs, in chunks sized to the batch) is used as it is;
    otherwise finished envs are reset through a fixed number of slots.
    """
    if hasattr(env, "reset_where"):

        def env_auto_reset(reset_key, done, state, obs, params=None):
            params = env_params if params is None else params
            obs, state = env.reset_where(reset_key, done, obs, state, params)
            return state, obs

        return env_auto_reset

    slots = reset_slots(num_envs)
    v_reset = jax.vmap(env.reset, in_axes=(0, None))

    def auto_reset(reset_key, done, state, obs, params=None):
        """Replace the state and observation of every env with `done` by a fresh reset."""
        params = env_params if params is None else params
        keys = jax.random.split(reset_key, num_envs)

        def one_round(carry):
            pending, state, obs = carry
            (index,) = jnp.nonzero(pending, size=slots, fill_value=num_envs)
            fresh_obs, fresh_state = v_reset(keys[jnp.minimum(index, num_envs - 1)], params)

            def scatter(old, new):
                return old.at[index].set(new, mode="drop")  # fill slots (index == num_envs) drop

            state = jax.tree_util.tree_map(scatter, state, fresh_state)
            obs = scatter(obs, fresh_obs)
            pending = pending.at[index].set(False, mode="drop")
            return pending, state, obs

        def any_pending(carry):
            return jnp.any(carry[0])

        _, state, obs = jax.lax.while_loop(any_pending, one_round, (done, state, obs))
        return state, obs

    return auto_reset
