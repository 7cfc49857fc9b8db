"""The enemy phase (game-rules.md §8): tick, keyed activation, movement, tasks, housekeeping, snapshot."""

import jax
import jax.numpy as jnp

from . import bits
from .constants import (BLOCK, CRYPTOG, ENEMY_MAX_HP, GLITCH, MAX_OCCUPANTS, NEIGHBOURS, NUM_CELLS,
                        SITE_ENEMY_ORDER_A, SITE_ENEMY_ORDER_B, SITE_SCHED_TX_CELL, SITE_SCHED_TX_TYPE,
                        SITE_SIPHON_TX_CELL, SITE_SIPHON_TX_TYPE, UNDO_DEPTH, VIRUS)
from .lists import TRANSMISSION_FIELDS, compact
from .rng import draw_from_base, rank_keys, site_base
from .batching import where_needed
from .spawning import spawn_transmissions

SLOTS = jnp.arange(MAX_OCCUPANTS, dtype=jnp.int32)


def tick_transmissions(board):
    """§8.3: countdown-1 transmissions hatch (appended to E in T order), the others count down."""
    hatch = board.t_active & (board.t_countdown <= 1)
    rank = jnp.cumsum(hatch) - hatch
    start = jnp.sum(board.e_active).astype(jnp.int32)
    slot = jnp.where(hatch, start + rank, MAX_OCCUPANTS)

    def put(arr, values):
        return arr.at[slot].set(values, mode="drop")

    board = board.replace(
        e_active=put(board.e_active, True), e_type=put(board.e_type, board.t_type), e_pos=put(board.e_pos, board.t_pos),
        e_hp=put(board.e_hp, jnp.asarray(ENEMY_MAX_HP)[board.t_type]), e_disabled=put(board.e_disabled, 1),
        e_stunned=put(board.e_stunned, False), e_from_siphon=put(board.e_from_siphon, board.t_from_siphon),
        e_from_sched=put(board.e_from_sched, board.t_from_sched), e_last_known=put(board.e_last_known, board.t_pos),
        t_countdown=jnp.where(board.t_active & ~hatch, board.t_countdown - 1, board.t_countdown),
    )
    return compact(board, board.t_active & ~hatch, TRANSMISSION_FIELDS)


def _activation_order(board, seed, step, site):
    keys = draw_from_base(site_base(seed, site, step), SLOTS)
    rank = rank_keys(keys, board.e_active)
    order = jnp.full(MAX_OCCUPANTS, -1, jnp.int32).at[rank].set(SLOTS, mode="drop")
    return order


def _move_target(board, i, occ_all):
    """moveEnemy's destination for enemy i (§8.5), or -1 to stay."""
    s = board.e_pos[i]
    p = board.player_pos
    glitch = board.e_type[i] == GLITCH
    own = bits.cell_bits(s)
    occ = (occ_all[0] & ~own[0], occ_all[1] & ~own[1])  # other enemies and every transmission
    blocks = bits.pack(board.content == BLOCK)
    everywhere = bits.FULL
    walkable = jax.tree_util.tree_map(lambda all_, free: jnp.where(glitch, all_, free), everywhere, bits.bnot(blocks))
    p_bits = bits.cell_bits(p)
    not_s = bits.bnot(own)
    enter1 = bits.band(walkable, bits.bor(bits.bnot(occ), p_bits))
    enter2 = walkable
    nbrs = jnp.asarray(NEIGHBOURS)[s]
    targets = [bits.cell_bits(nbrs[d]) for d in range(4)]
    start1 = jax.tree_util.tree_map(lambda x: jnp.where(bits.intersects(p_bits, enter1), x, 0), p_bits)
    start2 = jax.tree_util.tree_map(lambda x: jnp.where(bits.intersects(p_bits, enter2), x, 0), p_bits)
    _, first1 = bits.first_reached(start1, bits.band(enter1, not_s), targets)
    _, first2 = bits.first_reached(start2, bits.band(enter2, not_s), targets)
    n_cells = jnp.clip(nbrs, 0, NUM_CELLS - 1)
    n_in = nbrs < NUM_CELLS
    n_occ = jnp.stack([bits.intersects(t, occ) for t in targets])
    dest1 = jnp.where(first1 >= 0, nbrs[jnp.clip(first1, 0, 3)], -1)
    second = nbrs[jnp.clip(first2, 0, 3)]
    dest2 = jnp.where((first2 >= 0) & ~n_occ[jnp.clip(first2, 0, 3)], second, -1)
    # Route 3: the free neighbour closest to the player in grid distance.
    free = n_in & (glitch | (board.content[n_cells] != BLOCK)) & ~n_occ
    gdist = jnp.abs(n_cells // 6 - p // 6) + jnp.abs(n_cells % 6 - p % 6)
    greedy = jnp.argmin(jnp.where(free, gdist, 1 << 20))
    dest3 = jnp.where(jnp.any(free), nbrs[greedy], -1)
    return jnp.where(dest1 >= 0, dest1, jnp.where(dest2 >= 0, dest2, dest3))


def _act(sub_step, carry):
    """One activation slot: the enemy at this position of the order attacks or moves."""
    board, attacked, order, k = carry
    i = jnp.clip(order[k], 0, MAX_OCCUPANTS - 1)
    valid = order[k] >= 0
    p = board.player_pos
    s = board.e_pos[i]
    acts = (valid & board.e_active[i] & (board.e_disabled[i] == 0) & ~board.e_stunned[i] & ~attacked[i]
            & ((sub_step == 0) | (board.e_type[i] == VIRUS)))
    adjacent = (jnp.abs(s // 6 - p // 6) + jnp.abs(s % 6 - p % 6)) == 1
    strike = acts & adjacent
    occ_all = (jnp.sum(jnp.where(board.e_active, bits.cell_bits(board.e_pos)[0], 0), dtype=jnp.uint32)
               | jnp.sum(jnp.where(board.t_active, bits.cell_bits(board.t_pos)[0], 0), dtype=jnp.uint32),
               jnp.sum(jnp.where(board.e_active, bits.cell_bits(board.e_pos)[1], 0), dtype=jnp.uint32)
               | jnp.sum(jnp.where(board.t_active, bits.cell_bits(board.t_pos)[1], 0), dtype=jnp.uint32))
    dest = _move_target(board, i, occ_all)
    move = acts & ~adjacent & (dest >= 0)
    aligned = (dest // 6 == p // 6) | (dest % 6 == p % 6)
    board = board.replace(
        hp=jnp.where(strike, jnp.maximum(0, board.hp - 1), board.hp),
        e_pos=board.e_pos.at[i].set(jnp.where(move, dest, s)),
        e_last_known=board.e_last_known.at[i].set(
            jnp.where(move & (board.e_type[i] == CRYPTOG) & aligned, dest, board.e_last_known[i])),
    )
    attacked = attacked.at[i].set(attacked[i] | strike)
    return board, attacked, order, k + 1


def enemies_act(board, seed, step):
    """§8.4: sub-step 0 for all enemies, sub-step 1 for viruses, in keyed orders.

    The loop visits the active enemies only (under vmap: up to the largest
    enemy count in the batch) instead of all 35 slots.
    """
    attacked = jnp.zeros(MAX_OCCUPANTS, jnp.bool_)
    count = jnp.sum(board.e_active)
    for sub_step, site in ((0, SITE_ENEMY_ORDER_A), (1, SITE_ENEMY_ORDER_B)):
        order = _activation_order(board, seed, step, site)
        board, attacked, _, _ = jax.lax.while_loop(
            lambda c: c[3] < count, lambda c, s=sub_step: _act(s, c), (board, attacked, order, jnp.asarray(0)))
    return board


def push_snapshot(state):
    """§8.9: push the board (origin flags cleared), dropping the oldest beyond UNDO_DEPTH."""
    b = state.board
    snap = b.replace(e_from_siphon=jnp.zeros_like(b.e_from_siphon), e_from_sched=jnp.zeros_like(b.e_from_sched),
                     t_from_siphon=jnp.zeros_like(b.t_from_siphon), t_from_sched=jnp.zeros_like(b.t_from_sched))
    full = state.history_count >= UNDO_DEPTH
    slot = (state.history_start + state.history_count) % UNDO_DEPTH  # when full: the oldest's slot
    history = jax.tree_util.tree_map(lambda h, x: h.at[slot].set(x), state.history, snap)
    return state.replace(history=history, history_count=jnp.minimum(state.history_count + 1, UNDO_DEPTH),
                         history_start=jnp.where(full, (state.history_start + 1) % UNDO_DEPTH, state.history_start))


def _scheduled_spawn(x):
    board, seed, step, n = x
    board = spawn_transmissions(board, n, seed, step, SITE_SCHED_TX_CELL, SITE_SCHED_TX_TYPE, False, True)
    return board, seed, step, n


def _siphon_spawn(x):
    board, seed, step, n = x
    board = spawn_transmissions(board, n, seed, step, SITE_SIPHON_TX_CELL, SITE_SIPHON_TX_TYPE, True, False)
    return board, seed, step, n


# Both spawns are rare (a scheduled task every few turns, a siphon backlog after
# a siphon), so under vmap they run only for the envs that spawn.
_scheduled_where = where_needed(_scheduled_spawn)
_siphon_where = where_needed(_siphon_spawn)


def run_phase(state):
    """§8.2-§8.9 (the caller handles the STEP skip of §8.1)."""
    seed, step = state.seed, state.step_index
    board = state.board
    board = board.replace(turn=board.turn + 1)  # 8.2
    board = tick_transmissions(board)  # 8.3
    board = enemies_act(board, seed, step)  # 8.4 / 8.5
    fire = ~board.tasks_disabled & (board.turn >= state.next_task_turn)  # 8.6
    board = _scheduled_where(fire, (board, seed, step, jnp.asarray(1, jnp.int32)))[0]
    next_task = jnp.where(fire, board.turn + state.interval, state.next_task_turn)
    board = _siphon_where(state.pending > 0, (board, seed, step, state.pending))[0]  # 8.7
    board = board.replace(e_disabled=jnp.maximum(0, board.e_disabled - 1),
                          e_stunned=jnp.zeros_like(board.e_stunned))  # 8.8
    state = state.replace(board=board, next_task_turn=next_task, pending=jnp.asarray(0, jnp.int32))
    return push_snapshot(state)  # 8.9


_run_phase_where = where_needed(run_phase)


def enemy_phase(state, runs):
    """§8 when `runs` (the action ended the turn), including the STEP skip of §8.1."""
    skip = runs & state.step_active
    state = state.replace(step_active=state.step_active & ~skip)
    return _run_phase_where(runs & ~skip, state)
