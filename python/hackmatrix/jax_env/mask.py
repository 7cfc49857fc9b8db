"""The action mask of game-rules.md §3.2 (swift/Sources/HackMatrixCore/ActionMask.swift)."""

import jax
import jax.numpy as jnp

from .board import occupied_cells
from .constants import (
    ATK_PLUS_PER_STAGE,
    BLOCK,
    DAEMON,
    LAST_STAGE,
    MAX_HP,
    NUM_CELLS,
    PROGRAM_CREDITS,
    PROGRAM_ENERGY,
    RUNNING,
    VIRUS,
)
from .grid import NEIGHBOURS, RING, col, row
from .machinery import bits, slots
from .state import EnvState


def action_mask(state: EnvState) -> jax.Array:
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
    e_row, e_col = row(b.e_pos), col(b.e_pos)
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
            slots.any_true(b.e_active & (e_row == row(player))),  # ROW
            slots.any_true(b.e_active & (e_col == col(player))),  # COL
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
