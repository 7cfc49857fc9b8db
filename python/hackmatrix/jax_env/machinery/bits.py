"""36-cell sets packed into two uint32 words, for cheap fixed-iteration flood fills.

Cell c = 6*row + col lives in word `lo` (rows 0..2) at bit c, or in word `hi`
(rows 3..5) at bit c - 18. A `CellSet` combines with `&`, `|` and `~` (the
complement within the board), and a 4-neighbourhood dilation is a handful of
shifts.
"""

from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from . import form

T = TypeVar("T")
_MASK18 = np.uint32((1 << 18) - 1)
_ROW = np.uint32(0x3F)
_NOT_COL0 = np.uint32(sum(1 << (6 * r + c) for r in range(3) for c in range(1, 6)))
_NOT_COL5 = np.uint32(sum(1 << (6 * r + c) for r in range(3) for c in range(0, 5)))
_SHIFTS_LO = np.array([1 << i if i < 18 else 0 for i in range(36)], np.uint32)
_SHIFTS_HI = np.array([1 << (i - 18) if i >= 18 else 0 for i in range(36)], np.uint32)
MAX_DIST = 35  # longest shortest path on 36 cells


class CellSet(NamedTuple):
    """A set of cells as two uint32 words (a pytree: selects and loops carry it as is)."""

    lo: jax.Array
    hi: jax.Array

    def __and__(self, other: "CellSet") -> "CellSet":
        return CellSet(self.lo & other.lo, self.hi & other.hi)

    def __or__(self, other: "CellSet") -> "CellSet":
        return CellSet(self.lo | other.lo, self.hi | other.hi)

    def __invert__(self) -> "CellSet":
        return CellSet(~self.lo & _MASK18, ~self.hi & _MASK18)

    def intersects(self, other: "CellSet") -> jax.Array:
        return ((self.lo & other.lo) | (self.hi & other.hi)) != 0


FULL = CellSet(jnp.uint32(_MASK18), jnp.uint32(_MASK18))  # all 36 cells
EMPTY = CellSet(jnp.uint32(0), jnp.uint32(0))


def pack(mask: jax.Array) -> CellSet:
    """bool[..., 36] -> the set of its true cells."""
    # Two 18-cell sums: XLA's CPU backend slows reductions over > 32 items.
    m = mask.astype(jnp.uint32)
    if form.masked():  # both words in one reduction: one kernel
        shifts = (_SHIFTS_LO + _SHIFTS_HI).reshape(2, 18)
        words = jnp.sum(m.reshape(m.shape[:-1] + (2, 18)) * shifts, axis=-1, dtype=jnp.uint32)
        return CellSet(words[..., 0], words[..., 1])
    lo = jnp.sum(m[..., :18] * _SHIFTS_LO[:18], axis=-1, dtype=jnp.uint32)
    hi = jnp.sum(m[..., 18:] * _SHIFTS_HI[18:], axis=-1, dtype=jnp.uint32)
    return CellSet(lo, hi)


def unpack(cells: CellSet) -> jax.Array:
    """A set -> bool[..., 36]."""
    shift = jnp.asarray(np.arange(36) % 18, jnp.uint32)
    word = jnp.where(jnp.arange(36) < 18, cells.lo[..., None], cells.hi[..., None])
    return ((word >> shift) & 1) != 0


def any_cell(mask: jax.Array) -> jax.Array:
    """jnp.any over a bool[..., 36] cell mask, as two short reductions."""
    lo, hi = pack(mask)
    return (lo | hi) != 0


def cell_bits(c: jax.Array | int) -> CellSet:
    """The set {c} for an int32 cell index (36 or more gives the empty set)."""
    c = jnp.asarray(c, jnp.int32)
    one = jnp.uint32(1)
    lo = jnp.where(c < 18, one << jnp.clip(c, 0, 17).astype(jnp.uint32), jnp.uint32(0))
    hi = jnp.where(
        (c >= 18) & (c < 36), one << jnp.clip(c - 18, 0, 17).astype(jnp.uint32), jnp.uint32(0)
    )
    return CellSet(lo, hi)


def dilate(s: CellSet) -> CellSet:
    """The set plus its 4-neighbours (within the board)."""
    lo, hi = s
    left = ((lo & _NOT_COL0) >> 1, (hi & _NOT_COL0) >> 1)
    right = ((lo & _NOT_COL5) << 1, (hi & _NOT_COL5) << 1)
    up_lo = (lo << 6) & _MASK18
    up_hi = ((hi << 6) | (lo >> 12)) & _MASK18
    down_lo = (lo >> 6) | ((hi & _ROW) << 12)
    down_hi = hi >> 6
    return CellSet(
        lo | left[0] | right[0] | up_lo | down_lo, hi | left[1] | right[1] | up_hi | down_hi
    )


# The searches below run a fixed MAX_DIST layers, this many per loop round:
# the layers of a round fuse into one kernel, and the loop has few rounds.
LAYERS_PER_ROUND = 5


def layers(body: Callable[[jax.Array, T], T], start: T) -> T:
    """MAX_DIST rounds of `body(i, carry)`: LAYERS_PER_ROUND per loop round in the gathered
    form; all unrolled in the masked form (machinery/form.py), where the layers fuse into
    few kernels and no loop is left.
    """
    unroll: int | bool = True if form.masked() else LAYERS_PER_ROUND
    return jax.lax.fori_loop(0, MAX_DIST, body, start, unroll=unroll)


def grow(reached: CellSet, passable: CellSet) -> CellSet:
    """One wavefront layer: the reached set plus its passable 4-neighbours."""
    return reached | (dilate(reached) & passable)


def _stacked(targets: Sequence[CellSet]) -> CellSet:
    """K target sets as one set of uint32[K] words."""
    return CellSet(jnp.stack([t.lo for t in targets]), jnp.stack([t.hi for t in targets]))


def _hits(reached: CellSet, targets: CellSet) -> jax.Array:
    """bool[K]: which of the stacked target sets `reached` touches."""
    return ((reached.lo & targets.lo) | (reached.hi & targets.hi)) != 0


def first_reached(
    start: CellSet, passable: CellSet, targets: Sequence[CellSet]
) -> tuple[jax.Array, jax.Array]:
    """Breadth-first layers from `start` through `passable` cells.

    `targets` is a sequence of K cell sets (possibly empty).
    Returns (dist int32[K], first int32): `first` is the lowest k among the
    targets reached at the smallest layer (-1 if none); dist[k] is that layer
    for the targets reached in it (start itself is layer 0) and -1 for the
    others (layers after the first one that reaches a target record nothing).

    A fixed-iteration wavefront of MAX_DIST layers, the longest shortest path
    on 36 cells: the trip count does not depend on the board, so under vmap
    (and on accelerators) no round waits on a data-dependent predicate.
    """
    stacked = _stacked(targets)

    def layer(i: jax.Array, carry: tuple[CellSet, jax.Array]) -> tuple[CellSet, jax.Array]:
        reached, dist = carry
        grown = grow(reached, passable)
        dist = jnp.where(~jnp.any(dist >= 0) & _hits(grown, stacked), i + 1, dist)
        return grown, dist

    dist0 = jnp.where(_hits(start, stacked), 0, -1).astype(jnp.int32)
    _, dist = layers(layer, (start, dist0))
    best = jnp.min(jnp.where(dist >= 0, dist, 1 << 20))
    first = jnp.argmax((dist == best) & (dist >= 0)).astype(jnp.int32)
    first = jnp.where(jnp.any(dist >= 0), first, -1)
    return dist, first


def first_target_reached(
    start: CellSet, passable: CellSet, targets: Sequence[CellSet]
) -> jax.Array:
    """The lowest k whose target set a breadth-first search from `start` reaches first, or -1.

    Like `first_reached` without the layer numbers: the reached set grows
    through `passable` cells and freezes at the first layer that touches any
    target (every target touched then was reached in that same layer). A
    fixed MAX_DIST layers, as in `first_reached`; the carry is two words.
    """
    stacked = _stacked(targets)
    any_target = targets[0]
    for t in targets[1:]:
        any_target = any_target | t

    def layer(_: jax.Array, reached: CellSet) -> CellSet:
        touched = reached.intersects(any_target)
        grown = grow(reached, passable)
        return CellSet(*(jnp.where(touched, r, g) for r, g in zip(reached, grown)))

    reached = layers(layer, start)
    hit = _hits(reached, stacked)
    return jnp.where(jnp.any(hit), jnp.argmax(hit), -1).astype(jnp.int32)


_BEFORE_LO = np.array([(1 << min(i, 18)) - 1 for i in range(36)], np.uint32)
_BEFORE_HI = np.array([(1 << max(i - 18, 0)) - 1 for i in range(36)], np.uint32)


def count_before_cells(mask: jax.Array) -> jax.Array:
    """int32[..., 36]: for each cell, how many cells before it are in the mask (exclusive)."""
    lo, hi = pack(mask)
    before = jax.lax.population_count(lo[..., None] & _BEFORE_LO) + jax.lax.population_count(
        hi[..., None] & _BEFORE_HI
    )
    return before.astype(jnp.int32)
