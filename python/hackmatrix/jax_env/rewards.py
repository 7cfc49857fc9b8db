"""Reward inputs and the 15 components (rewards.md), in float32."""

import jax.numpy as jnp
import numpy as np

from . import bits
from .constants import BLOCK, CROSS, NUM_CELLS, NUM_PROGRAMS, REWARD_COMPONENT_NAMES, STAGE_TABLE

_CROSS = np.asarray(CROSS)
_ROW = np.arange(NUM_CELLS) // 6
_COL = np.arange(NUM_CELLS) % 6
_DIST = np.abs(_ROW[:, None] - _ROW[None, :]) + np.abs(_COL[:, None] - _COL[None, :])
# Sum of TABLE over the stages completed before stage s (index s), float32, added in index order.
_CUM = np.zeros(9, np.float32)
for _s in range(2, 9):
    _CUM[_s] = np.float32(_CUM[_s - 1] + np.float32(STAGE_TABLE[_s - 2]))


def exit_distance(board, exit_pos):
    """rewards.md §5: BFS path length from the player to the exit through non-block cells; none → 0."""
    passable = bits.bor(bits.bnot(bits.pack(board.content == BLOCK)), bits.cell_bits(exit_pos))
    dist, _ = bits.first_reached(
        bits.cell_bits(board.player_pos), passable, [bits.cell_bits(exit_pos)]
    )
    return jnp.maximum(dist[0], 0)


def siphon_quality(board):
    """rewards.md §6: (found, missed_credits, missed_energy) for siphoning from the player's cell."""
    block = board.content == BLOCK
    pad_b = lambda x, fill: jnp.concatenate([x, jnp.full((1,), fill, x.dtype)])  # noqa: E731
    live = pad_b(~board.siphoned, False)
    is_block = pad_b(block, False)
    data = is_block & pad_b(board.hidden_is_data, False)
    prog = is_block & ~pad_b(board.hidden_is_data, True)
    x = jnp.asarray(_CROSS)  # [36, 5] cross cells per standing cell (36 = outside)
    take = live[x]
    values = jnp.where(take & data[x], pad_b(board.points, 0)[x], -1)
    values = jnp.sort(values, axis=-1)
    new_prog = (
        take
        & prog[x]
        & ~jnp.concatenate([board.owned, jnp.zeros(1, bool)])[pad_b(board.program, NUM_PROGRAMS)[x]]
    )
    progs = jnp.any(
        new_prog[..., None] & (pad_b(board.program, -1)[x][..., None] == jnp.arange(NUM_PROGRAMS)),
        axis=1,
    )
    loose = take & ~is_block[x]
    cr = jnp.sum(jnp.where(loose, pad_b(board.cell_credits, 0)[x], 0), axis=-1)
    en = jnp.sum(jnp.where(loose, pad_b(board.cell_energy, 0)[x], 0), axis=-1)
    standing_block = block
    values = jnp.where(standing_block[:, None], -1, values)
    progs = progs & ~standing_block[:, None]
    cr = jnp.where(standing_block, 0, cr)
    en = jnp.where(standing_block, 0, en)

    p = board.player_pos
    cur_values, cur_progs, cur_cr, cur_en = values[p], progs[p], cr[p], en[p]
    valuable = jnp.any(cur_values >= 0) | jnp.any(cur_progs)
    in_cross = jnp.zeros(NUM_CELLS + 1, bool).at[x[p]].set(True)[:NUM_CELLS]
    keep = in_cross & block & ~board.siphoned  # K: unsiphoned blocks of the player's cross
    near_all = ~jnp.any(keep[None, :] & (jnp.asarray(_DIST) > 1), axis=1)
    candidate = ~block & jnp.where(valuable, near_all, True)
    same = jnp.all(values == cur_values, axis=1) & jnp.all(progs == cur_progs, axis=1)
    dominates = candidate & same & (cr >= cur_cr) & (en >= cur_en) & ((cr > cur_cr) | (en > cur_en))
    found = jnp.any(dominates)
    missed_cr = jnp.where(found, jnp.max(jnp.where(dominates, cr, cur_cr)) - cur_cr, 0)
    missed_en = jnp.where(found, jnp.max(jnp.where(dominates, en, cur_en)) - cur_en, 0)
    return found, missed_cr, missed_en


def _f(x):
    return jnp.asarray(x, jnp.float32)


def reward_components(f):
    """The 15 components from the step's facts `f` (a dict of scalars); zeros are +0.0."""
    died, won, exit_reached = f["died"], f["won"], f["exit_reached"]
    delta = jnp.where(
        died, 0, jnp.where(exit_reached, f["dist_before"], f["dist_before"] - f["dist_after"])
    )
    lost = f["hp_before"] - f["hp_after"]
    comps = {
        "step_penalty": _f(-0.01),
        "stage_completion": jnp.where(
            exit_reached, jnp.asarray(STAGE_TABLE, jnp.float32)[f["stage_before"] - 1], 0.0
        ),
        "score_gain": _f(f["score_after"] - f["score_before"]) * _f(0.5),
        "kills": _f(f["kills"]) * _f(0.3),
        "data_siphon": jnp.where(f["data_siphon_collected"], _f(1.0), 0.0),
        "distance_shaping": _f(jnp.maximum(delta, 0)) * _f(0.05),
        "victory": jnp.where(won, _f(500.0) + _f(f["score_after"]) * _f(100.0), 0.0),
        "death_penalty": jnp.where(died, -jnp.asarray(_CUM)[f["stage_after"]] * _f(0.5), 0.0),
        "resource_gain": (
            _f(f["credits_after"] - f["credits_before"]) * _f(0.05)
            + _f(f["energy_after"] - f["energy_before"]) * _f(0.05)
        ),
        "resource_holding": jnp.where(
            exit_reached, _f(f["credits_after"]) * _f(0.01) + _f(f["energy_after"]) * _f(0.01), 0.0
        ),
        "damage_penalty": jnp.where(lost > 0, _f(lost) * _f(-1.0), 0.0),
        "hp_recovery": jnp.where(lost < 0, _f(-lost) * _f(1.0), 0.0),
        "siphon_quality": jnp.where(
            f["siphon_found"],
            _f(-0.5) * (_f(f["missed_credits"]) * _f(0.05) + _f(f["missed_energy"]) * _f(0.05)),
            0.0,
        ),
        "program_waste": jnp.where(f["reset_at_two"], _f(-0.3), 0.0),
        "siphon_death_penalty": jnp.where(f["siphon_death"], _f(-10.0), 0.0),
    }
    comps = {k: jnp.where(v == 0, _f(0.0), v).astype(jnp.float32) for k, v in comps.items()}
    total = _f(0.0)
    for name in REWARD_COMPONENT_NAMES:
        total = total + comps[name]
    return comps, total
