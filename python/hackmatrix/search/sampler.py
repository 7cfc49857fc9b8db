"""The fair sampler (specs/search.md §2): the root a search may start from.

A search that steps the engine from the real state reads the game's future
(`seed`) and the hidden board (question blocks, hidden cryptogs' cells,
transmissions' enemy types, ...). `sample_root(key, state)` instead returns a
state drawn from what a player knows:

1. `project(state)` keeps what the player sees (the JSON observation of
   protocol.md §4, cryptog hints included) and the counters a player tracks
   from the game's history (specs/search.md §2.2), and sets every hidden
   field to a constant. Lists are put in a canonical order (cell order), so
   not even list positions carry hidden information. Each UNDO snapshot is
   projected the same way (a snapshot is a board the player once saw).
2. `redraw(key, view)` fills the hidden fields from their priors given the
   view (specs/search.md §2.3) and gives the game a fresh seed.

So the sampled root is a function of (what the player knows, key) alone:
two states with the same view give bit-identical roots under the same key
(tests/search/test_fairness.py). Everything here is pure, jit- and vmap-able.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from ..jax_env.constants import (
    BLOCK,
    CRYPTOG,
    ENEMY_MAX_HP,
    KIND_DATA,
    KIND_PROGRAM,
    KIND_QUESTION,
    MAX_OCCUPANTS,
    NUM_CELLS,
    NUM_PROGRAMS,
    SPAWN_COST,
    UNDO_DEPTH,
)
from ..jax_env.grid import CROSS, DISTANCE, col, row
from ..jax_env.state import Board, EnvState
from ..jax_env.undo import pack_board, unpack_board

NUM_BOARDS = 1 + UNDO_DEPTH  # the live board and the snapshots, one stack
SLOTS = np.arange(MAX_OCCUPANTS, dtype=np.int32)
CRYPTOG_HP = int(ENEMY_MAX_HP[CRYPTOG])
# Hidden-cryptog placement (specs/search.md §2.3): each cell further from the hint halves
# the weight; a tier (see `_cryptog_tiers`) outranks any distance.
HINT_DECAY = math.log(2.0)
TIER_PENALTY = 1.0e4
NO_TIER = 3


@struct.dataclass
class View:
    """What the player knows (specs/search.md §2.2): the input of `redraw`.

    `boards` stacks the live board (index 0) and the UNDO snapshots oldest first
    (indices 1..history_count), every one projected; boards past the count are
    all zero. `hidden` marks, per board, the enemy slots that are hidden
    cryptogs: their cells are unknown (0 here), their `e_last_known` is the
    hint the player sees. `state` holds the scalar fields of the state
    (seed, step index and history zeroed).
    """

    state: EnvState
    boards: Board  # [NUM_BOARDS, ...]
    hidden: jax.Array  # bool[NUM_BOARDS, 35]


# ----------------------------------------------------------------------------- project


def _siphon_marks(board: Board) -> jax.Array:
    """bool[36]: the siphoned mark as the player knows it.

    A block shows its mark (observation channel 11). A cell without a block is
    siphoned exactly when it lies in the cross of a siphon centre, because a
    siphon marks its whole cross and both marks are cleared together (new
    stage) or restored together (UNDO): the player derives it from the centres.
    """
    centre = jnp.concatenate([board.siphon_center, jnp.zeros(1, bool)])
    crossed = jnp.any(centre[jnp.asarray(CROSS)], axis=-1)  # the cross relation is symmetric
    return jnp.where(board.content == BLOCK, board.siphoned, crossed)


def _visible_enemies(board: Board) -> jax.Array:
    """bool[35]: active enemies the observation shows (a cryptog only when aligned or SHOWn)."""
    p = board.player_pos
    aligned = (row(board.e_pos) == row(p)) | (col(board.e_pos) == col(p))
    return board.e_active & ((board.e_type != CRYPTOG) | aligned | board.show_activated)


def _project_board(board: Board) -> tuple[Board, jax.Array]:
    """One board reduced to what the player knows, and its hidden-cryptog slots."""
    b = board
    block = b.content == BLOCK
    kind = jnp.where(block, b.block_kind, 0)
    data = block & (kind == KIND_DATA)
    prog = block & (kind == KIND_PROGRAM)
    resources_seen = ~block | b.siphoned

    # Enemies: the visible ones in cell order, then the hidden cryptogs in the order
    # of their hints (game-rules.md §12: ordered by the hidden cryptogs' cells).
    visible = _visible_enemies(b)
    hidden = b.e_active & ~visible
    order = jnp.argsort(
        jnp.where(visible, b.e_pos, jnp.where(hidden, NUM_CELLS + b.e_pos, 2 * NUM_CELLS + SLOTS))
    )
    active, vis, hid = b.e_active[order], visible[order], hidden[order]
    e_type = jnp.where(hid, CRYPTOG, jnp.where(vis, b.e_type[order], 0))
    e_pos = jnp.where(vis, b.e_pos[order], 0)
    last_known = jnp.where(
        active & (e_type == CRYPTOG), b.e_last_known[order], e_pos
    )  # a non-cryptog's is never read: its own cell, as state_from_json writes it

    # Transmissions in cell order; the enemy type only while SHOW is on.
    t_order = jnp.argsort(jnp.where(b.t_active, b.t_pos, NUM_CELLS + SLOTS))
    t_active = b.t_active[t_order]

    projected = b.replace(
        block_kind=kind,
        hidden_is_data=data,
        points=jnp.where(data, b.points, 0),
        program=jnp.where(prog, b.program, 0),
        spawn_count=jnp.where(data | prog, b.spawn_count, 0),
        cell_credits=jnp.where(resources_seen, b.cell_credits, 0),
        cell_energy=jnp.where(resources_seen, b.cell_energy, 0),
        siphoned=_siphon_marks(b),
        e_active=active,
        e_type=e_type,
        e_pos=e_pos,
        e_hp=jnp.where(vis, b.e_hp[order], jnp.where(hid, CRYPTOG_HP, 0)),
        e_disabled=jnp.zeros_like(b.e_disabled),
        e_stunned=vis & b.e_stunned[order],
        e_from_siphon=active & b.e_from_siphon[order],
        e_from_sched=jnp.zeros_like(b.e_from_sched),
        e_last_known=jnp.where(active, last_known, 0),
        t_active=t_active,
        t_pos=jnp.where(t_active, b.t_pos[t_order], 0),
        t_countdown=jnp.where(t_active, b.t_countdown[t_order], 0),
        t_type=jnp.where(t_active & b.show_activated, b.t_type[t_order], 0),
        t_from_siphon=t_active & b.t_from_siphon[t_order],
        t_from_sched=jnp.zeros_like(b.t_from_sched),
    )
    return projected, hid


def _stack(boards: list[Board]) -> Board:
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *boards)


def _held_snapshots(state: EnvState) -> tuple[Board, jax.Array]:
    """The UNDO snapshots, oldest first, as a stacked Board [UNDO_DEPTH], and which are held."""
    k = jnp.arange(UNDO_DEPTH)
    rows = state.history[(state.history_start + k) % UNDO_DEPTH]
    held = k < state.history_count
    rows = jnp.where(held[:, None], rows, 0)
    return jax.vmap(unpack_board)(rows), held


def project(state: EnvState) -> View:
    """The player's view of `state` (specs/search.md §2.2); pure, jittable."""
    snaps, held = _held_snapshots(state)
    boards = jax.tree_util.tree_map(
        lambda live, old: jnp.concatenate([live[None], old]), state.board, snaps
    )
    boards, hidden = jax.vmap(_project_board)(boards)
    present = jnp.concatenate([jnp.ones(1, bool), held])
    boards = jax.tree_util.tree_map(
        lambda x: jnp.where(present.reshape((-1,) + (1,) * (x.ndim - 1)), x, jnp.zeros_like(x)),
        boards,
    )
    scalars = state.replace(
        board=jax.tree_util.tree_map(lambda x: x[0], boards),
        seed=jnp.zeros_like(state.seed),
        step_index=jnp.zeros_like(state.step_index),
        history=jnp.zeros_like(state.history),
        history_start=jnp.zeros_like(state.history_start),
    )
    return View(state=scalars, boards=boards, hidden=hidden & present[:, None])


# ----------------------------------------------------------------------------- redraw


def _board_present(view: View) -> jax.Array:
    return jnp.arange(NUM_BOARDS) <= view.state.history_count


def _reduc_uses(board: Board) -> jax.Array:
    """How many REDUCs lowered this board's unsiphoned blocks, as the visible blocks tell.

    A data block starts with spawnCount = points, a program block with its
    program's spawn cost (§10.3); REDUC lowers every unsiphoned block by one,
    not below 0. The largest visible reduction is the count whenever some
    visible unsiphoned block is still above 0; when all are at 0 it is a lower
    bound (specs/search.md §2.3).
    """
    block = board.content == BLOCK
    shown = block & (board.block_kind != KIND_QUESTION) & ~board.siphoned
    start = jnp.where(board.hidden_is_data, board.points, jnp.asarray(SPAWN_COST)[board.program])
    return jnp.max(jnp.where(shown, start - board.spawn_count, 0))


def _question_contents(key: jax.Array, view: View) -> tuple[jax.Array, jax.Array, jax.Array]:
    """(is data, points, program) per cell for every question block of the stage.

    Drawn once and shared by the live board and the snapshots (it is one block).
    A question block the live board shows revealed keeps what it revealed.
    Otherwise §10.3's draws: data-bearing with 50 %, points uniform 1..9, and
    the program-bearing ones get distinct programs, none of those the stage's
    program blocks show (a stage's block programs are all different).
    """
    b, live = view.boards, view.boards.content[0] == BLOCK
    present = _board_present(view)[:, None]
    question = jnp.any(present & (b.content == BLOCK) & (b.block_kind == KIND_QUESTION), axis=0)
    program_block = present & (b.content == BLOCK) & (b.block_kind == KIND_PROGRAM)
    shown_programs = jnp.any(
        program_block[..., None] & (b.program[..., None] == jnp.arange(NUM_PROGRAMS)), axis=(0, 1)
    )
    k_data, k_points, k_rank = jax.random.split(key, 3)
    is_data = jax.random.bernoulli(k_data, 0.5, (NUM_CELLS,))
    points = jax.random.randint(k_points, (NUM_CELLS,), 1, 10, jnp.int32)
    # The program-bearing question cells, in cell order, take the unseen programs in a
    # random order (an injection, as §10.3 draws it).
    rank_keys = jnp.where(shown_programs, 2.0, jax.random.uniform(k_rank, (NUM_PROGRAMS,)))
    unseen_in_order = jnp.argsort(rank_keys).astype(jnp.int32)
    takes_program = question & ~is_data
    nth = jnp.cumsum(takes_program.astype(jnp.int32)) - 1
    program = unseen_in_order[jnp.clip(nth, 0, NUM_PROGRAMS - 1)]

    revealed = live & (view.boards.block_kind[0] != KIND_QUESTION)
    is_data = jnp.where(revealed, view.boards.hidden_is_data[0], is_data)
    points = jnp.where(is_data, jnp.where(revealed, view.boards.points[0], points), 0)
    program = jnp.where(is_data, 0, jnp.where(revealed, view.boards.program[0], program))
    return is_data, points, program


def _cryptog_tiers(board: Board, hidden: jax.Array) -> jax.Array:
    """int32[36]: where a hidden cryptog of this board may stand, best tier first.

    0: a cell out of the player's row and column (so the cryptog stays hidden)
    with no block, no visible enemy, no transmission; 1: the same on a block
    (only PUSH or PULL put a cryptog there); 2: any free cell but the player's
    (only if 0 and 1 are empty, which a real board never makes); 3: never.
    """
    cells = jnp.arange(NUM_CELLS)
    p = board.player_pos
    known_enemy = board.e_active & ~hidden
    taken = (
        jnp.zeros(NUM_CELLS + 1, bool)
        .at[jnp.where(known_enemy, board.e_pos, NUM_CELLS)]
        .set(True)
        .at[jnp.where(board.t_active, board.t_pos, NUM_CELLS)]
        .set(True)[:NUM_CELLS]
    ) | (cells == p)
    aligned = (row(cells) == row(p)) | (col(cells) == col(p))
    block = board.content == BLOCK
    return jnp.where(taken, NO_TIER, jnp.where(aligned, 2, jnp.where(block, 1, 0))).astype(
        jnp.int32
    )


def _place_cryptogs(board: Board, hidden: jax.Array, gumbel: jax.Array) -> jax.Array:
    """int32[35]: e_pos with the hidden cryptogs placed (specs/search.md §2.3).

    Each hidden cryptog in hint order picks a free cell by Gumbel-max over
    tier and distance to its hint; the picked cells are then sorted and handed
    out in hint order again, so that the hints keep the order the player sees
    (ordered by the hidden cryptogs' cells, game-rules.md §12).
    """
    tiers = _cryptog_tiers(board, hidden)
    distance = jnp.asarray(DISTANCE, jnp.float32)

    def place(i, carry):
        pos, used = carry
        score = -TIER_PENALTY * tiers - HINT_DECAY * distance[board.e_last_known[i]] + gumbel[i]
        score = jnp.where(used | (tiers >= NO_TIER), -jnp.inf, score)
        cell = jnp.argmax(score).astype(jnp.int32)
        placing = hidden[i] & jnp.isfinite(score[cell])
        pos = pos.at[i].set(jnp.where(placing, cell, pos[i]))
        used = used.at[cell].set(used[cell] | placing)
        return pos, used

    pos, _ = jax.lax.fori_loop(0, MAX_OCCUPANTS, place, (board.e_pos, jnp.zeros(NUM_CELLS, bool)))
    ranked = jnp.sort(jnp.where(hidden, pos, NUM_CELLS + SLOTS))
    nth = jnp.cumsum(hidden.astype(jnp.int32)) - 1
    return jnp.where(hidden, ranked[jnp.clip(nth, 0, MAX_OCCUPANTS - 1)], pos)


def _redraw_board(
    board: Board,
    hidden: jax.Array,
    question: tuple[jax.Array, jax.Array, jax.Array],
    gumbel: jax.Array,
    tx_types: jax.Array,
) -> Board:
    """One projected board with its hidden fields drawn (shared draws passed in)."""
    is_data, points, program = question
    q = (board.content == BLOCK) & (board.block_kind == KIND_QUESTION)
    start = jnp.where(is_data, points, jnp.asarray(SPAWN_COST)[program])
    spawn = jnp.where(board.siphoned, 0, jnp.maximum(start - _reduc_uses(board), 0))
    t_type = jnp.where(board.t_active & ~board.show_activated, tx_types[board.t_pos], board.t_type)
    return board.replace(
        hidden_is_data=jnp.where(q, is_data, board.hidden_is_data),
        points=jnp.where(q, points, board.points),
        program=jnp.where(q, program, board.program),
        spawn_count=jnp.where(q, spawn, board.spawn_count),
        e_pos=_place_cryptogs(board, hidden, gumbel),
        t_type=t_type,
    )


def redraw(key: jax.Array, view: View) -> EnvState:
    """A state drawn from the view: every hidden field from its prior, a fresh seed.

    Draws that concern one thing on several boards (a question block's
    contents, a transmission's type by its cell, a hidden cryptog's noise) are
    made once and shared by the live board and the snapshots, so that UNDO
    inside the search restores the same hidden board. Resources under an
    unsiphoned block stay none: generation never puts any there (§10.5).
    """
    k_seed, k_question, k_cryptog, k_tx = jax.random.split(key, 4)
    question = _question_contents(k_question, view)
    gumbel = jax.random.gumbel(k_cryptog, (MAX_OCCUPANTS, NUM_CELLS), jnp.float32)
    # A transmission's type: the live board's when SHOW shows it there (the same
    # transmission stands on the same cell in a snapshot), else uniform (§9's draw mod 4).
    live = jax.tree_util.tree_map(lambda x: x[0], view.boards)
    drawn = jax.random.randint(k_tx, (NUM_CELLS,), 0, 4, jnp.int32)
    shown = (
        jnp.full(NUM_CELLS + 1, -1, jnp.int32)
        .at[jnp.where(live.t_active & live.show_activated, live.t_pos, NUM_CELLS)]
        .set(live.t_type)[:NUM_CELLS]
    )
    tx_types = jnp.where(shown >= 0, shown, drawn)
    boards = jax.vmap(_redraw_board, in_axes=(0, 0, None, None, None))(
        view.boards, view.hidden, question, gumbel, tx_types
    )
    present = _board_present(view)
    rows = jax.vmap(pack_board)(jax.tree_util.tree_map(lambda x: x[1:], boards))
    rows = jnp.where(present[1:, None], rows, 0)
    return view.state.replace(
        board=jax.tree_util.tree_map(lambda x: x[0], boards),
        seed=jax.random.bits(k_seed, (), jnp.uint32),
        step_index=jnp.zeros_like(view.state.step_index),
        history=rows.astype(jnp.int32),
        history_start=jnp.zeros_like(view.state.history_start),
    )


def sample_root(key: jax.Array, state: EnvState) -> EnvState:
    """A root for the search: `redraw(key, project(state))` (specs/search.md §2)."""
    return redraw(key, project(state))


def reseed_root(key: jax.Array, state: EnvState) -> EnvState:
    """NOT fair, for measuring what fairness costs: the true state with a fresh seed.

    The hidden board stays visible to the search (the issue's first probe).
    """
    return state.replace(
        seed=jax.random.bits(key, (), jnp.uint32), step_index=jnp.zeros_like(state.step_index)
    )
