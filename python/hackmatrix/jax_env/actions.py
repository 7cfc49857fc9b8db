"""The player's own actions: directional attack/move (§5) and siphon (§6).

Mirrors swift/Sources/HackMatrixCore/Directional.swift and Siphon.swift.
"""

import jax
import jax.numpy as jnp

from .board import SLOTS, enemy_slot_at, transmission_slot_at
from .constants import (
    BLOCK,
    DATA_SIPHON,
    EMPTY,
    KIND_DATA,
    KIND_PROGRAM,
    MIN_INTERVAL,
    NUM_CELLS,
    SIPHON_DELAY,
)
from .damage import apply_damage, remove_tx
from .events import ActionEvents
from .grid import CROSS, DIR_DCOL, DIR_DROW, OFF_BOARD, cell_at, col, on_board, row
from .state import EnvState

_K = jnp.arange(1, 6, dtype=jnp.int32)  # steps along a line


def directional(state: EnvState, direction: jax.Array) -> tuple[EnvState, ActionEvents]:
    """§5: attack the first enemy/transmission along the line, or step one cell."""
    b = state.board
    rows = row(b.player_pos) + jnp.asarray(DIR_DROW)[direction] * _K
    cols = col(b.player_pos) + jnp.asarray(DIR_DCOL)[direction] * _K
    inside = on_board(rows, cols)
    cells = jnp.where(inside, cell_at(rows, cols), OFF_BOARD)
    enemy_at = enemy_slot_at(b)[cells]
    tx_at = transmission_slot_at(b)[cells]
    block = jnp.concatenate([b.content == BLOCK, jnp.zeros(1, jnp.bool_)])[cells]
    target_here = inside & ((enemy_at >= 0) | (tx_at >= 0))
    # A target counts only if no block lies strictly before it on the line.
    blocked_before = jnp.cumsum(block) - block > 0
    hits = target_here & ~blocked_before
    attacked = jnp.any(hits)
    k = jnp.argmax(hits)
    e_slot, t_slot = enemy_at[k], tx_at[k]
    damage = jnp.where(attacked & (SLOTS == e_slot), b.attack, 0)
    board, e_kills = apply_damage(b, damage, stun=True)
    board, t_kills = remove_tx(board, attacked & (SLOTS == t_slot))
    # Move (the mask guarantees the step is legal when nothing was hit).
    dest = cells[0]
    moves = ~attacked
    picks = moves & (board.content[jnp.clip(dest, 0, 35)] == DATA_SIPHON)
    board = board.replace(
        player_pos=jnp.where(moves, dest, board.player_pos),
        data_siphons=board.data_siphons + picks.astype(jnp.int32),
        content=jnp.where(picks & (jnp.arange(NUM_CELLS) == dest), EMPTY, board.content),
    )
    ev = ActionEvents(
        enemies_killed=e_kills,
        transmissions_killed=t_kills,
        data_siphon_collected=picks,
        exit_reached=moves & (dest == state.exit_pos),
    )
    return state.replace(board=board), ev


def siphon(state: EnvState) -> EnvState:
    """§6: drain the cross of the player's cell."""
    b = state.board
    cross = jnp.asarray(CROSS)[b.player_pos]
    in_cross = jnp.zeros(NUM_CELLS + 1, jnp.bool_).at[cross].set(True)[:NUM_CELLS]
    todo = in_cross & ~b.siphoned
    block = todo & (b.content == BLOCK)
    data = block & b.hidden_is_data
    prog = block & ~b.hidden_is_data
    gained = (
        jnp.zeros(b.owned.shape[0] + 1, jnp.bool_)
        .at[jnp.where(prog, b.program, b.owned.shape[0])]
        .set(True)
    )
    owned = b.owned | gained[:-1]
    loose = todo & ~block
    credits = jnp.sum(jnp.where(loose, b.cell_credits, 0))
    energy = jnp.sum(jnp.where(loose, b.cell_energy, 0))
    board = b.replace(
        score=b.score + jnp.sum(jnp.where(data, b.points, 0)),
        owned=owned,
        credits=b.credits + credits,
        energy=b.energy + energy,
        data_siphons=b.data_siphons - 1,
        block_kind=jnp.where(block, jnp.where(data, KIND_DATA, KIND_PROGRAM), b.block_kind),
        spawn_count=jnp.where(block, 0, b.spawn_count),
        cell_credits=jnp.where(loose, 0, b.cell_credits),
        cell_energy=jnp.where(loose, 0, b.cell_energy),
        siphoned=b.siphoned | in_cross,
        siphon_center=b.siphon_center | (jnp.arange(NUM_CELLS) == b.player_pos),
    )
    return state.replace(
        board=board,
        pending=state.pending + jnp.sum(jnp.where(block, b.spawn_count, 0)),
        interval=jnp.maximum(MIN_INTERVAL, state.interval - 1),
        next_task_turn=state.next_task_turn + SIPHON_DELAY,
    )
