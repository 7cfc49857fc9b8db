"""Reset and stage generation (game-rules.md §10).

Exit, data siphons, blocks, resources, starting transmissions.
Mirrors swift/Sources/HackMatrixCore/StageGeneration.swift.
"""

import jax
import jax.numpy as jnp
import numpy as np

from .board import occupied_cells
from .constants import (
    BLOCK,
    BLOCK_ATTEMPTS,
    DATA_SIPHON,
    EMPTY,
    EXIT,
    KIND_DATA,
    KIND_PROGRAM,
    KIND_QUESTION,
    NUM_CELLS,
    NUM_PROGRAMS,
    SITE_BLOCK_CELLS,
    SITE_BLOCK_COUNT,
    SITE_BLOCK_IS_DATA,
    SITE_BLOCK_IS_QUESTION,
    SITE_BLOCK_POINTS,
    SITE_BLOCK_PROGRAM_RANK,
    SITE_EXIT_CORNER,
    SITE_RESOURCE_AMOUNT,
    SITE_RESOURCE_KIND,
    SITE_START_BONUS,
    SITE_START_CORNER,
    SPAWN_COST,
)
from .grid import CELLS, CORNERS, IS_CORNER
from .machinery import bits, form
from .machinery.bits import CellSet
from .rng import draw, draw_from_base, rank_keys, site_base
from .spawning import STAGE_START, spawn_transmissions
from .state import Board, EnvState, empty_state

ATTEMPTS = np.arange(BLOCK_ATTEMPTS, dtype=np.int32)
PROGRAMS = np.arange(NUM_PROGRAMS, dtype=np.int32)


def _pick_corner(seed: jax.Array, site: int, step: jax.Array, allowed: jax.Array) -> jax.Array:
    """Pick one cell of the corners where `allowed` (bool[4]) holds; returns a cell index."""
    keys = draw(seed, site, step, jnp.asarray(CORNERS))
    rank = rank_keys(keys, allowed)
    return jnp.asarray(CORNERS)[jnp.argmin(rank)]


def _layouts_valid(chosen: jax.Array, exit_pos: jax.Array) -> jax.Array:
    """layoutIsValid (§10.4) for a batch of block sets chosen: bool[A, 36]."""
    blocks = bits.pack(chosen)
    free = ~blocks
    origin = bits.cell_bits(jnp.asarray(0))
    expandable = (free & ~bits.cell_bits(exit_pos)) | origin  # the exit is entered, not crossed

    def layer(_: jax.Array, visited: CellSet) -> CellSet:
        return (visited | bits.dilate(visited & expandable)) & free

    # Flood fill from cell 0: a fixed MAX_DIST layers reach every connected cell.
    start = CellSet(*(jnp.broadcast_to(o, b.shape) for o, b in zip(origin, blocks)))
    visited = bits.layers(layer, start)
    connected = (visited.lo == free.lo) & (visited.hi == free.hi)
    siphonable = ~blocks.intersects(~bits.dilate(free))  # every block is next to a free cell
    return connected & siphonable


ATTEMPT_CHUNK = 8  # attempts evaluated together; chunks run until one holds a valid layout
CHUNKS = -(-BLOCK_ATTEMPTS // ATTEMPT_CHUNK)


def _choose_cells(
    seed: jax.Array, step: jax.Array, allowed: jax.Array, n: jax.Array, attempts: jax.Array
) -> jax.Array:
    """The block cells of each attempt: the n smallest (key, cell) among allowed cells."""
    items = (NUM_CELLS * attempts[:, None] + CELLS[None, :]).astype(jnp.uint32)
    keys = draw_from_base(site_base(seed, SITE_BLOCK_CELLS, step), items)
    ranks = rank_keys(keys, jnp.broadcast_to(allowed, keys.shape))
    return allowed[None, :] & (ranks < n)


def _first_valid_attempt(
    seed: jax.Array, step: jax.Array, allowed: jax.Array, n: jax.Array, exit_pos: jax.Array
) -> jax.Array:
    """Lowest attempt in 0..99 with a valid layout, or BLOCK_ATTEMPTS when none.

    Attempts are independent (§10.3), so a chunk of them is checked at once.
    Gathered form: later chunks only while no valid attempt has been found.
    Masked form: every chunk, a fixed count (no loop waits on the data).
    """

    def chunk_found(chunk: jax.Array) -> jax.Array:
        attempts = chunk * ATTEMPT_CHUNK + jnp.arange(ATTEMPT_CHUNK, dtype=jnp.int32)
        valid = _layouts_valid(_choose_cells(seed, step, allowed, n, attempts), exit_pos)
        valid = valid & (attempts < BLOCK_ATTEMPTS)
        return jnp.where(jnp.any(valid), attempts[jnp.argmax(valid)], BLOCK_ATTEMPTS)

    none = jnp.asarray(BLOCK_ATTEMPTS, jnp.int32)
    if form.masked():
        return jax.lax.fori_loop(
            0, CHUNKS, lambda c, found: jnp.minimum(found, chunk_found(c)), none
        )

    def not_done(carry: tuple[jax.Array, jax.Array]) -> jax.Array:
        chunk, found = carry
        return (found >= BLOCK_ATTEMPTS) & (chunk < CHUNKS)

    def body(carry: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        chunk, _ = carry
        return chunk + 1, chunk_found(chunk)

    return jax.lax.while_loop(not_done, body, (jnp.asarray(0, jnp.int32), none))[1]


def place_blocks(board: Board, seed: jax.Array, step: jax.Array, exit_pos: jax.Array) -> Board:
    """placeBlocks (§10.3): the lowest-numbered valid attempt, or no blocks after 100 failures."""
    n = 5 + (draw(seed, SITE_BLOCK_COUNT, step, 0) % jnp.uint32(7)).astype(jnp.int32)
    has_enemy, has_tx = occupied_cells(board)
    allowed = jnp.asarray(~IS_CORNER) & ~has_enemy & ~has_tx
    a = _first_valid_attempt(seed, step, allowed, n, exit_pos)
    any_valid = a < BLOCK_ATTEMPTS
    chosen = _choose_cells(seed, step, allowed, n, a[None])[0] & any_valid
    item = (NUM_CELLS * a + CELLS).astype(jnp.uint32)
    data = draw(seed, SITE_BLOCK_IS_DATA, step, item) % jnp.uint32(100) < 50
    question = draw(seed, SITE_BLOCK_IS_QUESTION, step, item) % jnp.uint32(100) < 10
    points = 1 + (draw(seed, SITE_BLOCK_POINTS, step, item) % jnp.uint32(9)).astype(jnp.int32)
    prog_keys = draw(
        seed, SITE_BLOCK_PROGRAM_RANK, step, (NUM_CELLS * a + PROGRAMS).astype(jnp.uint32)
    )
    prog_rank = rank_keys(prog_keys, jnp.ones(NUM_PROGRAMS, jnp.bool_))
    program_by_rank = jnp.zeros(NUM_PROGRAMS, jnp.int32).at[prog_rank].set(PROGRAMS)
    is_prog = chosen & ~data
    k = bits.count_before_cells(is_prog)  # program-bearing chosen cells before this one
    program = jnp.where(is_prog, program_by_rank[jnp.clip(k, 0, NUM_PROGRAMS - 1)], 0)
    kind = jnp.where(question, KIND_QUESTION, jnp.where(data, KIND_DATA, KIND_PROGRAM))
    spawn = jnp.where(data, points, jnp.asarray(SPAWN_COST)[program])
    return board.replace(
        content=jnp.where(chosen, BLOCK, board.content),
        # int32 written out: kinds built from Python ints are weakly typed, and a state that
        # is weakly typed at reset but not once restored from a checkpoint compiles twice.
        block_kind=jnp.where(chosen, kind, 0).astype(jnp.int32),
        hidden_is_data=chosen & data,
        points=jnp.where(chosen & data, points, 0),
        program=jnp.where(is_prog, program, 0),
        spawn_count=jnp.where(chosen, spawn, 0),
    )


def place_resources(board: Board, seed: jax.Array, step: jax.Array) -> Board:
    """placeResources (§10.5) on EMPTY and DATA_SIPHON cells."""
    target = (board.content == EMPTY) | (board.content == DATA_SIPHON)
    r = draw(seed, SITE_RESOURCE_AMOUNT, step, CELLS) % jnp.uint32(100)
    amount = jnp.where(r < 45, 1, jnp.where(r < 90, 2, 3)).astype(jnp.int32)
    credits = draw(seed, SITE_RESOURCE_KIND, step, CELLS) % jnp.uint32(100) < 50
    return board.replace(
        cell_credits=jnp.where(target & credits, amount, 0),
        cell_energy=jnp.where(target & ~credits, amount, 0),
    )


def generate_stage(state: EnvState) -> EnvState:
    """generateStage (§10.2) with the state's stepIndex; keeps player, lists and pending."""
    seed, step = state.seed, state.step_index
    board = state.board
    player = board.player_pos
    zeros_i = jnp.zeros(NUM_CELLS, jnp.int32)
    zeros_b = jnp.zeros(NUM_CELLS, jnp.bool_)
    exit_pos = _pick_corner(seed, SITE_EXIT_CORNER, step, jnp.asarray(CORNERS) != player)
    content = jnp.where(IS_CORNER & (player != CELLS), DATA_SIPHON, EMPTY)
    content = jnp.where(exit_pos == CELLS, EXIT, content).astype(jnp.int32)
    board = board.replace(
        turn=jnp.asarray(0, jnp.int32),
        show_activated=jnp.asarray(False),
        tasks_disabled=jnp.asarray(False),
        atk_plus_uses=jnp.asarray(0, jnp.int32),
        content=content,
        block_kind=zeros_i,
        hidden_is_data=zeros_b,
        points=zeros_i,
        program=zeros_i,
        spawn_count=zeros_i,
        cell_credits=zeros_i,
        cell_energy=zeros_i,
        siphoned=zeros_b,
        siphon_center=zeros_b,
    )
    board = place_blocks(board, seed, step, exit_pos)
    board = place_resources(board, seed, step)
    board = spawn_transmissions(board, state.stage, seed, step, STAGE_START)
    return state.replace(
        board=board,
        exit_pos=exit_pos,
        next_task_turn=state.interval,
        step_active=jnp.asarray(False),
        history_count=jnp.asarray(0, jnp.int32),
    )


def starting_state(seed: jax.Array | int) -> EnvState:
    """reset(seed) of §10.1 up to the stage-1 generation: start corner and starting bonus."""
    seed = jnp.asarray(seed, jnp.uint32)
    state = empty_state().replace(seed=seed)
    zero = jnp.asarray(0, jnp.uint32)
    player = _pick_corner(seed, SITE_START_CORNER, zero, jnp.ones(4, jnp.bool_))
    bonus = (draw(seed, SITE_START_BONUS, zero, 0) % jnp.uint32(3)).astype(jnp.int32)
    board = state.board.replace(
        player_pos=player,
        credits=jnp.where(bonus == 0, 10, 0).astype(jnp.int32),
        energy=jnp.where(bonus == 1, 11, 0).astype(jnp.int32),
        data_siphons=jnp.where(bonus == 2, 1, 0).astype(jnp.int32),
    )
    return state.replace(board=board)


def new_game(seed: jax.Array | int) -> EnvState:
    """reset(seed) of §10.1 as a pure function of a uint32 seed."""
    return generate_stage(starting_state(seed))
