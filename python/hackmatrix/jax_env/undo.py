"""The UNDO history (game-rules.md §7.10, §8.9): push a snapshot, pop the newest, (de)serialize.

Mirrors swift/Sources/HackMatrixCore/Undo.swift. A snapshot is a `Board`
packed into one row of the state's history ring (`state.SNAPSHOT`,
`machinery/history.py`).
"""

from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .constants import UNDO_DEPTH
from .machinery import history as ring
from .state import SNAPSHOT, Board


def pack_board(board: Board) -> jax.Array:
    """Board -> int32[SNAPSHOT.row_size] (every field but the origin flags)."""
    return SNAPSHOT.pack(board)


def unpack_board(row: jax.Array) -> Board:
    """int32[SNAPSHOT.row_size] -> Board (the inverse of pack_board, origin flags false)."""
    return Board(**SNAPSHOT.unpack(row))


def push(
    history: jax.Array,
    count: jax.Array,
    start: jax.Array,
    board: Board,
    pushing: jax.Array | bool = True,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """§8.9: push `board` where `pushing`, dropping the oldest beyond UNDO_DEPTH.

    Returns (history, count, start).
    """
    return ring.push(history, count, start, pack_board(board), pushing)


def newest(history: jax.Array, count: jax.Array, start: jax.Array) -> Board:
    """§7.10: the most recent snapshot as a Board (meaningless when count is 0)."""
    return unpack_board(ring.newest_row(history, count, start))


def snapshots(history: Any, count: Any, start: Any) -> list[dict[str, np.ndarray]]:
    """The held snapshots, oldest first, as numpy dicts of every Board field (for serialization)."""
    return [SNAPSHOT.unpack_numpy(row) for row in ring.rows_oldest_first(history, count, start)]


def stack_rows(boards: Sequence[Mapping[str, np.ndarray]]) -> jax.Array:
    """A history array from up to UNDO_DEPTH numpy board dicts (oldest first), zero rows after."""
    rows = np.zeros((UNDO_DEPTH, SNAPSHOT.row_size), np.int32)
    for k, fields in enumerate(boards):
        rows[k] = SNAPSHOT.pack_numpy(fields)
    return jnp.asarray(rows)
