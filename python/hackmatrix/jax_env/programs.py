"""Program effects (game-rules.md §7), computed as one shared update selected by program index.

Under vmap every branch of a switch runs, so instead of 23 separate effects the
programs are grouped by what they touch: one enemy-damage pass (DEBUG, ROW,
COL, ANTI-V, HACK, D_BOM, CRASH, WARP, POLY's deaths), one movement pass (PUSH,
PULL), cheap scalar updates, and UNDO's board restore. Mirrors
swift/Sources/HackMatrixCore/Programs.swift.
"""

import jax
import jax.numpy as jnp

from .board import SLOTS, enemy_slot_at, transmission_slot_at
from .constants import (
    ANTI_V,
    ATK_PLUS,
    BLOCK,
    CALM,
    COL,
    CRASH,
    CRYPTOG,
    D_BOM,
    DAEMON,
    DEBUG,
    DELAY,
    DELAY_TURNS,
    EMPTY,
    ENEMY_MAX_HP,
    EXCH,
    HACK,
    LAST_STAGE,
    MAX_HP,
    NUM_CELLS,
    POLY,
    PULL,
    PUSH,
    REDUC,
    RESET,
    ROW,
    SCORE,
    SHOW,
    SIPH_PLUS,
    SITE_POLY_TYPE,
    SITE_WARP_TARGET,
    STEP,
    UNDO,
    VIRUS,
    WARP,
)
from .damage import apply_damage, remove_tx
from .events import ActionEvents
from .grid import RING, cell_at, col, manhattan, on_board, row
from .machinery.trees import select
from .rng import draw, draw_from_base, site_base
from .state import Board, EnvState
from .undo import newest


def _push_pull_wants(board: Board, pull: jax.Array) -> jax.Array:
    """The cell each enemy wants for PUSH (away) or PULL (towards); -1 when none."""
    pr, pc = row(board.player_pos), col(board.player_pos)
    er, ec = row(board.e_pos), col(board.e_pos)
    sr = jnp.sign(er - pr)
    sc = jnp.sign(ec - pc)
    sr, sc = jnp.where(pull, -sr, sr), jnp.where(pull, -sc, sc)
    cand_r = jnp.stack([er + sr, er + sr, er], axis=-1)
    cand_c = jnp.stack([ec + sc, ec, ec + sc], axis=-1)
    exists = jnp.stack([jnp.ones_like(sr, bool), sr != 0, sc != 0], axis=-1)
    ok = exists & on_board(cand_r, cand_c)
    dist = jnp.abs(cand_r - pr) + jnp.abs(cand_c - pc)
    ok = ok & ~(pull & (dist == 0))  # PULL drops the player's own cell
    # PUSH: largest distance; PULL: smallest; earliest candidate on a tie.
    score = jnp.where(pull, -dist, dist)
    score = jnp.where(ok, score, -1000)
    best = jnp.argmax(score, axis=-1)
    any_ok = jnp.any(ok, axis=-1)
    cell = jnp.take_along_axis(cell_at(cand_r, cand_c), best[:, None], axis=-1)[:, 0]
    return jnp.where(any_ok & board.e_active, cell, -1)


CHAIN_DOUBLINGS = 6  # 2**6 = 64 >= the 36 links of the longest chain or loop


def keep_unblocked(moving: jax.Array, occupant: jax.Array) -> jax.Array:
    """The movers left once every mover whose target holds a non-mover is cancelled, repeatedly.

    `occupant[i]` is the enemy on the cell mover i wants (-1: none). Passes that
    cancel such movers, repeated until one cancels nobody, keep exactly the
    movers whose chain of occupants (i wants j's cell, j wants k's, ...) holds
    only movers until it ends or loops. That AND along the chain is computed by
    pointer doubling: after r rounds `ok` covers 2**r links and `nxt` jumps
    2**r links ahead (the extra slot is a sentinel: no occupant, always fine).
    CHAIN_DOUBLINGS rounds cover any chain, with no loop waiting on the data.
    """
    sentinel = moving.shape[-1]
    nxt = jnp.append(jnp.where(occupant >= 0, occupant, sentinel), sentinel)
    ok = jnp.append(moving, True)
    for _ in range(CHAIN_DOUBLINGS):
        ok = ok & ok[nxt]
        nxt = nxt[nxt]
    return ok[:sentinel]


def _resolve_moves(board: Board, want: jax.Array) -> Board:
    """resolveMoves of §7.1: claims in list order, then cascading cancellations."""
    has_want = want >= 0
    same = (want[None, :] == want[:, None]) & has_want[None, :] & (SLOTS[None, :] < SLOTS[:, None])
    moving = has_want & ~jnp.any(same, axis=1)
    w = jnp.clip(want, 0, NUM_CELLS - 1)
    tx_there = transmission_slot_at(board)[w] >= 0
    occupant = enemy_slot_at(board)[w]
    moving = keep_unblocked(moving & ~tx_there, occupant)
    return board.replace(e_pos=jnp.where(moving, want, board.e_pos))


def _poly(board: Board, seed: jax.Array, step: jax.Array) -> tuple[Board, jax.Array]:
    """POLY: every enemy becomes another type, keeping its damage; returns (board, killed)."""
    types = board.e_type
    damage = jnp.asarray(ENEMY_MAX_HP)[types] - board.e_hp
    idx = (draw_from_base(site_base(seed, SITE_POLY_TYPE, step), SLOTS) % jnp.uint32(3)).astype(
        jnp.int32
    )
    new_type = idx + (idx >= types)
    hp = jnp.asarray(ENEMY_MAX_HP)[new_type] - damage
    act = board.e_active
    board = board.replace(
        e_type=jnp.where(act, new_type, types),
        e_hp=jnp.where(act, hp, board.e_hp),
        e_last_known=jnp.where(act & (new_type == CRYPTOG), board.e_pos, board.e_last_known),
    )
    return board, act & (hp <= 0)


def run_program(state: EnvState, p: jax.Array, history: jax.Array) -> tuple[EnvState, ActionEvents]:
    """Apply program p's effect (cost already paid); UNDO reads `history`."""
    b = state.board
    seed, step = state.seed, state.step_index
    player = b.player_pos
    pr, pc = row(player), col(player)
    act = b.e_active
    is_block = b.content == BLOCK
    e_row, e_col = row(b.e_pos), col(b.e_pos)
    on_block = is_block[b.e_pos]
    ring = jnp.asarray(RING)[player]
    e_in_ring = act & ring[b.e_pos]
    t_in_ring = b.t_active & ring[b.t_pos]

    # --- enemy damage (one pass for every damaging program) ---
    dist = manhattan(b.e_pos, player)
    daemon = act & (b.e_type == DAEMON)
    d_slot = jnp.argmin(jnp.where(daemon, dist, 1 << 20))
    d_cell = b.e_pos[d_slot]
    splash = act & jnp.asarray(RING)[d_cell][b.e_pos] & (d_slot != SLOTS)
    n_e = jnp.sum(act).astype(jnp.int32)
    n_t = jnp.sum(b.t_active).astype(jnp.int32)
    warp_k = (
        draw(seed, SITE_WARP_TARGET, step, 0) % jnp.maximum(n_e + n_t, 1).astype(jnp.uint32)
    ).astype(jnp.int32)
    warp_enemy = warp_k < n_e
    warp_cell = jnp.where(
        warp_enemy, b.e_pos[jnp.clip(warp_k, 0, 34)], b.t_pos[jnp.clip(warp_k - n_e, 0, 34)]
    )

    attack = b.attack
    damage = jnp.select(
        [p == DEBUG, p == ROW, p == COL, p == HACK, p == ANTI_V, p == D_BOM],
        [
            jnp.where(on_block, attack, 0),
            jnp.where(e_row == pr, attack, 0),
            jnp.where(e_col == pc, attack, 0),
            jnp.where(b.siphoned[b.e_pos], attack, 0),
            jnp.where(b.e_type == VIRUS, 1, 0),
            jnp.where(splash, 1, 0),
        ],
        jnp.zeros_like(b.e_hp),
    )
    damage = jnp.where(act, damage, 0)
    poly_board, poly_dead = _poly(b, seed, step)
    b = select(p == POLY, poly_board, b)
    kill = jnp.select(
        [p == CRASH, p == WARP, p == D_BOM, p == POLY],
        [e_in_ring, warp_enemy & (warp_k == SLOTS), d_slot == SLOTS, poly_dead],
        jnp.zeros_like(act),
    )
    b, e_kills = apply_damage(b, damage, stun=True, kill=kill)
    t_dead = jnp.select(
        [p == CRASH, p == WARP],
        [t_in_ring, ~warp_enemy & (warp_k - n_e == SLOTS)],
        jnp.zeros_like(act),
    )
    b, t_kills = remove_tx(b, t_dead)

    # --- movement (PUSH / PULL) ---
    moved = _resolve_moves(b, _push_pull_wants(b, p == PULL))
    b = b.replace(e_pos=jnp.where((p == PUSH) | (p == PULL), moved.e_pos, b.e_pos))

    # --- cells: CRASH clears blocks in the ring, REDUC lowers spawn counts ---
    crashed = (p == CRASH) & ring & is_block
    reduc = (p == REDUC) & is_block & ~b.siphoned
    b = b.replace(
        content=jnp.where(crashed, EMPTY, b.content),
        block_kind=jnp.where(crashed, 0, b.block_kind),
        hidden_is_data=b.hidden_is_data & ~crashed,
        points=jnp.where(crashed, 0, b.points),
        program=jnp.where(crashed, 0, b.program),
        spawn_count=jnp.where(
            crashed, 0, jnp.where(reduc, jnp.maximum(0, b.spawn_count - 1), b.spawn_count)
        ),
        t_countdown=jnp.where(
            (p == DELAY) & b.t_active, b.t_countdown + DELAY_TURNS, b.t_countdown
        ),
    )

    # --- player scalars ---
    b = b.replace(
        player_pos=jnp.where(p == WARP, warp_cell, b.player_pos),
        data_siphons=b.data_siphons + (p == SIPH_PLUS),
        energy=b.energy + jnp.where(p == EXCH, 4, 0),
        hp=jnp.where(p == RESET, MAX_HP, b.hp),
        score=b.score + jnp.where(p == SCORE, LAST_STAGE - state.stage, 0),
        attack=b.attack + (p == ATK_PLUS),
        atk_plus_uses=b.atk_plus_uses + (p == ATK_PLUS),
        show_activated=b.show_activated | (p == SHOW),
        tasks_disabled=b.tasks_disabled | (p == CALM),
    )
    state = state.replace(board=b, step_active=state.step_active | (p == STEP))

    # --- UNDO: pop the newest snapshot ---
    snapshot = newest(history, state.history_count, state.history_start)
    undo = p == UNDO
    state = state.replace(
        board=select(undo, snapshot, state.board),
        history_count=state.history_count - undo.astype(jnp.int32),
    )
    ev = ActionEvents(
        enemies_killed=e_kills,
        transmissions_killed=t_kills,
        data_siphon_collected=jnp.asarray(False),
        exit_reached=(p == WARP) & (warp_cell == state.exit_pos),
    )
    return state, ev
