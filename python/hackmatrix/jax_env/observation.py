"""Numeric observation (observation.md §3-§5, §8) computed straight from the state."""

import jax.numpy as jnp
import numpy as np

from .constants import (BLOCK, CRYPTOG, DATA_SIPHON, EXIT, KIND_DATA, KIND_PROGRAM, KIND_QUESTION, NUM_CELLS)
from .mask import enemy_slot_at, transmission_slot_at

_CELL_ROW = np.arange(NUM_CELLS) // 6
_CELL_COL = np.arange(NUM_CELLS) % 6


def _ratio(x, denom):
    """sat(f32(x / denom)) as a table lookup of correctly rounded quotients.

    Saturation means only x in 0..denom matter. A lookup (rather than a float
    division) keeps the bits exact: XLA may rewrite x / c as x * (1 / c).
    """
    table = np.array([np.float32(k / denom) for k in range(denom + 1)], np.float32)
    return jnp.asarray(table)[jnp.clip(x, 0, denom)]


def _flag(x):
    return x.astype(jnp.float32)


def observe(state):
    """{"player": f32[10], "programs": i32[23], "grid": f32[6,6,42]}."""
    b = state.board
    pr, pc = b.player_pos // 6, b.player_pos % 6
    player = jnp.stack([
        _ratio(pr, 5), _ratio(pc, 5), _ratio(b.hp, 3), _ratio(b.credits, 50), _ratio(b.energy, 50),
        _ratio(state.stage - 1, 7), _ratio(b.data_siphons, 10), _ratio(b.attack - 1, 2),
        _flag(b.show_activated), _flag(b.tasks_disabled)])
    programs = b.owned.astype(jnp.int32)

    slot = enemy_slot_at(b)[:NUM_CELLS]
    has_enemy = slot >= 0
    s = jnp.clip(slot, 0, b.e_active.shape[0] - 1)
    etype = b.e_type[s]
    visible = has_enemy & ((etype != CRYPTOG) | (_CELL_ROW == pr) | (_CELL_COL == pc) | b.show_activated)
    enemy = [_flag(visible & (etype == t)) for t in range(4)]
    enemy += [jnp.where(visible, _ratio(b.e_hp[s], 3), 0.0), _flag(visible & b.e_stunned[s]),
              _flag(visible & b.e_from_siphon[s])]

    block = b.content == BLOCK
    kind = b.block_kind
    shows_contents = block & (kind != KIND_QUESTION)
    data = shows_contents & (kind == KIND_DATA)
    prog = shows_contents & (kind == KIND_PROGRAM)
    block_ch = [_flag(data), _flag(prog), _flag(block & (kind == KIND_QUESTION)),
                jnp.where(data, _ratio(b.points, 9), 0.0), _flag(block & b.siphoned)]
    program_onehot = (prog[:, None] & (b.program[:, None] == jnp.arange(23)[None, :])).astype(jnp.float32)
    spawn = jnp.where(shows_contents, _ratio(b.spawn_count, 9), 0.0)

    tslot = transmission_slot_at(b)[:NUM_CELLS]
    countdown = jnp.where(tslot >= 0, _ratio(b.t_countdown[jnp.clip(tslot, 0, 34)], 4), 0.0)
    res_visible = ~block | b.siphoned
    credits = jnp.where(res_visible, _ratio(b.cell_credits, 3), 0.0)
    energy = jnp.where(res_visible, _ratio(b.cell_energy, 3), 0.0)
    tail = [spawn, countdown, credits, energy, _flag(b.content == DATA_SIPHON), _flag(b.content == EXIT),
            _flag(b.siphon_center)]
    grid = jnp.concatenate([jnp.stack(enemy + block_ch, axis=-1), program_onehot, jnp.stack(tail, axis=-1)], axis=-1)
    return {"player": player, "programs": programs, "grid": grid.reshape(6, 6, 42)}


def flatten_observation(parts):
    """player ‖ float32(programs) ‖ grid (row-major) = f32[1545] (§8); works on batches too."""
    lead = parts["player"].shape[:-1]
    return jnp.concatenate([parts["player"], parts["programs"].astype(jnp.float32),
                            parts["grid"].reshape(lead + (-1,))], axis=-1)
