"""spawnTransmissions (game-rules.md §9): keyed placement of new transmissions.

Mirrors swift/Sources/HackMatrixCore/Spawning.swift.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .board import occupied_cells
from .constants import (
    BLOCK,
    MAX_OCCUPANTS,
    NUM_CELLS,
    SITE_SCHED_TX_CELL,
    SITE_SCHED_TX_TYPE,
    SITE_SIPHON_TX_CELL,
    SITE_SIPHON_TX_TYPE,
    SITE_STAGE_TX_CELL,
    SITE_STAGE_TX_TYPE,
)
from .grid import CELL_COL, CELL_ROW, CELLS, cell_at, col, row
from .machinery import bits, slots
from .rng import draw_from_base, rank_keys, site_base
from .state import Board


class Source(NamedTuple):
    """Where new transmissions come from: their draw sites and origin flags (§9)."""

    cell_site: int
    type_site: int
    from_siphon: bool
    from_sched: bool


STAGE_START = Source(SITE_STAGE_TX_CELL, SITE_STAGE_TX_TYPE, False, False)  # §10.2
SCHEDULED_TASK = Source(SITE_SCHED_TX_CELL, SITE_SCHED_TX_TYPE, False, True)  # §8.6
SIPHON_BACKLOG = Source(SITE_SIPHON_TX_CELL, SITE_SIPHON_TX_TYPE, True, False)  # §8.7


def _between_tables() -> tuple[np.ndarray, np.ndarray]:
    """BETWEEN[p, x] = packed set of cells strictly between p and x when aligned, else empty."""
    lo = np.zeros((NUM_CELLS, NUM_CELLS), np.uint32)
    hi = np.zeros((NUM_CELLS, NUM_CELLS), np.uint32)
    for p in range(NUM_CELLS):
        pr, pc = row(p), col(p)
        for x in range(NUM_CELLS):
            xr, xc = row(x), col(x)
            cells: list[int] = []
            if xr == pr and x != p:
                step = 1 if xc > pc else -1
                cells = [cell_at(pr, c) for c in range(pc + step, xc, step)]
            elif xc == pc and x != p:
                step = 1 if xr > pr else -1
                cells = [cell_at(r, pc) for r in range(pr + step, xr, step)]
            for c in cells:
                if c < 18:
                    lo[p, x] |= np.uint32(1 << c)
                else:
                    hi[p, x] |= np.uint32(1 << (c - 18))
    return lo, hi


BETWEEN_LO, BETWEEN_HI = _between_tables()


def spawn_transmissions(
    board: Board, n: jax.Array, seed: jax.Array, step: jax.Array, source: Source
) -> Board:
    """Append up to n transmissions, out-of-line cells first, each group in key order."""
    has_enemy, has_tx = occupied_cells(board)
    player = board.player_pos
    is_block = board.content == BLOCK
    empty = (player != CELLS) & ~has_enemy & ~has_tx & ~is_block
    obstacles = bits.pack(has_enemy | is_block)
    aligned = (row(player) == CELL_ROW) | (col(player) == CELL_COL)
    blocked = (
        (jnp.asarray(BETWEEN_LO)[player] & obstacles.lo)
        | (jnp.asarray(BETWEEN_HI)[player] & obstacles.hi)
    ) != 0
    in_line = aligned & ~blocked
    keys = draw_from_base(site_base(seed, source.cell_site, step), CELLS)
    rank = rank_keys(keys, empty, group=in_line.astype(jnp.int32))
    placed = empty & (rank < n)
    type_base = site_base(seed, source.type_site, step)
    types = (draw_from_base(type_base, rank) % jnp.uint32(4)).astype(jnp.int32)
    start = slots.count(board.t_active)
    slot = jnp.where(placed, start + rank, MAX_OCCUPANTS)  # out-of-range slots are dropped

    def put(arr: jax.Array, values: object) -> jax.Array:
        return arr.at[slot].set(values, mode="drop")

    return board.replace(
        t_active=put(board.t_active, True),
        t_pos=put(board.t_pos, CELLS),
        t_countdown=put(board.t_countdown, 1),
        t_type=put(board.t_type, types),
        t_from_siphon=put(board.t_from_siphon, source.from_siphon),
        t_from_sched=put(board.t_from_sched, source.from_sched),
    )
