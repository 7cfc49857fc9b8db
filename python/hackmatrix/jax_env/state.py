"""Fixed-shape game state (game-rules.md §2) as flax.struct dataclasses.

`Board` holds exactly the fields an UNDO snapshot restores (§7.10); `EnvState`
adds the fields UNDO leaves alone and up to `UNDO_DEPTH` snapshots of history
(`machinery/history.py`: a ring of packed rows laid out by `SNAPSHOT`, so
that pushing writes one row; `undo.py` pushes and pops them).
Enemies and transmissions live in 35 slots each. Active entries always form a
prefix of the slots in list order: removal compacts stably, appends go right
after the last active entry.
"""

from typing import TYPE_CHECKING, Any, Self

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from .constants import LAST_STAGE, MAX_OCCUPANTS, NUM_CELLS, NUM_PROGRAMS, UNDO_DEPTH
from .machinery.history import RowLayout


def _param(value: object, dtype: type) -> np.ndarray:
    """A field default: a fresh numpy array of a fixed dtype (never weakly typed: no recompiles)."""
    return struct.field(default_factory=lambda: np.asarray(value, dtype))


class _Record:
    """Typing only: `flax.struct.dataclass` adds `replace` to the records below at run time."""

    if TYPE_CHECKING:

        def replace(self, **changes: Any) -> Self: ...


@struct.dataclass
class EnvParams(_Record):
    """Research options of the JAX engine (gymnax convention).

    The defaults are the canonical game, bit for bit.

    Every field is an array (a traced leaf under jit): changing a value, e.g.
    annealing `curriculum_prob` between training chunks, never recompiles.
    The curriculum fields (curriculum.py) say how a reset may start a game at
    a later stage with programs and resources; build them with
    `curriculum.curriculum_params`, which checks them.
    """

    curriculum_prob: np.ndarray = _param(
        0.0, np.float32
    )  # chance that a reset is a curriculum start
    curriculum_stage_weights: np.ndarray = _param(
        [1.0] + [0.0] * (LAST_STAGE - 1), np.float32
    )  # stages 1..8
    curriculum_programs: np.ndarray = _param(
        [0, 0], np.int32
    )  # owned programs: a count uniform in [lo, hi]
    curriculum_credits: np.ndarray = _param(
        [0, 0], np.int32
    )  # added to the starting bonus: uniform in [lo, hi]
    curriculum_energy: np.ndarray = _param([0, 0], np.int32)
    curriculum_data_siphons: np.ndarray = _param([0, 0], np.int32)
    curriculum_transmissions: np.ndarray = _param(
        [0, 0], np.int32
    )  # siphon transmissions pending at the start: uniform in [lo, hi]


@struct.dataclass
class Board(_Record):
    # player
    player_pos: jnp.ndarray  # int32 cell index
    hp: jnp.ndarray
    credits: jnp.ndarray
    energy: jnp.ndarray
    data_siphons: jnp.ndarray
    attack: jnp.ndarray
    score: jnp.ndarray
    owned: jnp.ndarray  # bool[23]
    turn: jnp.ndarray
    # cells
    content: jnp.ndarray  # int32[36]: EMPTY / BLOCK / DATA_SIPHON / EXIT
    block_kind: jnp.ndarray  # int32[36]
    hidden_is_data: jnp.ndarray  # bool[36]: data-bearing (for every kind)
    points: jnp.ndarray  # int32[36]
    program: jnp.ndarray  # int32[36]
    spawn_count: jnp.ndarray  # int32[36]
    cell_credits: jnp.ndarray  # int32[36]
    cell_energy: jnp.ndarray  # int32[36]
    siphoned: jnp.ndarray  # bool[36]
    siphon_center: jnp.ndarray  # bool[36]
    # enemies (35 slots, active prefix)
    e_active: jnp.ndarray
    e_type: jnp.ndarray
    e_pos: jnp.ndarray
    e_hp: jnp.ndarray
    e_disabled: jnp.ndarray
    e_stunned: jnp.ndarray
    e_from_siphon: jnp.ndarray
    e_from_sched: jnp.ndarray
    e_last_known: jnp.ndarray  # cell index
    # transmissions (35 slots, active prefix)
    t_active: jnp.ndarray
    t_pos: jnp.ndarray
    t_countdown: jnp.ndarray
    t_type: jnp.ndarray
    t_from_siphon: jnp.ndarray
    t_from_sched: jnp.ndarray
    # flags
    show_activated: jnp.ndarray
    tasks_disabled: jnp.ndarray
    atk_plus_uses: jnp.ndarray


@struct.dataclass
class EnvState(_Record):
    board: Board
    seed: jnp.ndarray  # uint32
    step_index: jnp.ndarray  # uint32
    outcome: jnp.ndarray  # RUNNING / DIED / WON
    stage: jnp.ndarray
    interval: jnp.ndarray
    next_task_turn: jnp.ndarray
    pending: jnp.ndarray
    step_active: jnp.ndarray
    exit_pos: jnp.ndarray
    history: jnp.ndarray  # int32[UNDO_DEPTH, SNAPSHOT.row_size]: packed boards in a ring
    history_count: jnp.ndarray  # snapshots held (0..UNDO_DEPTH); rows beyond them are stale
    history_start: jnp.ndarray  # ring slot of the oldest snapshot


def _i(v: int = 0) -> jax.Array:
    return jnp.asarray(v, jnp.int32)


def _b(v: bool = False) -> jax.Array:
    return jnp.asarray(v, jnp.bool_)


def empty_board() -> Board:
    """All-zero board: no blocks, no enemies, no transmissions, player at cell 0."""
    zi36 = jnp.zeros(NUM_CELLS, jnp.int32)
    zb36 = jnp.zeros(NUM_CELLS, jnp.bool_)
    zi = jnp.zeros(MAX_OCCUPANTS, jnp.int32)
    zb = jnp.zeros(MAX_OCCUPANTS, jnp.bool_)
    return Board(
        player_pos=_i(),
        hp=_i(3),
        credits=_i(),
        energy=_i(),
        data_siphons=_i(),
        attack=_i(1),
        score=_i(),
        owned=jnp.zeros(NUM_PROGRAMS, jnp.bool_),
        turn=_i(),
        content=zi36,
        block_kind=zi36,
        hidden_is_data=zb36,
        points=zi36,
        program=zi36,
        spawn_count=zi36,
        cell_credits=zi36,
        cell_energy=zi36,
        siphoned=zb36,
        siphon_center=zb36,
        e_active=zb,
        e_type=zi,
        e_pos=zi,
        e_hp=zi,
        e_disabled=zi,
        e_stunned=zb,
        e_from_siphon=zb,
        e_from_sched=zb,
        e_last_known=zi,
        t_active=zb,
        t_pos=zi,
        t_countdown=zi,
        t_type=zi,
        t_from_siphon=zb,
        t_from_sched=zb,
        show_activated=_b(),
        tasks_disabled=_b(),
        atk_plus_uses=_i(),
    )


# Spawn-origin flags are always false in a snapshot (protocol.md §6.5), so rows leave them out.
ORIGIN_FLAGS = ("e_from_siphon", "e_from_sched", "t_from_siphon", "t_from_sched")
# How an UNDO snapshot (a Board without its origin flags) packs into one history row.
SNAPSHOT = RowLayout(empty_board(), omit=ORIGIN_FLAGS)


def empty_history() -> jax.Array:
    return jnp.zeros((UNDO_DEPTH, SNAPSHOT.row_size), jnp.int32)


def empty_state() -> EnvState:
    board = empty_board()
    history = empty_history()
    return EnvState(
        board=board,
        seed=jnp.asarray(0, jnp.uint32),
        step_index=jnp.asarray(0, jnp.uint32),
        outcome=_i(),
        stage=_i(1),
        interval=_i(12),
        next_task_turn=_i(12),
        pending=_i(),
        step_active=_b(),
        exit_pos=_i(35),
        history=history,
        history_count=_i(),
        history_start=_i(),
    )
