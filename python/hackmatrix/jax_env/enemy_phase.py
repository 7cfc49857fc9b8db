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


def _activation_order(board, seed, step, site, candidate):
    """The candidate slots in keyed order (ascending key, then slot), then -1s.

    Ranking only the enemies that can act keeps their relative order and lets
    the loop stop after them: an activation of any other enemy does nothing.
    """
    keys = draw_from_base(site_base(seed, site, step), SLOTS)
    rank = rank_keys(keys, candidate)
    order = jnp.full(MAX_OCCUPANTS, -1, jnp.int32).at[rank].set(SLOTS, mode="drop")
    return order


def _move_target(board, i, occ_all, searching=True):
    """moveEnemy's destination for enemy i (§8.5), or -1 to stay.

    The two path searches run as one two-lane search (one loop instead of two
    under vmap). With `searching` false the result is unused and both searches
    start empty, so that env does not keep the batch's loop running.
    """
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
    start1 = jax.tree_util.tree_map(lambda x: jnp.where(searching & bits.intersects(p_bits, enter1), x, 0), p_bits)
    start2 = jax.tree_util.tree_map(lambda x: jnp.where(searching & bits.intersects(p_bits, enter2), x, 0), p_bits)
    lanes = lambda a, b: (jnp.stack([a[0], b[0]]), jnp.stack([a[1], b[1]]))  # noqa: E731
    _, firsts = jax.vmap(lambda st, ps: bits.first_reached(st, ps, targets))(
        lanes(start1, start2), lanes(bits.band(enter1, not_s), bits.band(enter2, not_s)))
    first1, first2 = firsts[0], firsts[1]
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


def _occupied_bits(board, e_pos):
    """Packed cells of every active enemy (at `e_pos`) and every transmission."""
    e = bits.cell_bits(jnp.where(board.e_active, e_pos, NUM_CELLS))
    t = bits.cell_bits(jnp.where(board.t_active, board.t_pos, NUM_CELLS))
    return (jnp.sum(e[0], dtype=jnp.uint32) | jnp.sum(t[0], dtype=jnp.uint32),
            jnp.sum(e[1], dtype=jnp.uint32) | jnp.sum(t[1], dtype=jnp.uint32))


def _act(board, sub_step, order, carry):
    """One activation slot: the enemy at this position of the order attacks or moves.

    Only what activations change is carried (hp, positions, last-known cells,
    who attacked): under vmap the loop selects its whole carry every round.
    """
    hp, e_pos, e_last_known, attacked, k = carry
    i = jnp.clip(order[k], 0, MAX_OCCUPANTS - 1)
    valid = order[k] >= 0
    p = board.player_pos
    s = e_pos[i]
    acts = (valid & board.e_active[i] & (board.e_disabled[i] == 0) & ~board.e_stunned[i] & ~attacked[i]
            & ((sub_step == 0) | (board.e_type[i] == VIRUS)))
    adjacent = (jnp.abs(s // 6 - p // 6) + jnp.abs(s % 6 - p % 6)) == 1
    strike = acts & adjacent
    dest = _move_target(board.replace(e_pos=e_pos), i, _occupied_bits(board, e_pos), acts & ~adjacent)
    move = acts & ~adjacent & (dest >= 0)
    aligned = (dest // 6 == p // 6) | (dest % 6 == p % 6)
    this = SLOTS == i
    hp = jnp.where(strike, jnp.maximum(0, hp - 1), hp)
    e_pos = jnp.where(this & move, dest, e_pos)
    e_last_known = jnp.where(this & move & (board.e_type[i] == CRYPTOG) & aligned, dest, e_last_known)
    attacked = attacked | (this & strike)
    return hp, e_pos, e_last_known, attacked, k + 1


def enemies_act(board, seed, step):
    """§8.4: sub-step 0 for all enemies, sub-step 1 for viruses, in keyed orders.

    Each loop visits only the enemies that can act in that sub-step (under
    vmap: up to the largest such count in the batch) instead of all 35 slots;
    disabled and stunned enemies stay so for the whole phase.
    """
    ready = board.e_active & (board.e_disabled == 0) & ~board.e_stunned
    carry = (board.hp, board.e_pos, board.e_last_known, jnp.zeros(MAX_OCCUPANTS, jnp.bool_), jnp.asarray(0))
    for sub_step, site in ((0, SITE_ENEMY_ORDER_A), (1, SITE_ENEMY_ORDER_B)):
        candidate = ready if sub_step == 0 else ready & (board.e_type == VIRUS)
        order = _activation_order(board, seed, step, site, candidate)
        count = jnp.sum(candidate)
        carry = jax.lax.while_loop(
            lambda c, n=count: c[4] < n, lambda c, s=sub_step, o=order: _act(board, s, o, c), carry[:4] + (jnp.asarray(0),))
    hp, e_pos, e_last_known, _, _ = carry
    return board.replace(hp=hp, e_pos=e_pos, e_last_known=e_last_known)


def push_snapshot(state, push=True):
    """§8.9 where `push`: push the board (origin flags cleared), dropping the oldest beyond UNDO_DEPTH.

    Only the target slot is rewritten (with its old value where not pushing):
    selecting whole histories would copy all UNDO_DEPTH boards.
    """
    b = state.board
    snap = b.replace(e_from_siphon=jnp.zeros_like(b.e_from_siphon), e_from_sched=jnp.zeros_like(b.e_from_sched),
                     t_from_siphon=jnp.zeros_like(b.t_from_siphon), t_from_sched=jnp.zeros_like(b.t_from_sched))
    full = state.history_count >= UNDO_DEPTH
    slot = (state.history_start + state.history_count) % UNDO_DEPTH  # when full: the oldest's slot
    history = jax.tree_util.tree_map(lambda h, x: h.at[slot].set(jnp.where(push, x, h[slot])), state.history, snap)
    return state.replace(
        history=history,
        history_count=jnp.where(push, jnp.minimum(state.history_count + 1, UNDO_DEPTH), state.history_count),
        history_start=jnp.where(push & full, (state.history_start + 1) % UNDO_DEPTH, state.history_start))


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


def turn_effects(state):
    """§8.2-§8.8: everything of the phase but the snapshot."""
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
    return state.replace(board=board, next_task_turn=next_task, pending=jnp.asarray(0, jnp.int32))


def run_phase(state):
    """§8.2-§8.9 (the caller handles the STEP skip of §8.1)."""
    return push_snapshot(turn_effects(state))


def enemy_phase(state, runs):
    """§8 when `runs` (the action ended the turn), including the STEP skip of §8.1.

    Most accepted actions end the turn, so the phase is computed for every env
    and selected: gathering the envs that need it (batching.where_needed) was
    measured 2.3x slower here (45 vs 19 us per env at batch 1024).
    """
    skip = runs & state.step_active
    state = state.replace(step_active=state.step_active & ~skip)
    go = runs & ~skip
    ran = turn_effects(state)  # leaves the history as it is, so the select below skips it
    state = jax.tree_util.tree_map(lambda x, y: jnp.where(go, x, y), ran, state)
    return push_snapshot(state, go)
