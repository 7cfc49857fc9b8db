"""Public gymnax-style API of the JAX engine (specs/architecture.md, "JAX engine API")."""

import jax
import jax.numpy as jnp

from .batching import apply_compacted
from .curriculum import new_game_with_params
from .generation import new_game
from .mask import action_mask
from .observation import flatten_observation, observe
from .state import EnvParams
from .step import step_state


def _new_game(seed, params):
    """The canonical game for params None; else the game `params` asks for (curriculum.py).

    Default `EnvParams()` never start a curriculum game, so both give the same state.
    """
    seed = jnp.asarray(seed, jnp.uint32)
    return new_game(seed) if params is None else new_game_with_params(seed, params)


def reset_from_seed(seed, params=None):
    """(obs, state) of a new game with the given uint32 seed.

    Under jit pass seeds above 2**31 - 1 as np.uint32 / jnp.uint32 (a plain
    Python int is traced as int32 and overflows). The start is a function of
    (seed, params) alone, curriculum starts included.
    """
    state = _new_game(seed, params)
    return flatten_observation(observe(state)), state


def reset(key, params=None):
    """(obs, state); the seed is jax.random.bits(key, (), uint32)."""
    return reset_from_seed(jax.random.bits(key, (), jnp.uint32), params)


def step(key, state, action, params=None):
    """(obs, state, reward, done, info); `key` is unused (the rules draw from the state's seed)."""
    del key, params
    state, reward, done, info = step_state(state, action)
    return flatten_observation(observe(state)), state, reward, done, info


def _fresh_game(seed, params):
    state = _new_game(seed, params)
    return flatten_observation(observe(state)), state


def reset_where(key, done, obs, states, params=None):
    """Batched auto-reset: replace the envs where `done` with new games, generating only those.

    Not meant to be vmapped: `done` is bool[B], `obs` f32[B, 1545], `states` a
    batch of states. Equivalent to selecting `vmap(reset)` where done, but a
    fresh game is computed only for the finished envs (stage generation is the
    costliest part of the game). The new games follow `params` (curriculum starts).
    """
    seeds = jax.random.bits(key, done.shape, jnp.uint32)
    return apply_compacted(lambda seed: _fresh_game(seed, params), done, seeds, (obs, states))


class HackMatrixEnv:
    """Thin object wrapper over the pure functions, for code that prefers one."""

    num_actions = 28
    observation_size = 1545

    @property
    def default_params(self):
        return EnvParams()

    def reset(self, key, params=None):
        return reset(key, params)

    def reset_from_seed(self, seed, params=None):
        return reset_from_seed(seed, params)

    def step(self, key, state, action, params=None):
        return step(key, state, action, params)

    def reset_where(self, key, done, obs, states, params=None):
        return reset_where(key, done, obs, states, params)

    def action_mask(self, state):
        return action_mask(state)

    get_action_mask = action_mask
