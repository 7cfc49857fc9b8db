"""The enemy phase (game-rules.md §8): tick, keyed activation, movement, tasks, housekeeping."""

import jax
import jax.numpy as jnp

from . import bits, slots
from .batching import where_needed, where_needed_reading
from .constants import (
    BLOCK,
    CRYPTOG,
    ENEMY_MAX_HP,
    GLITCH,
    MAX_OCCUPANTS,
    NEIGHBOURS,
    NUM_CELLS,
    SITE_ENEMY_ORDER_A,
    SITE_ENEMY_ORDER_B,
    SITE_SCHED_TX_CELL,
    SITE_SCHED_TX_TYPE,
    SITE_SIPHON_TX_CELL,
    SITE_SIPHON_TX_TYPE,
    VIRUS,
)
from .lists import TRANSMISSION_FIELDS, compact
from .rng import draw_from_base, site_base
from .spawning import occupied_words, spawn_transmissions

SLOTS = jnp.arange(MAX_OCCUPANTS, dtype=jnp.int32)


def tick_transmissions(board):
    """§8.3: countdown-1 transmissions hatch (appended to E in T order), the others count down."""
    hatch = board.t_active & (board.t_countdown <= 1)
    rank = slots.count_before(hatch)
    start = slots.count(board.e_active)
    slot = jnp.where(hatch, start + rank, MAX_OCCUPANTS)

    def put(arr, values):
        return arr.at[slot].set(values, mode="drop")

    board = board.replace(
        e_active=put(board.e_active, True),
        e_type=put(board.e_type, board.t_type),
        e_pos=put(board.e_pos, board.t_pos),
        e_hp=put(board.e_hp, jnp.asarray(ENEMY_MAX_HP)[board.t_type]),
        e_disabled=put(board.e_disabled, 1),
        e_stunned=put(board.e_stunned, False),
        e_from_siphon=put(board.e_from_siphon, board.t_from_siphon),
        e_from_sched=put(board.e_from_sched, board.t_from_sched),
        e_last_known=put(board.e_last_known, board.t_pos),
        t_countdown=jnp.where(board.t_active & ~hatch, board.t_countdown - 1, board.t_countdown),
    )
    return compact(board, board.t_active & ~hatch, TRANSMISSION_FIELDS)


def _next_in_key_order(keys, remaining):
    """The remaining slot with the smallest (key, slot): the next enemy of a keyed order.

    Picking one enemy per activation costs 35 comparisons, where ranking every
    slot up front cost 35 x 35; a sub-step has about one ready enemy on average.
    """
    smallest = slots.smallest(
        jnp.where(remaining, keys, jnp.uint32(0xFFFFFFFF)), jnp.uint32(0xFFFFFFFF)
    )
    return slots.first(remaining & (keys == smallest))


def _neighbour_route(start, passable, targets, searching):
    """The first direction (0..3) whose target cell a search from `start` reaches first, or -1."""
    start = jax.tree_util.tree_map(lambda x: jnp.where(searching, x, 0), start)
    return bits.first_target_reached(start, passable, targets)


def _move_target(ctx, i, s, occ, searching):
    """moveEnemy's destination for enemy i standing on s (§8.5), or -1 to stay.

    `occ` holds the cells of every enemy and transmission. Route 2 counts only
    where route 1 found nothing; a search whose `searching` is false starts
    from the empty set and so finds nothing.
    """
    player, e_type, blocks = ctx
    glitch = e_type[i] == GLITCH
    own = bits.cell_bits(s)
    others = bits.band(occ, bits.bnot(own))  # other enemies and every transmission
    walkable = jax.tree_util.tree_map(
        lambda all_, free: jnp.where(glitch, all_, free), bits.FULL, bits.bnot(blocks)
    )
    p_bits = bits.cell_bits(player)
    not_s = bits.bnot(own)
    nbrs = jnp.asarray(NEIGHBOURS)[s]
    targets = [bits.cell_bits(nbrs[d]) for d in range(4)]
    # Route 1: a shortest path to the player through free cells.
    enter1 = bits.band(walkable, bits.bor(bits.bnot(others), p_bits))
    first1 = _neighbour_route(
        p_bits, bits.band(enter1, not_s), targets, searching & bits.intersects(p_bits, enter1)
    )
    # Route 2: a shortest path ignoring the other occupants, if that first step is free.
    first2 = _neighbour_route(
        p_bits,
        bits.band(walkable, not_s),
        targets,
        searching & (first1 < 0) & bits.intersects(p_bits, walkable),
    )
    n_occ = jnp.stack([bits.intersects(t, others) for t in targets])
    dest1 = jnp.where(first1 >= 0, nbrs[jnp.clip(first1, 0, 3)], -1)
    second = nbrs[jnp.clip(first2, 0, 3)]
    dest2 = jnp.where((first2 >= 0) & ~n_occ[jnp.clip(first2, 0, 3)], second, -1)
    # Route 3: the free neighbour closest to the player in grid distance.
    free = (
        jnp.stack([bits.intersects(t, walkable) for t in targets]) & ~n_occ
    )  # off-board targets are empty
    n_cells = jnp.clip(nbrs, 0, NUM_CELLS - 1)
    gdist = jnp.abs(n_cells // 6 - player // 6) + jnp.abs(n_cells % 6 - player % 6)
    greedy = jnp.argmin(jnp.where(free, gdist, 1 << 20))
    dest3 = jnp.where(jnp.any(free), nbrs[greedy], -1)
    return jnp.where(dest1 >= 0, dest1, jnp.where(dest2 >= 0, dest2, dest3))


def _act(ctx, keys, carry):
    """One activation: the next remaining enemy in key order attacks or moves.

    Only what activations change is carried (hp, positions, last-known cells,
    who attacked, the occupied cells, who is still to act): under vmap the
    loop selects its whole carry every round.
    """
    hp, e_pos, e_last_known, attacked, occ, remaining = carry
    player, e_type, _ = ctx
    i = _next_in_key_order(keys, remaining)
    this = i == SLOTS
    acts = (
        slots.any_true(remaining) & ~attacked[i]
    )  # an enemy that struck in sub-step 0 does not act again
    s = e_pos[i]
    adjacent = (jnp.abs(s // 6 - player // 6) + jnp.abs(s % 6 - player % 6)) == 1
    strike = acts & adjacent
    dest = _move_target(ctx, i, s, occ, acts & ~adjacent)
    move = acts & ~adjacent & (dest >= 0)
    aligned = (dest // 6 == player // 6) | (dest % 6 == player % 6)
    hp = jnp.where(strike, jnp.maximum(0, hp - 1), hp)
    e_pos = jnp.where(this & move, dest, e_pos)
    e_last_known = jnp.where(this & move & (e_type[i] == CRYPTOG) & aligned, dest, e_last_known)
    attacked = attacked | (this & strike)
    left, entered = (
        bits.cell_bits(jnp.where(move, s, NUM_CELLS)),
        bits.cell_bits(jnp.where(move, dest, NUM_CELLS)),
    )
    occ = bits.bor(bits.band(occ, bits.bnot(left)), entered)
    return hp, e_pos, e_last_known, attacked, occ, remaining & ~this


def _activate_rest(x):
    """Every remaining activation of a sub-step, for one env."""
    ctx, keys, carry = x
    carry = jax.lax.while_loop(lambda c: slots.any_true(c[5]), lambda c: _act(ctx, keys, c), carry)
    return ctx, keys, carry


# Most envs have at most one or two enemies ready; the few with more finish
# their sub-step gathered in small groups instead of holding up the batch.
_rest_where = where_needed(_activate_rest)
ROUNDS_FOR_ALL = 2


def enemies_act(board, seed, step):
    """§8.4: sub-step 0 for all ready enemies, sub-step 1 for ready viruses, each in keyed order.

    Disabled and stunned enemies stay so for the whole phase, so the set of
    enemies that can act in a sub-step is known before it starts. Under vmap
    every env runs the first ROUNDS_FOR_ALL activations together and only envs
    with more ready enemies run the rest (batching.where_needed).
    """
    ready = board.e_active & (board.e_disabled == 0) & ~board.e_stunned
    ctx = (board.player_pos, board.e_type, bits.pack(board.content == BLOCK))
    occupied = bits.bor(*occupied_words(board))  # every enemy and transmission
    carry = (
        board.hp,
        board.e_pos,
        board.e_last_known,
        jnp.zeros(MAX_OCCUPANTS, jnp.bool_),
        occupied,
    )
    for sub_step, site in ((0, SITE_ENEMY_ORDER_A), (1, SITE_ENEMY_ORDER_B)):
        remaining = ready if sub_step == 0 else ready & (board.e_type == VIRUS)
        keys = draw_from_base(site_base(seed, site, step), SLOTS)
        full = carry + (remaining,)
        for _ in range(ROUNDS_FOR_ALL):  # an activation with no enemy remaining changes nothing
            full = _act(ctx, keys, full)
        _, _, full = _rest_where(slots.any_true(full[5]), (ctx, keys, full))
        carry = full[:5]
    hp, e_pos, e_last_known, _, _ = carry
    return board.replace(hp=hp, e_pos=e_pos, e_last_known=e_last_known)


def _spawn(t_fields, context):
    """§8.6 then §8.7 for one env: the scheduled transmission (if due), then the siphon backlog."""
    board, seed, step, scheduled, backlog = context
    board = board.replace(**t_fields)
    board = spawn_transmissions(
        board, scheduled, seed, step, SITE_SCHED_TX_CELL, SITE_SCHED_TX_TYPE, False, True
    )
    board = spawn_transmissions(
        board, backlog, seed, step, SITE_SIPHON_TX_CELL, SITE_SIPHON_TX_TYPE, True, False
    )
    return {f: getattr(board, f) for f in TRANSMISSION_FIELDS}


# Spawns are rare (a scheduled task every few turns, a backlog after a siphon),
# so under vmap they run only for the envs that spawn; only the transmission
# fields they write travel back, the rest of the board is read-only.
_spawn_where = where_needed_reading(_spawn)


def turn_effects(state):
    """§8.2-§8.8: everything of the phase but the snapshot."""
    seed, step = state.seed, state.step_index
    board = state.board
    board = board.replace(turn=board.turn + 1)  # 8.2
    board = tick_transmissions(board)  # 8.3
    board = enemies_act(board, seed, step)  # 8.4 / 8.5
    fire = ~board.tasks_disabled & (board.turn >= state.next_task_turn)  # 8.6
    next_task = jnp.where(fire, board.turn + state.interval, state.next_task_turn)
    t_fields = {f: getattr(board, f) for f in TRANSMISSION_FIELDS}
    context = (board, seed, step, fire.astype(jnp.int32), state.pending)  # 8.7: the siphon backlog
    board = board.replace(**_spawn_where(fire | (state.pending > 0), t_fields, context))
    board = board.replace(
        e_disabled=jnp.maximum(0, board.e_disabled - 1), e_stunned=jnp.zeros_like(board.e_stunned)
    )  # 8.8
    return state.replace(board=board, next_task_turn=next_task, pending=jnp.asarray(0, jnp.int32))


def enemy_phase(state, runs):
    """§8.1-§8.8 when `runs` (the action ended the turn): (state, whether the phase ran).

    The caller pushes the UNDO snapshot of §8.9 where the phase ran (the
    history is kept out of the step until its very end, see history.py).

    Most accepted actions end the turn, so the phase is computed for every env
    and selected: gathering the envs that need it (batching.where_needed) was
    measured 2.3x slower here (45 vs 19 us per env at batch 1024).
    """
    skip = runs & state.step_active
    state = state.replace(step_active=state.step_active & ~skip)
    go = runs & ~skip
    ran = turn_effects(state)
    return jax.tree_util.tree_map(lambda x, y: jnp.where(go, x, y), ran, state), go
