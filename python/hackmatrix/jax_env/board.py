"""Queries over a `Board` and its two lists (game-rules.md §1.7, §2): who stands where.

Enemies and transmissions live in 35 slots each, the active ones a prefix in
list order (state.py); at most one enemy and one transmission stand on a
cell, never on the player's.
"""

import jax
import jax.numpy as jnp

from .constants import MAX_OCCUPANTS, NUM_CELLS
from .machinery import bits, slots
from .machinery.bits import CellSet
from .machinery.lists import compact
from .state import Board

SLOTS = jnp.arange(MAX_OCCUPANTS, dtype=jnp.int32)
ENEMY_FIELDS = (
    "e_active",
    "e_type",
    "e_pos",
    "e_hp",
    "e_disabled",
    "e_stunned",
    "e_from_siphon",
    "e_from_sched",
    "e_last_known",
)
TRANSMISSION_FIELDS = (
    "t_active",
    "t_pos",
    "t_countdown",
    "t_type",
    "t_from_siphon",
    "t_from_sched",
)


def value_on_cells(active: jax.Array, pos: jax.Array, value: jax.Array) -> jax.Array:
    """int32[37]: the value of the active entry on each cell, -1 where none (index 36 is padding).

    At most one enemy and one transmission stand on a cell (game-rules.md
    §1.7), so one scatter suffices; `value` must be non-negative.
    """
    where = jnp.where(active, pos, NUM_CELLS)
    return jnp.full(NUM_CELLS + 1, -1, jnp.int32).at[where].set(value)


def enemy_slot_at(board: Board) -> jax.Array:
    """int32[37]: the enemy slot on each cell, -1 when none (index 36 is padding)."""
    return value_on_cells(
        board.e_active, board.e_pos, jnp.arange(board.e_active.shape[0], dtype=jnp.int32)
    )


def transmission_slot_at(board: Board) -> jax.Array:
    """int32[37]: the transmission slot on each cell, -1 when none (index 36 is padding)."""
    return value_on_cells(
        board.t_active, board.t_pos, jnp.arange(board.t_active.shape[0], dtype=jnp.int32)
    )


def _cells_of(active: jax.Array, pos: jax.Array) -> CellSet:
    lo, hi = bits.cell_bits(jnp.where(active, pos, NUM_CELLS))
    # Cells are distinct within a list: the sum is the union.
    return CellSet(slots.total(lo), slots.total(hi))


def occupied_sets(board: Board) -> tuple[CellSet, CellSet]:
    """The cells of the active enemies and the cells of the active transmissions."""
    return _cells_of(board.e_active, board.e_pos), _cells_of(board.t_active, board.t_pos)


def occupied_cells(board: Board) -> tuple[jax.Array, jax.Array]:
    """(bool[36], bool[36]): cells holding an enemy, cells holding a transmission."""
    enemies, transmissions = occupied_sets(board)
    return bits.unpack(enemies), bits.unpack(transmissions)


def remove_enemies(board: Board, dead: jax.Array) -> Board:
    """Drop the enemies where `dead`, keeping the others in list order."""
    return compact(board, board.e_active & ~dead, ENEMY_FIELDS)


def remove_transmissions(board: Board, dead: jax.Array) -> Board:
    """Drop the transmissions where `dead`, keeping the others in list order."""
    return compact(board, board.t_active & ~dead, TRANSMISSION_FIELDS)
