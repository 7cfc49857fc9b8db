"""Counting over the 35 enemy/transmission slots with bit operations.

The lists' bookkeeping needs counts and prefix counts of boolean slot masks
(how many entries are active, where each kept entry goes when the list is
compacted). On XLA's CPU backend `cumsum` becomes a quadratic reduce-window
and a reduction over more than 32 elements is split into a reduce-window as
well; packing the mask into two words and counting bits with `popcount`
keeps all of it elementwise and fused. In the masked form (form.py), built
for accelerators, each count is one plain reduction instead: fewer kernels.
"""

import jax
import jax.numpy as jnp
import numpy as np

from ..constants import MAX_OCCUPANTS
from . import form

_LOW = 32  # slots 0..31 live in the low word, 32..34 in the high word
_BIT_LO = np.array([1 << i if i < _LOW else 0 for i in range(MAX_OCCUPANTS)], np.uint32)
_BIT_HI = np.array([1 << (i - _LOW) if i >= _LOW else 0 for i in range(MAX_OCCUPANTS)], np.uint32)
# Both words' bits over 64 padded slots: row 0 is the low word, row 1 the high word.
_BITS_2X32 = np.concatenate(
    [_BIT_LO[:_LOW], _BIT_HI[_LOW:], np.zeros(2 * _LOW - MAX_OCCUPANTS, np.uint32)]
)
# Bits of the slots strictly before slot i, in each word.
_BEFORE_LO = np.array([(1 << min(i, _LOW)) - 1 for i in range(MAX_OCCUPANTS)], np.uint64).astype(
    np.uint32
)
_BEFORE_HI = np.array([(1 << max(i - _LOW, 0)) - 1 for i in range(MAX_OCCUPANTS)], np.uint32)


def pack(mask: jax.Array) -> tuple[jax.Array, jax.Array]:
    """bool[..., 35] -> (lo, hi) uint32 words (two reductions of at most 32 elements)."""
    m = mask.astype(jnp.uint32)
    if form.masked():  # one reduction over both words
        bits = jnp.concatenate(
            [_BIT_LO[:_LOW], _BIT_HI[_LOW:], np.zeros(2 * _LOW - MAX_OCCUPANTS, np.uint32)]
        )
        pad = [(0, 0)] * (m.ndim - 1) + [(0, 2 * _LOW - MAX_OCCUPANTS)]
        words = jnp.sum(
            (jnp.pad(m, pad) * bits).reshape(m.shape[:-1] + (2, _LOW)), axis=-1, dtype=jnp.uint32
        )
        return words[..., 0], words[..., 1]
    lo = jnp.sum(m[..., :_LOW] * _BIT_LO[:_LOW], axis=-1, dtype=jnp.uint32)
    hi = jnp.sum(m[..., _LOW:] * _BIT_HI[_LOW:], axis=-1, dtype=jnp.uint32)
    return lo, hi


def count(mask: jax.Array) -> jax.Array:
    """Number of true slots, int32."""
    lo, hi = pack(mask)
    return (jax.lax.population_count(lo) + jax.lax.population_count(hi)).astype(jnp.int32)


def count_before(mask: jax.Array) -> jax.Array:
    """int32[..., 35]: for each slot, the number of true slots before it (exclusive prefix sum)."""
    lo, hi = pack(mask)
    before = jax.lax.population_count(lo[..., None] & _BEFORE_LO) + jax.lax.population_count(
        hi[..., None] & _BEFORE_HI
    )
    return before.astype(jnp.int32)


def _trailing_zeros(word: jax.Array) -> jax.Array:
    """Index of the lowest set bit of a uint32 (32 when zero)."""
    lowest = word & (~word + jnp.uint32(1))
    return jnp.where(
        word == 0, 32, jax.lax.population_count(lowest - jnp.uint32(1)).astype(jnp.int32)
    )


def first(mask: jax.Array) -> jax.Array:
    """Index of the first true slot, 0 when none (like argmax), int32."""
    lo, hi = pack(mask)
    return jnp.where(
        lo != 0, _trailing_zeros(lo), jnp.where(hi != 0, _LOW + _trailing_zeros(hi), 0)
    ).astype(jnp.int32)


def any_true(mask: jax.Array) -> jax.Array:
    """Whether any slot is true."""
    lo, hi = pack(mask)
    return (lo | hi) != 0


def smallest(values: jax.Array, fill: jax.Array | int) -> jax.Array:
    """Minimum over the last (slot or cell) axis in pieces of at most 32 elements."""
    return jnp.minimum(
        jnp.min(values[..., :_LOW], axis=-1, initial=fill),
        jnp.min(values[..., _LOW:], axis=-1, initial=fill),
    )


def total(values: jax.Array) -> jax.Array:
    """Sum over the last (slot) axis in pieces of at most 32 elements, keeping the dtype."""
    return jnp.sum(values[..., :_LOW], axis=-1, dtype=values.dtype) + jnp.sum(
        values[..., _LOW:], axis=-1, dtype=values.dtype
    )
