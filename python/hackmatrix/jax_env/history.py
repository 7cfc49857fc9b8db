"""The UNDO history (game-rules.md §7.10, §8.9): a ring of packed board snapshots.

Each snapshot is a `Board` flattened into one int32 row (booleans as 0/1), so
pushing a snapshot writes one contiguous row and the rest of a step never
touches the history: a `Board` of per-field arrays with a leading ring axis
used to be copied and selected field by field several times per step, which
was a quarter of the vmapped step's time. Only UNDO reads a row back.
"""

import jax.numpy as jnp
import numpy as np

from .constants import UNDO_DEPTH
from .state import Board, empty_board

# Spawn-origin flags are always false in a snapshot (protocol.md §6.5), so rows leave them out.
ORIGIN_FLAGS = ("e_from_siphon", "e_from_sched", "t_from_siphon", "t_from_sched")
# (field, shape, is_bool) in Board order, and each field's span in the row.
_EMPTY = empty_board()
LAYOUT = tuple(
    (name, np.shape(getattr(_EMPTY, name)), getattr(_EMPTY, name).dtype == jnp.bool_)
    for name in Board.__dataclass_fields__
    if name not in ORIGIN_FLAGS
)
_SIZES = [int(np.prod(shape)) for _, shape, _ in LAYOUT]
_OFFSETS = np.concatenate([[0], np.cumsum(_SIZES)]).astype(int)
ROW_SIZE = int(_OFFSETS[-1])


def _pack(field, xp):
    """The row of a board whose fields `field(name)` gives, with numpy or jax.numpy as `xp`."""
    return xp.concatenate(
        [xp.ravel(xp.asarray(field(name))).astype(xp.int32) for name, _, _ in LAYOUT]
    )


def _unpack(row, xp):
    """{field: value} of every Board field from one row (origin flags false), with `xp` as in _pack."""
    fields = {name: xp.zeros(np.shape(getattr(_EMPTY, name)), bool) for name in ORIGIN_FLAGS}
    for (name, shape, is_bool), lo, hi in zip(LAYOUT, _OFFSETS[:-1], _OFFSETS[1:]):
        value = row[lo:hi].reshape(shape)
        fields[name] = value != 0 if is_bool else value
    return fields


def pack_board(board):
    """Board -> int32[ROW_SIZE] (every field but the origin flags)."""
    return _pack(lambda name: getattr(board, name), jnp)


def unpack_board(row):
    """int32[ROW_SIZE] -> Board (the inverse of pack_board, origin flags false)."""
    return Board(**_unpack(row, jnp))


def empty_history():
    return jnp.zeros((UNDO_DEPTH, ROW_SIZE), jnp.int32)


def push(history, count, start, board, pushing=True):
    """Push `board` where `pushing`, dropping the oldest beyond UNDO_DEPTH: (history, count, start).

    The row is written with a dropped out-of-range index when not pushing, so
    nothing else of the ring is read or rewritten.
    """
    full = count >= UNDO_DEPTH
    slot = (start + count) % UNDO_DEPTH  # when full: the oldest's slot
    row = pack_board(board)  # the snapshot of §8.9: origin flags are not stored
    history = history.at[jnp.where(pushing, slot, UNDO_DEPTH)].set(row, mode="drop")
    count = jnp.where(pushing, jnp.minimum(count + 1, UNDO_DEPTH), count)
    start = jnp.where(pushing & full, (start + 1) % UNDO_DEPTH, start)
    return history, count, start


def newest(history, count, start):
    """The most recent snapshot as a Board (meaningless when count is 0)."""
    top = (start + jnp.maximum(count - 1, 0)) % UNDO_DEPTH
    return unpack_board(history[top])


def snapshots(history, count, start):
    """The held snapshots, oldest first, as numpy dicts of every Board field (for serialization).

    Unpacked with numpy: this runs outside jit, once per getState.
    """
    rows = np.asarray(history)
    return [_unpack(rows[(int(start) + k) % UNDO_DEPTH], np) for k in range(int(count))]


def stack_rows(boards):
    """A history array from up to UNDO_DEPTH numpy board dicts (oldest first), zero rows after."""
    rows = np.zeros((UNDO_DEPTH, ROW_SIZE), np.int32)
    for k, fields in enumerate(boards):
        rows[k] = _pack(fields.__getitem__, np)
    return jnp.asarray(rows)
