"""Numeric observation (observation.md §3-§5, §8) computed straight from the state."""

import jax
import jax.numpy as jnp
import numpy as np

from .board import value_on_cells
from .constants import (
    BLOCK,
    CRYPTOG,
    DATA_SIPHON,
    EXIT,
    KIND_DATA,
    KIND_PROGRAM,
    KIND_QUESTION,
    NUM_CELLS,
    NUM_PROGRAMS,
)
from .grid import CELL_COL, CELL_ROW, col, row
from .state import Board, EnvState


def _ratio(x: jax.Array, denom: int) -> jax.Array:
    """sat(f32(x / denom)) as a table lookup of correctly rounded quotients.

    Saturation means only x in 0..denom matter. A lookup (rather than a float
    division) keeps the bits exact: XLA may rewrite x / c as x * (1 / c),
    which differs in the last bit for some quotients of 7, 10 and 50.
    """
    table = np.array([np.float32(k / denom) for k in range(denom + 1)], np.float32)
    return jnp.asarray(table)[jnp.clip(x, 0, denom)]


# Denominators of the grid's ratios: for these, x * f32(1 / c) equals the
# correctly rounded x / c for every x in 0..c (tests/jax_env check it), so a
# division is exact however XLA compiles it, and it needs no gather per cell.
CELL_DENOMINATORS = (3, 4, 9)


def _cell_ratio(x: jax.Array, denom: int) -> jax.Array:
    """sat(f32(x / denom)) for a per-cell array, denom in CELL_DENOMINATORS."""
    assert denom in CELL_DENOMINATORS
    return jnp.clip(x, 0, denom).astype(jnp.float32) / np.float32(denom)


def _flag(x: jax.Array) -> jax.Array:
    return x.astype(jnp.float32)


def _enemy_channels(b: Board, pr: jax.Array, pc: jax.Array) -> list[jax.Array]:
    """Channels 0..6 (§5.2): type one-hot, hp, stunned, spawned by a siphon.

    The fields travel to the cells packed in one value (one scatter instead of
    a scatter of slot numbers and a gather per field).
    """
    packed = (
        b.e_type
        | (jnp.clip(b.e_hp, 0, 3) << 2)
        | (b.e_stunned.astype(jnp.int32) << 4)
        | (b.e_from_siphon.astype(jnp.int32) << 5)
    )
    code = value_on_cells(b.e_active, b.e_pos, packed)[:NUM_CELLS]
    etype, hp, stunned, from_siphon = code & 3, (code >> 2) & 3, (code >> 4) & 1, (code >> 5) & 1
    visible = (code >= 0) & (
        (etype != CRYPTOG) | (pr == CELL_ROW) | (pc == CELL_COL) | b.show_activated
    )
    channels = [_flag(visible & (etype == t)) for t in range(4)]
    return channels + [
        jnp.where(visible, _cell_ratio(hp, 3), 0.0),
        _flag(visible & (stunned == 1)),
        _flag(visible & (from_siphon == 1)),
    ]


def _block_channels(b: Board) -> tuple[list[jax.Array], jax.Array, jax.Array]:
    """Channels 7..35 (§5.2): (channels 7..11, program one-hot 12..34 as [36, 23], channel 35).

    7..11: data / program / question block, points, siphoned mark; 35: spawn count.
    """
    block = b.content == BLOCK
    kind = b.block_kind
    shows_contents = block & (kind != KIND_QUESTION)
    data = shows_contents & (kind == KIND_DATA)
    prog = shows_contents & (kind == KIND_PROGRAM)
    channels = [
        _flag(data),
        _flag(prog),
        _flag(block & (kind == KIND_QUESTION)),
        jnp.where(data, _cell_ratio(b.points, 9), 0.0),
        _flag(block & b.siphoned),
    ]
    program_onehot = (
        prog[:, None] & (b.program[:, None] == jnp.arange(NUM_PROGRAMS)[None, :])
    ).astype(jnp.float32)
    return channels, program_onehot, jnp.where(shows_contents, _cell_ratio(b.spawn_count, 9), 0.0)


def _cell_channels(b: Board) -> list[jax.Array]:
    """Channels 36..41 (§5.2): transmission countdown, resources, pickup, exit, siphon centre."""
    countdown = value_on_cells(b.t_active, b.t_pos, jnp.clip(b.t_countdown, 0, 4))[:NUM_CELLS]
    res_visible = (b.content != BLOCK) | b.siphoned
    return [
        jnp.where(countdown >= 0, _cell_ratio(countdown, 4), 0.0),
        jnp.where(res_visible, _cell_ratio(b.cell_credits, 3), 0.0),
        jnp.where(res_visible, _cell_ratio(b.cell_energy, 3), 0.0),
        _flag(b.content == DATA_SIPHON),
        _flag(b.content == EXIT),
        _flag(b.siphon_center),
    ]


def observe(state: EnvState) -> dict[str, jax.Array]:
    """{"player": f32[10], "programs": i32[23], "grid": f32[6,6,42]}."""
    b = state.board
    pr, pc = row(b.player_pos), col(b.player_pos)
    player = jnp.stack(
        [
            _ratio(pr, 5),
            _ratio(pc, 5),
            _ratio(b.hp, 3),
            _ratio(b.credits, 50),
            _ratio(b.energy, 50),
            _ratio(state.stage - 1, 7),
            _ratio(b.data_siphons, 10),
            _ratio(b.attack - 1, 2),
            _flag(b.show_activated),
            _flag(b.tasks_disabled),
        ]
    )
    programs = b.owned.astype(jnp.int32)
    block, program_onehot, spawn = _block_channels(b)
    # Few wide pieces: under vmap XLA assembles the grid in one pass that picks
    # the source piece per value, so fewer pieces mean less work per value.
    grid = jnp.concatenate(
        [
            jnp.stack(_enemy_channels(b, pr, pc) + block, axis=-1),
            program_onehot,
            jnp.stack([spawn] + _cell_channels(b), axis=-1),
        ],
        axis=-1,
    )
    return {"player": player, "programs": programs, "grid": grid.reshape(6, 6, 42)}


def flatten_observation(parts: dict[str, jax.Array]) -> jax.Array:
    """player ‖ float32(programs) ‖ grid (row-major) = f32[1545] (§8); works on batches too."""
    lead = parts["player"].shape[:-1]
    return jnp.concatenate(
        [
            parts["player"],
            parts["programs"].astype(jnp.float32),
            parts["grid"].reshape(lead + (-1,)),
        ],
        axis=-1,
    )
