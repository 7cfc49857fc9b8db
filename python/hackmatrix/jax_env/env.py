"""Public gymnax-style API of the JAX engine (specs/architecture.md, "JAX engine API")."""

from typing import Any

import jax
import jax.numpy as jnp

from .constants import NUM_ACTIONS, OBS_SIZE
from .curriculum import new_game_with_params
from .generation import new_game
from .machinery.batching import apply_compacted
from .mask import action_mask
from .observation import flatten_observation, observe
from .state import EnvParams, EnvState
from .step import step_state

StepResult = tuple[jax.Array, EnvState, jax.Array, jax.Array, dict[str, Any]]


def _new_game(seed: jax.Array | int, params: EnvParams | None) -> EnvState:
    """The canonical game for params None; else the game `params` asks for (curriculum.py).

    Default `EnvParams()` never start a curriculum game, so both give the same state.
    """
    seed = jnp.asarray(seed, jnp.uint32)
    return new_game(seed) if params is None else new_game_with_params(seed, params)


def reset_from_seed(
    seed: jax.Array | int, params: EnvParams | None = None
) -> tuple[jax.Array, EnvState]:
    """(obs, state) of a new game with the given uint32 seed.

    Under jit pass seeds above 2**31 - 1 as np.uint32 / jnp.uint32 (a plain
    Python int is traced as int32 and overflows). The start is a function of
    (seed, params) alone, curriculum starts included.
    """
    state = _new_game(seed, params)
    return flatten_observation(observe(state)), state


def reset(key: jax.Array, params: EnvParams | None = None) -> tuple[jax.Array, EnvState]:
    """(obs, state); the seed is jax.random.bits(key, (), uint32)."""
    return reset_from_seed(jax.random.bits(key, (), jnp.uint32), params)


def step(
    key: jax.Array, state: EnvState, action: jax.Array | int, params: EnvParams | None = None
) -> StepResult:
    """(obs, state, reward, done, info); `key` is unused (the rules draw from the state's seed)."""
    del key, params
    state, reward, done, info = step_state(state, action)
    return flatten_observation(observe(state)), state, reward, done, info


def reset_where(
    key: jax.Array,
    done: jax.Array,
    obs: jax.Array,
    states: EnvState,
    params: EnvParams | None = None,
) -> tuple[jax.Array, EnvState]:
    """Batched auto-reset: replace the envs where `done` with new games, generating only those.

    Not meant to be vmapped: `done` is bool[B], `obs` f32[B, 1545], `states` a
    batch of states. Equivalent to selecting `vmap(reset)` where done, but a
    fresh game is computed only for the finished envs (stage generation is the
    costliest part of the game). The new games follow `params` (curriculum starts).
    """
    seeds = jax.random.bits(key, done.shape, jnp.uint32)
    return apply_compacted(lambda seed: reset_from_seed(seed, params), done, seeds, (obs, states))


class HackMatrixEnv:
    """Thin object wrapper over the pure functions, for code that prefers one."""

    num_actions = NUM_ACTIONS
    observation_size = OBS_SIZE
    reset = staticmethod(reset)
    reset_from_seed = staticmethod(reset_from_seed)
    step = staticmethod(step)
    reset_where = staticmethod(reset_where)
    action_mask = staticmethod(action_mask)
    get_action_mask = action_mask

    @property
    def default_params(self) -> EnvParams:
        return EnvParams()
