"""The keyed hash of randomness.md: every game decision is draw(seed, site, step, item)."""

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

from .machinery import form

_GOLDEN = 0x9E3779B9


def mix32(x: ArrayLike) -> jax.Array:
    """The 32-bit finaliser of randomness.md; wraps on jnp.uint32."""
    h = jnp.asarray(x, jnp.uint32)
    h = h ^ (h >> 16)
    h = h * jnp.uint32(0x21F0AAAD)
    h = h ^ (h >> 15)
    h = h * jnp.uint32(0x735A2D97)
    h = h ^ (h >> 15)
    return h


def site_base(seed: ArrayLike, site: int, step: ArrayLike) -> jax.Array:
    """The part of draw() shared by every item of one (seed, site, step)."""
    seed = jnp.asarray(seed, jnp.uint32)
    step = jnp.asarray(step, jnp.uint32)
    return mix32(mix32(mix32(seed ^ jnp.uint32(_GOLDEN)) ^ jnp.uint32(site)) ^ step)


def draw_from_base(base: jax.Array, item: ArrayLike) -> jax.Array:
    """draw() for one (seed, site, step) from its `site_base`; broadcasts over item."""
    return mix32(base ^ jnp.asarray(item, jnp.uint32))


def draw(seed: ArrayLike, site: int, step: ArrayLike, item: ArrayLike) -> jax.Array:
    """draw(seed, site, step, item) of randomness.md; broadcasts over item."""
    return draw_from_base(site_base(seed, site, step), item)


def rank_keys(keys: jax.Array, candidate: jax.Array, group: jax.Array | None = None) -> jax.Array:
    """Rank of each candidate in ascending (group, key, index) order.

    Non-candidates get a rank >= the number of entries. Pairwise counting
    instead of a sort: small (n <= 36) and vectorises well.
    """
    n = keys.shape[-1]
    idx = jnp.arange(n)
    k_other = keys[..., None, :]
    k_self = keys[..., :, None]
    before = (k_other < k_self) | ((k_other == k_self) & (idx[None, :] < idx[:, None]))
    if group is not None:
        g_other = group[..., None, :]
        g_self = group[..., :, None]
        before = (g_other < g_self) | ((g_other == g_self) & before)
    before = before & candidate[..., None, :]
    # Summed in pieces of at most 32: XLA's CPU backend turns longer reductions
    # into a reduce-window and materialises the whole comparison matrix.
    if form.masked():
        return jnp.where(candidate, 0, n) + jnp.sum(before, axis=-1, dtype=jnp.int32)
    rank = jnp.sum(before[..., :32], axis=-1, dtype=jnp.int32) + jnp.sum(
        before[..., 32:], axis=-1, dtype=jnp.int32
    )
    return jnp.where(candidate, rank, n + rank)
