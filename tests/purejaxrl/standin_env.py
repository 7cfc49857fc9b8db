"""A tiny stand-in game with the exact `hackmatrix.jax_env` interface.

Used only to test the trainer's plumbing quickly and independently of the
real engine: a 6x6 walk to an exit past hazard cells, three stages, the same
observation size, 28 actions with masks and the 15 reward component names.
"""

from __future__ import annotations

import types

import flax.struct
import jax
import jax.numpy as jnp

from hackmatrix.names import REWARD_COMPONENT_NAMES  # the interface asks for the real names

SIZE = 6
NUM_STAGES = 3
EXIT = jnp.array([5, 5])
MOVES = jnp.array([[-1, 0], [1, 0], [0, -1], [0, 1]])


@flax.struct.dataclass
class EnvParams:
    pass


@flax.struct.dataclass
class EnvState:
    pos: jnp.ndarray
    stage: jnp.ndarray
    hazards: jnp.ndarray
    seed: jnp.ndarray


def _hazards(seed, stage):
    key = jax.random.fold_in(jax.random.PRNGKey(seed), stage)
    cells = jax.random.bernoulli(key, 0.2, (SIZE, SIZE))
    return cells.at[0, 0].set(False).at[5, 5].set(False)


def _observe(state):
    grid = jnp.zeros((SIZE, SIZE, 42))
    grid = grid.at[state.pos[0], state.pos[1], 0].set(1.0)
    grid = grid.at[5, 5, 1].set(1.0)
    grid = grid.at[:, :, 2].set(state.hazards.astype(jnp.float32))
    player = jnp.zeros(10).at[0].set(state.stage / 8.0)
    return jnp.concatenate([player, jnp.zeros(23), grid.reshape(-1)])


def reset(key, params):
    seed = jax.random.bits(key, (), jnp.uint32)
    state = EnvState(
        pos=jnp.zeros(2, jnp.int32), stage=jnp.int32(1), hazards=_hazards(seed, 1), seed=seed
    )
    return _observe(state), state


def action_mask(state):
    target = state.pos[None, :] + MOVES
    moves_ok = jnp.all((target >= 0) & (target < SIZE), axis=-1)
    siphon_ok = (state.pos[0] + state.pos[1]) % 2 == 0
    return jnp.concatenate([moves_ok, siphon_ok[None], jnp.zeros(23, bool)])


def _distance(pos):
    return jnp.sum(jnp.abs(EXIT - pos))


def step(key, state, action, params):
    del key  # like the real engine, randomness comes from the state
    valid = action_mask(state)[jnp.clip(action, 0, 27)] & (action >= 0) & (action < 28)
    is_move = action < 4
    new_pos = jnp.where(is_move, state.pos + MOVES[jnp.clip(action, 0, 3)], state.pos)
    died = state.hazards[new_pos[0], new_pos[1]]
    reached = jnp.all(new_pos == EXIT)
    won = reached & (state.stage == NUM_STAGES)
    next_stage = jnp.where(reached & ~won, state.stage + 1, state.stage)
    moved = EnvState(
        pos=jnp.where(reached, jnp.zeros(2, jnp.int32), new_pos),
        stage=next_stage,
        hazards=jnp.where(reached, _hazards(state.seed, next_stage), state.hazards),
        seed=state.seed,
    )
    comps = {name: jnp.float32(0.0) for name in REWARD_COMPONENT_NAMES}
    comps["step_penalty"] = jnp.float32(-0.01)
    comps["stage_completion"] = jnp.where(reached, 2.0 ** (state.stage - 1), 0.0).astype(
        jnp.float32
    )
    comps["distance_shaping"] = (
        0.05 * jnp.maximum(_distance(state.pos) - _distance(new_pos), 0)
    ).astype(jnp.float32)
    comps["death_penalty"] = jnp.where(died, -0.5 * (2.0 ** (state.stage - 1) - 1), 0.0).astype(
        jnp.float32
    )
    comps["victory"] = jnp.where(won, 5.0, 0.0).astype(jnp.float32)
    comps = {k: jnp.where(valid, v, 0.0) for k, v in comps.items()}
    new_state = jax.tree_util.tree_map(lambda a, b: jnp.where(valid, a, b), moved, state)
    reward = sum(comps[name] for name in REWARD_COMPONENT_NAMES)
    done = valid & (died | won)
    info = {
        "reward_components": comps,
        "invalid_action": ~valid,
        "stage": new_state.stage,
        "score": jnp.int32(0),
        "hp": jnp.where(done & died, 0, 3).astype(jnp.int32),
        "won": done & won,
        "died": done & died,
        # The hand never changes here: no programs, no data siphons.
        "programs_gained": jnp.zeros(23, jnp.int32),
        "data_siphons_gained": jnp.int32(0),
    }
    return _observe(new_state), new_state, reward, done, info


def variant(*, action_mask=action_mask, reset=reset, step=step):
    """This game with some of its functions replaced: a module-like object the trainer takes
    as its env (tests that need, e.g., a program always offered or a reward of their own)."""
    return types.SimpleNamespace(
        EnvParams=EnvParams,
        REWARD_COMPONENT_NAMES=REWARD_COMPONENT_NAMES,
        action_mask=action_mask,
        reset=reset,
        step=step,
    )
