"""spawnTransmissions (game-rules.md §9): keyed placement of new transmissions."""

import jax.numpy as jnp
import numpy as np

from . import bits, slots
from .constants import BLOCK, CELL_COL, CELL_ROW, MAX_OCCUPANTS, NUM_CELLS
from .rng import draw_from_base, rank_keys, site_base


def _between_tables():
    """BETWEEN[p, x] = packed set of cells strictly between p and x when aligned, else empty."""
    lo = np.zeros((NUM_CELLS, NUM_CELLS), np.uint32)
    hi = np.zeros((NUM_CELLS, NUM_CELLS), np.uint32)
    for p in range(NUM_CELLS):
        pr, pc = divmod(p, 6)
        for x in range(NUM_CELLS):
            xr, xc = divmod(x, 6)
            cells = []
            if xr == pr and x != p:
                step = 1 if xc > pc else -1
                cells = [pr * 6 + c for c in range(pc + step, xc, step)]
            elif xc == pc and x != p:
                step = 1 if xr > pr else -1
                cells = [r * 6 + pc for r in range(pr + step, xr, step)]
            for c in cells:
                if c < 18:
                    lo[p, x] |= np.uint32(1 << c)
                else:
                    hi[p, x] |= np.uint32(1 << (c - 18))
    return lo, hi


BETWEEN_LO, BETWEEN_HI = _between_tables()
CELLS = np.arange(NUM_CELLS, dtype=np.int32)


def occupied_words(board):
    """Packed cell sets (lo, hi) of the active enemies and of the active transmissions."""

    def cells(active, pos):
        lo, hi = bits.cell_bits(jnp.where(active, pos, NUM_CELLS))
        return slots.total(lo), slots.total(
            hi
        )  # cells are distinct within a list: the sum is the union

    return cells(board.e_active, board.e_pos), cells(board.t_active, board.t_pos)


def occupied_cells(board):
    """(bool[36], bool[36]): cells holding an enemy, cells holding a transmission."""
    enemies, transmissions = occupied_words(board)
    return bits.unpack(enemies), bits.unpack(transmissions)


def spawn_transmissions(board, n, seed, step, cell_site, type_site, from_siphon, from_sched):
    """Append up to n transmissions, out-of-line cells first, each group in key order."""
    has_enemy, has_tx = occupied_cells(board)
    player = board.player_pos
    is_block = board.content == BLOCK
    empty = (player != CELLS) & ~has_enemy & ~has_tx & ~is_block
    obstacles = bits.pack(has_enemy | is_block)
    aligned = (player // 6 == CELL_ROW) | (player % 6 == CELL_COL)
    blocked = (
        (jnp.asarray(BETWEEN_LO)[player] & obstacles[0])
        | (jnp.asarray(BETWEEN_HI)[player] & obstacles[1])
    ) != 0
    in_line = aligned & ~blocked
    keys = draw_from_base(site_base(seed, cell_site, step), CELLS)
    rank = rank_keys(keys, empty, group=in_line.astype(jnp.int32))
    placed = empty & (rank < n)
    type_base = site_base(seed, type_site, step)
    types = (draw_from_base(type_base, rank) % jnp.uint32(4)).astype(jnp.int32)
    start = slots.count(board.t_active)
    slot = jnp.where(placed, start + rank, MAX_OCCUPANTS)  # out-of-range slots are dropped

    def put(arr, values):
        return arr.at[slot].set(values, mode="drop")

    return board.replace(
        t_active=put(board.t_active, True),
        t_pos=put(board.t_pos, CELLS),
        t_countdown=put(board.t_countdown, 1),
        t_type=put(board.t_type, types),
        t_from_siphon=put(board.t_from_siphon, from_siphon),
        t_from_sched=put(board.t_from_sched, from_sched),
    )
