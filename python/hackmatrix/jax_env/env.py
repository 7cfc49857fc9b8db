"""Public gymnax-style API of the JAX engine (specs/architecture.md, "JAX engine API")."""

import jax
import jax.numpy as jnp

from .generation import new_game
from .mask import action_mask
from .observation import flatten_observation, observe
from .state import EnvParams
from .step import step_state


def reset_from_seed(seed, params=None):
    """(obs, state) of a new game with the given uint32 seed."""
    state = new_game(jnp.asarray(seed, jnp.uint32))
    return flatten_observation(observe(state)), state


def reset(key, params=None):
    """(obs, state); the seed is jax.random.bits(key, (), uint32)."""
    return reset_from_seed(jax.random.bits(key, (), jnp.uint32), params)


def step(key, state, action, params=None):
    """(obs, state, reward, done, info); `key` is unused (the rules draw from the state's seed)."""
    del key, params
    state, reward, done, info = step_state(state, action)
    return flatten_observation(observe(state)), state, reward, done, info


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

    def action_mask(self, state):
        return action_mask(state)

    get_action_mask = action_mask
