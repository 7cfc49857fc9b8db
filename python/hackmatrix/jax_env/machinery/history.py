"""A ring of packed rows: the storage of the UNDO history (game-rules.md §7.10, §8.9).

A snapshot (a flax.struct dataclass of arrays) is flattened into one int32
row (booleans as 0/1) by a `RowLayout`, so pushing a snapshot writes one
contiguous row and the rest of a step never touches the ring: a dataclass of
per-field arrays with a leading ring axis used to be copied and selected field
by field several times per step, which was a quarter of the vmapped step's
time. Only UNDO reads a row back.
"""

from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


class RowLayout:
    """Where each field of a snapshot dataclass lives in a packed int32 row.

    Built from a template instance; the fields named in `omit` are not
    stored and unpack as all-false booleans.
    """

    def __init__(self, template: Any, omit: tuple[str, ...] = ()) -> None:
        self.omit = omit
        self.omitted_shapes = {name: np.shape(getattr(template, name)) for name in omit}
        # (field, shape, is_bool) in the dataclass's order, and each field's span in the row.
        self.fields = tuple(
            (name, np.shape(getattr(template, name)), getattr(template, name).dtype == jnp.bool_)
            for name in type(template).__dataclass_fields__
            if name not in omit
        )
        sizes = [int(np.prod(shape)) for _, shape, _ in self.fields]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.row_size = int(self.offsets[-1])

    def _pack(self, field: Callable[[str], Any], xp: Any) -> Any:
        """The row of a snapshot whose fields `field(name)` gives; `xp` is numpy or jax.numpy."""
        return xp.concatenate(
            [xp.ravel(xp.asarray(field(name))).astype(xp.int32) for name, _, _ in self.fields]
        )

    def _unpack(self, row: Any, xp: Any) -> dict[str, Any]:
        """{field: value} of every field of one row (omitted ones false); `xp` as in _pack."""
        fields = {name: xp.zeros(shape, bool) for name, shape in self.omitted_shapes.items()}
        for (name, shape, is_bool), lo, hi in zip(self.fields, self.offsets[:-1], self.offsets[1:]):
            value = row[lo:hi].reshape(shape)
            fields[name] = value != 0 if is_bool else value
        return fields

    def pack(self, snapshot: Any) -> jax.Array:
        """A snapshot dataclass -> int32[row_size]."""
        return self._pack(lambda name: getattr(snapshot, name), jnp)

    def unpack(self, row: jax.Array) -> dict[str, jax.Array]:
        """int32[row_size] -> {field: value} (the inverse of pack, omitted fields false)."""
        return self._unpack(row, jnp)

    def pack_numpy(self, fields: Mapping[str, np.ndarray]) -> np.ndarray:
        """A row from a numpy {field: value} dict, outside jit."""
        return self._pack(fields.__getitem__, np)

    def unpack_numpy(self, row: np.ndarray) -> dict[str, np.ndarray]:
        """A numpy {field: value} dict from a row, outside jit."""
        return self._unpack(row, np)


def push(
    ring: jax.Array, count: jax.Array, start: jax.Array, row: jax.Array, pushing: Any = True
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Push `row` where `pushing`, dropping the oldest when full: (ring, count, start).

    The row is written with a dropped out-of-range index when not pushing, so
    nothing else of the ring is read or rewritten.
    """
    depth = ring.shape[0]
    full = count >= depth
    slot = (start + count) % depth  # when full: the oldest's slot
    ring = ring.at[jnp.where(pushing, slot, depth)].set(row, mode="drop")
    count = jnp.where(pushing, jnp.minimum(count + 1, depth), count)
    start = jnp.where(pushing & full, (start + 1) % depth, start)
    return ring, count, start


def newest_row(ring: jax.Array, count: jax.Array, start: jax.Array) -> jax.Array:
    """The most recent row (meaningless when count is 0)."""
    depth = ring.shape[0]
    return ring[(start + jnp.maximum(count - 1, 0)) % depth]


def rows_oldest_first(ring: Any, count: Any, start: Any) -> list[np.ndarray]:
    """The held rows, oldest first, as numpy arrays (outside jit)."""
    rows = np.asarray(ring)
    depth = rows.shape[0]
    return [rows[(int(start) + k) % depth] for k in range(int(count))]
