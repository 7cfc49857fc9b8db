"""The action mask of game-rules.md §3.2."""

import jax.numpy as jnp

from . import bits, slots
from .constants import (
    ATK_PLUS_PER_STAGE,
    BLOCK,
    DAEMON,
    LAST_STAGE,
    MAX_HP,
    NEIGHBOURS,
    NUM_CELLS,
    PROGRAM_CREDITS,
    PROGRAM_ENERGY,
    RING,
    RUNNING,
    VIRUS,
)
from .spawning import occupied_cells


def value_on_cells(active, pos, value):
    """int32[37]: the value of the active entry on each cell, -1 where none (index 36 is padding).

    At most one enemy and one transmission stand on a cell (game-rules.md
    §1.7), so one scatter suffices; `value` must be non-negative.
    """
    where = jnp.where(active, pos, NUM_CELLS)
    return jnp.full(NUM_CELLS + 1, -1, jnp.int32).at[where].set(value)


def enemy_slot_at(board):
    """int32[37]: the enemy slot on each cell, -1 when none (index 36 is padding)."""
    return value_on_cells(
        board.e_active, board.e_pos, jnp.arange(board.e_active.shape[0], dtype=jnp.int32)
    )


def transmission_slot_at(board):
    return value_on_cells(
        board.t_active, board.t_pos, jnp.arange(board.t_active.shape[0], dtype=jnp.int32)
    )


def action_mask(state):
    """bool[28]; all false once the game is over."""
    b = state.board
    player = b.player_pos
    has_enemy, has_tx = occupied_cells(b)
    is_block = b.content == BLOCK
    targets = jnp.asarray(NEIGHBOURS)[player]
    in_bounds = targets < NUM_CELLS
    t = jnp.clip(targets, 0, NUM_CELLS - 1)
    directions = in_bounds & (~is_block[t] | has_enemy[t])
    siphon = b.data_siphons > 0

    any_enemy = slots.any_true(b.e_active)
    any_tx = slots.any_true(b.t_active)
    ring = jnp.asarray(RING)[player]
    e_row, e_col = b.e_pos // 6, b.e_pos % 6
    on_block = is_block[b.e_pos] & b.e_active
    conditions = jnp.stack(
        [
            any_enemy,  # PUSH
            any_enemy,  # PULL
            bits.any_cell(ring & (is_block | has_enemy | has_tx)),  # CRASH
            any_enemy | any_tx,  # WARP
            any_enemy,  # POLY
            True,  # WAIT
            slots.any_true(on_block),  # DEBUG
            slots.any_true(b.e_active & (e_row == player // 6)),  # ROW
            slots.any_true(b.e_active & (e_col == player % 6)),  # COL
            state.history_count > 0,  # UNDO
            True,  # STEP
            True,  # SIPH+
            b.credits >= 4,  # EXCH
            ~b.show_activated,  # SHOW
            b.hp < MAX_HP,  # RESET
            ~b.tasks_disabled,  # CALM
            slots.any_true(b.e_active & (b.e_type == DAEMON)),  # D_BOM
            any_tx,  # DELAY
            slots.any_true(b.e_active & (b.e_type == VIRUS)),  # ANTI-V
            state.stage < LAST_STAGE,  # SCORE
            bits.any_cell(is_block & ~b.siphoned & (b.spawn_count > 0)),  # REDUC
            b.atk_plus_uses < ATK_PLUS_PER_STAGE,  # ATK+
            bits.any_cell(b.siphoned),  # HACK
        ]
    )
    programs = (
        b.owned
        & (b.credits >= jnp.asarray(PROGRAM_CREDITS))
        & (b.energy >= jnp.asarray(PROGRAM_ENERGY))
        & conditions
    )
    mask = jnp.concatenate([directions, siphon[None], programs])
    return mask & (state.outcome == RUNNING)


get_action_mask = action_mask
