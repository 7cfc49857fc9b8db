"""Reward inputs and the 15 components (rewards.md), in float32.

Mirrors swift/Sources/HackMatrixCore/Rewards.swift: a `RewardBaseline` taken
before the action, the state after the whole step and its `StepEvents` give
the components.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .constants import BLOCK, NUM_CELLS, NUM_PROGRAMS, REWARD_COMPONENT_NAMES, STAGE_TABLE
from .events import StepEvents
from .grid import CROSS, DISTANCE
from .machinery import bits
from .state import Board, EnvState

# Sum of TABLE over the stages completed before stage s (index s), float32, added in index order.
_CUM = np.zeros(9, np.float32)
for _s in range(2, 9):
    _CUM[_s] = np.float32(_CUM[_s - 1] + np.float32(STAGE_TABLE[_s - 2]))


class SiphonQuality(NamedTuple):
    """rewards.md §6 for a siphon from the player's cell (all zero for other actions)."""

    found: jax.Array  # bool: a better cell exists (the siphon was not optimal)
    missed_credits: jax.Array  # int32
    missed_energy: jax.Array  # int32

    @staticmethod
    def none() -> "SiphonQuality":
        zero = jnp.asarray(0, jnp.int32)
        return SiphonQuality(jnp.asarray(False), zero, zero)


class RewardBaseline(NamedTuple):
    """What the reward needs from the state before the action (rewards.md §3)."""

    score: jax.Array
    hp: jax.Array
    credits: jax.Array
    energy: jax.Array
    stage: jax.Array  # the stage being played; the completed one when the exit is reached
    exit_distance: jax.Array  # "no path" read as 0
    siphon_quality: SiphonQuality


def reward_baseline(state: EnvState, quality: SiphonQuality) -> RewardBaseline:
    b = state.board
    return RewardBaseline(
        score=b.score,
        hp=b.hp,
        credits=b.credits,
        energy=b.energy,
        stage=state.stage,
        exit_distance=exit_distance(b, state.exit_pos),
        siphon_quality=quality,
    )


def exit_distance(board: Board, exit_pos: jax.Array) -> jax.Array:
    """rewards.md §5: BFS path length from the player to the exit via non-block cells; none → 0."""
    exit_cell = bits.cell_bits(exit_pos)
    passable = ~bits.pack(board.content == BLOCK) | exit_cell
    dist, _ = bits.first_reached(bits.cell_bits(board.player_pos), passable, [exit_cell])
    return jnp.maximum(dist[0], 0)


def _padded(x: jax.Array, fill: int | bool) -> jax.Array:
    """x with one more entry, `fill`, at index 36 (the cross's off-board cell)."""
    return jnp.concatenate([x, jnp.full((1,), fill, x.dtype)])


def siphon_quality(board: Board) -> SiphonQuality:
    """rewards.md §6: the quality of a siphon from the player's cell."""
    block = board.content == BLOCK
    live = _padded(~board.siphoned, False)
    is_block = _padded(block, False)
    data = is_block & _padded(board.hidden_is_data, False)
    prog = is_block & ~_padded(board.hidden_is_data, True)
    x = jnp.asarray(CROSS)  # [36, 5] cross cells per standing cell (36 = outside)
    take = live[x]
    values = jnp.where(take & data[x], _padded(board.points, 0)[x], -1)
    values = jnp.sort(values, axis=-1)
    new_prog = (
        take
        & prog[x]
        & ~jnp.concatenate([board.owned, jnp.zeros(1, bool)])[
            _padded(board.program, NUM_PROGRAMS)[x]
        ]
    )
    progs = jnp.any(
        new_prog[..., None]
        & (_padded(board.program, -1)[x][..., None] == jnp.arange(NUM_PROGRAMS)),
        axis=1,
    )
    loose = take & ~is_block[x]
    cr = jnp.sum(jnp.where(loose, _padded(board.cell_credits, 0)[x], 0), axis=-1)
    en = jnp.sum(jnp.where(loose, _padded(board.cell_energy, 0)[x], 0), axis=-1)
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
    near_all = ~jnp.any(keep[None, :] & (jnp.asarray(DISTANCE) > 1), axis=1)
    candidate = ~block & jnp.where(valuable, near_all, True)
    same = jnp.all(values == cur_values, axis=1) & jnp.all(progs == cur_progs, axis=1)
    dominates = candidate & same & (cr >= cur_cr) & (en >= cur_en) & ((cr > cur_cr) | (en > cur_en))
    found = jnp.any(dominates)
    missed_cr = jnp.where(found, jnp.max(jnp.where(dominates, cr, cur_cr)) - cur_cr, 0)
    missed_en = jnp.where(found, jnp.max(jnp.where(dominates, en, cur_en)) - cur_en, 0)
    return SiphonQuality(found, missed_cr, missed_en)


def _f(x: object) -> jax.Array:
    return jnp.asarray(x, jnp.float32)


def reward_components(
    before: RewardBaseline, after: EnvState, ev: StepEvents
) -> tuple[dict[str, jax.Array], jax.Array, jax.Array]:
    """The 15 components, their sum (in canonical order; zeros are +0.0), and the signed
    exit-distance change `distance_shaping` clamps at 0 (int32; info, not a reward)."""
    a = after.board
    died, won, exit_reached = ev.player_died, ev.game_won, ev.exit_reached
    dist_after = exit_distance(a, after.exit_pos)
    delta = jnp.where(
        died, 0, jnp.where(exit_reached, before.exit_distance, before.exit_distance - dist_after)
    )
    lost = before.hp - a.hp
    quality = before.siphon_quality
    comps = {
        "step_penalty": _f(-0.01),
        "stage_completion": jnp.where(
            exit_reached, jnp.asarray(STAGE_TABLE, jnp.float32)[before.stage - 1], 0.0
        ),
        "score_gain": _f(a.score - before.score) * _f(0.5),
        "kills": _f(ev.enemies_killed + ev.transmissions_killed) * _f(0.3),
        "data_siphon": jnp.where(ev.data_siphon_collected, _f(1.0), 0.0),
        "distance_shaping": _f(jnp.maximum(delta, 0)) * _f(0.05),
        "victory": jnp.where(won, _f(500.0) + _f(a.score) * _f(100.0), 0.0),
        "death_penalty": jnp.where(died, -jnp.asarray(_CUM)[after.stage] * _f(0.5), 0.0),
        "resource_gain": (
            _f(a.credits - before.credits) * _f(0.05) + _f(a.energy - before.energy) * _f(0.05)
        ),
        "resource_holding": jnp.where(
            exit_reached, _f(a.credits) * _f(0.01) + _f(a.energy) * _f(0.01), 0.0
        ),
        "damage_penalty": jnp.where(lost > 0, _f(lost) * _f(-1.0), 0.0),
        "hp_recovery": jnp.where(lost < 0, _f(-lost) * _f(1.0), 0.0),
        "siphon_quality": jnp.where(
            ev.siphon_used & quality.found,
            _f(-0.5)
            * (_f(quality.missed_credits) * _f(0.05) + _f(quality.missed_energy) * _f(0.05)),
            0.0,
        ),
        "program_waste": jnp.where(ev.reset_at_two, _f(-0.3), 0.0),
        "siphon_death_penalty": jnp.where(ev.died_to_siphon_enemy, _f(-10.0), 0.0),
    }
    comps = {k: jnp.where(v == 0, _f(0.0), v).astype(jnp.float32) for k, v in comps.items()}
    total = _f(0.0)
    for name in REWARD_COMPONENT_NAMES:
        total = total + comps[name]
    return comps, total, delta.astype(jnp.int32)
