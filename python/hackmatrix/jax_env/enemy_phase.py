"""The enemy phase (game-rules.md §8): tick, keyed activation, movement, tasks, housekeeping.

Mirrors swift/Sources/HackMatrixCore/EnemyPhase.swift and EnemyMovement.swift.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .board import SLOTS, TRANSMISSION_FIELDS, occupied_sets
from .constants import (
    BLOCK,
    CRYPTOG,
    ENEMY_MAX_HP,
    GLITCH,
    MAX_OCCUPANTS,
    NUM_CELLS,
    SITE_ENEMY_ORDER_A,
    SITE_ENEMY_ORDER_B,
    VIRUS,
)
from .grid import NEIGHBOURS, col, manhattan, row
from .machinery import bits, form, slots
from .machinery.batching import where_needed
from .machinery.bits import CellSet
from .machinery.lists import compact
from .machinery.trees import select
from .rng import draw_from_base, rank_keys, site_base
from .spawning import SCHEDULED_TASK, SIPHON_BACKLOG, spawn_transmissions
from .state import Board, EnvState


def tick_transmissions(board: Board) -> Board:
    """§8.3: countdown-1 transmissions hatch (appended to E in T order), the others count down."""
    hatch = board.t_active & (board.t_countdown <= 1)
    rank = slots.count_before(hatch)
    start = slots.count(board.e_active)
    slot = jnp.where(hatch, start + rank, MAX_OCCUPANTS)

    def put(arr: jax.Array, values: object) -> jax.Array:
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


class Movers(NamedTuple):
    """What every activation of a phase reads and none changes."""

    player: jax.Array  # the player's cell
    e_type: jax.Array  # int32[35]
    blocks: CellSet


class Activations(NamedTuple):
    """The loop carry of one sub-step: only what activations change.

    Under vmap the loop selects its whole carry every round, so the rest of
    the board stays out of it.
    """

    hp: jax.Array  # the player's
    e_pos: jax.Array
    e_last_known: jax.Array
    attacked: jax.Array  # bool[35]: struck in sub-step 0 (does not act again)
    occupied: CellSet  # the cells of every enemy and transmission
    remaining: jax.Array  # bool[35]: still to act in this sub-step


def _next_in_key_order(keys: jax.Array, remaining: jax.Array) -> jax.Array:
    """The remaining slot with the smallest (key, slot): the next enemy of a keyed order.

    Picking one enemy per activation costs 35 comparisons, where ranking every
    slot up front cost 35 x 35; a sub-step has about one ready enemy on average.
    """
    smallest = slots.smallest(
        jnp.where(remaining, keys, jnp.uint32(0xFFFFFFFF)), jnp.uint32(0xFFFFFFFF)
    )
    return slots.first(remaining & (keys == smallest))


def _neighbour_route(
    start: CellSet, passable: CellSet, targets: list[CellSet], searching: jax.Array
) -> jax.Array:
    """The first direction (0..3) whose target cell a search from `start` reaches first, or -1."""
    return bits.first_target_reached(select(searching, start, bits.EMPTY), passable, targets)


def _move_target(
    movers: Movers, i: jax.Array, s: jax.Array, occupied: CellSet, searching: jax.Array
) -> jax.Array:
    """moveEnemy's destination for enemy i standing on s (§8.5), or -1 to stay.

    Route 2 counts only where route 1 found nothing; a search whose
    `searching` is false starts from the empty set and so finds nothing.
    """
    player = movers.player
    own = bits.cell_bits(s)
    others = occupied & ~own  # other enemies and every transmission
    walkable = select(movers.e_type[i] == GLITCH, bits.FULL, ~movers.blocks)
    target = bits.cell_bits(player)
    nbrs = jnp.asarray(NEIGHBOURS)[s]
    steps = [bits.cell_bits(nbrs[d]) for d in range(4)]  # off-board neighbours are empty
    # Route 1: a shortest path to the player through free cells.
    enter1 = walkable & (~others | target)
    first1 = _neighbour_route(target, enter1 & ~own, steps, searching & target.intersects(enter1))
    # Route 2: a shortest path ignoring the other occupants, if that first step is free.
    first2 = _neighbour_route(
        target,
        walkable & ~own,
        steps,
        searching & (first1 < 0) & target.intersects(walkable),
    )
    step_taken = jnp.stack([t.intersects(others) for t in steps])
    dest1 = jnp.where(first1 >= 0, nbrs[jnp.clip(first1, 0, 3)], -1)
    second = nbrs[jnp.clip(first2, 0, 3)]
    dest2 = jnp.where((first2 >= 0) & ~step_taken[jnp.clip(first2, 0, 3)], second, -1)
    # Route 3: the free neighbour closest to the player in grid distance.
    free = jnp.stack([t.intersects(walkable) for t in steps]) & ~step_taken
    gdist = manhattan(jnp.clip(nbrs, 0, NUM_CELLS - 1), player)
    greedy = jnp.argmin(jnp.where(free, gdist, 1 << 20))
    dest3 = jnp.where(jnp.any(free), nbrs[greedy], -1)
    return jnp.where(dest1 >= 0, dest1, jnp.where(dest2 >= 0, dest2, dest3))


def _act(movers: Movers, keys: jax.Array, a: Activations) -> Activations:
    """One activation: the next remaining enemy in key order attacks or moves."""
    return _act_on(movers, _next_in_key_order(keys, a.remaining), slots.any_true(a.remaining), a)


def _act_on(movers: Movers, i: jax.Array, present: jax.Array, a: Activations) -> Activations:
    """Enemy i's activation if `present` (else nothing changes): it attacks or moves."""
    player = movers.player
    this = i == SLOTS
    acts = present & ~a.attacked[i]
    s = a.e_pos[i]
    adjacent = manhattan(s, player) == 1
    strike = acts & adjacent
    dest = _move_target(movers, i, s, a.occupied, acts & ~adjacent)
    move = acts & ~adjacent & (dest >= 0)
    aligned = (row(dest) == row(player)) | (col(dest) == col(player))
    left = bits.cell_bits(jnp.where(move, s, NUM_CELLS))
    entered = bits.cell_bits(jnp.where(move, dest, NUM_CELLS))
    return Activations(
        hp=jnp.where(strike, jnp.maximum(0, a.hp - 1), a.hp),
        e_pos=jnp.where(this & move, dest, a.e_pos),
        e_last_known=jnp.where(
            this & move & (movers.e_type[i] == CRYPTOG) & aligned, dest, a.e_last_known
        ),
        attacked=a.attacked | (this & strike),
        occupied=(a.occupied & ~left) | entered,
        remaining=a.remaining & ~this,
    )


def _activate_rest(a: Activations, movers: Movers, keys: jax.Array) -> Activations:
    """Every remaining activation of a sub-step, for one env."""
    return jax.lax.while_loop(
        lambda a: slots.any_true(a.remaining), lambda a: _act(movers, keys, a), a
    )


# Most envs have at most one or two enemies ready; the few with more finish
# their sub-step gathered in small groups instead of holding up the batch.
_rest_where = where_needed(_activate_rest)
ROUNDS_FOR_ALL = 2


def _activate_all(a: Activations, movers: Movers, keys: jax.Array) -> Activations:
    """A whole sub-step: one activation per remaining enemy in key order.

    Gathered form: ROUNDS_FOR_ALL activations for every env, the rest only for
    the envs with more ready enemies, until none remains. Masked form: a fixed
    MAX_OCCUPANTS activations for every env (an activation with no enemy
    remaining changes nothing), so no loop waits on the data.
    """
    if form.masked():
        return _activate_in_order(a, movers, keys)
    for _ in range(ROUNDS_FOR_ALL):
        a = _act(movers, keys, a)
    return _rest_where(slots.any_true(a.remaining), a, (movers, keys))


def _activate_in_order(a: Activations, movers: Movers, keys: jax.Array) -> Activations:
    """The masked form's sub-step: the order is ranked once, then MAX_OCCUPANTS rounds.

    Round k activates the k-th remaining enemy by (key, slot), the order
    `_next_in_key_order` picks them in; rounds past the last change nothing.
    """
    n = slots.count(a.remaining)
    rank = jnp.where(a.remaining, rank_keys(keys, a.remaining), MAX_OCCUPANTS)
    order = jnp.zeros(MAX_OCCUPANTS, jnp.int32).at[rank].set(SLOTS, mode="drop")

    def round_k(k: jax.Array, a: Activations) -> Activations:
        return _act_on(movers, order[k], k < n, a)

    return jax.lax.fori_loop(0, MAX_OCCUPANTS, round_k, a)


def enemies_act(board: Board, seed: jax.Array, step: jax.Array) -> Board:
    """§8.4: sub-step 0 for all ready enemies, sub-step 1 for ready viruses, each in keyed order.

    Disabled and stunned enemies stay so for the whole phase, so the set of
    enemies that can act in a sub-step is known before it starts.
    """
    ready = board.e_active & (board.e_disabled == 0) & ~board.e_stunned
    movers = Movers(board.player_pos, board.e_type, bits.pack(board.content == BLOCK))
    enemies, transmissions = occupied_sets(board)
    a = Activations(
        hp=board.hp,
        e_pos=board.e_pos,
        e_last_known=board.e_last_known,
        attacked=jnp.zeros(MAX_OCCUPANTS, jnp.bool_),
        occupied=enemies | transmissions,
        remaining=ready,
    )
    for sub_step, site in ((0, SITE_ENEMY_ORDER_A), (1, SITE_ENEMY_ORDER_B)):
        a = a._replace(remaining=ready if sub_step == 0 else ready & (board.e_type == VIRUS))
        keys = draw_from_base(site_base(seed, site, step), SLOTS)
        a = _activate_all(a, movers, keys)
    return board.replace(hp=a.hp, e_pos=a.e_pos, e_last_known=a.e_last_known)


def _spawn(
    t_fields: dict[str, jax.Array],
    board: Board,
    seed: jax.Array,
    step: jax.Array,
    scheduled: jax.Array,
    backlog: jax.Array,
) -> dict[str, jax.Array]:
    """§8.6 then §8.7 for one env: the scheduled transmission (if due), then the siphon backlog."""
    board = board.replace(**t_fields)
    board = spawn_transmissions(board, scheduled, seed, step, SCHEDULED_TASK)
    board = spawn_transmissions(board, backlog, seed, step, SIPHON_BACKLOG)
    return {f: getattr(board, f) for f in TRANSMISSION_FIELDS}


# Spawns are rare (a scheduled task every few turns, a backlog after a siphon),
# so under vmap they run only for the envs that spawn; only the transmission
# fields they write travel back, the rest of the board is read-only.
_spawn_where = where_needed(_spawn)


def turn_effects(state: EnvState) -> EnvState:
    """§8.2-§8.8: everything of the phase but the snapshot."""
    seed, step = state.seed, state.step_index
    board = state.board
    board = board.replace(turn=board.turn + 1)  # 8.2
    board = tick_transmissions(board)  # 8.3
    board = enemies_act(board, seed, step)  # 8.4 / 8.5
    fire = ~board.tasks_disabled & (board.turn >= state.next_task_turn)  # 8.6
    next_task = jnp.where(fire, board.turn + state.interval, state.next_task_turn)
    t_fields = {f: getattr(board, f) for f in TRANSMISSION_FIELDS}
    spawns = (board, seed, step, fire.astype(jnp.int32), state.pending)  # 8.7: the siphon backlog
    board = board.replace(**_spawn_where(fire | (state.pending > 0), t_fields, spawns))
    board = board.replace(
        e_disabled=jnp.maximum(0, board.e_disabled - 1), e_stunned=jnp.zeros_like(board.e_stunned)
    )  # 8.8
    return state.replace(board=board, next_task_turn=next_task, pending=jnp.asarray(0, jnp.int32))


def enemy_phase(state: EnvState, runs: jax.Array) -> tuple[EnvState, jax.Array]:
    """§8.1-§8.8 when `runs` (the action ended the turn): (state, whether the phase ran).

    The caller pushes the UNDO snapshot of §8.9 where the phase ran (the
    history is kept out of the step until its very end, see undo.py).

    Most accepted actions end the turn, so the phase is computed for every env
    and selected: gathering the envs that need it (batching.where_needed) was
    measured 2.3x slower here (45 vs 19 us per env at batch 1024).
    """
    skip = runs & state.step_active
    state = state.replace(step_active=state.step_active & ~skip)
    go = runs & ~skip
    return select(go, turn_effects(state), state), go
