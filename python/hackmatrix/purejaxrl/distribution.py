"""Categorical distribution over the valid actions only (training.md §2.4)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

# Finite stand-in for -inf: keeps softmax free of NaN when combined with 0 * x.
MASKED_LOGIT = -1e9
ENTROPY_PROB_FLOOR = 1e-8


def masked_logits(logits: jax.Array, mask: jax.Array) -> jax.Array:
    return jnp.where(mask, logits, MASKED_LOGIT)


def sample(key: jax.Array, logits: jax.Array, mask: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Gumbel-max sample from the masked logits.

    Returns `(action, empty)`. A row with no valid action cannot be sampled
    honestly; it gets action 0 and `empty=True` so the caller counts it
    (`stats/empty_mask_steps`) instead of silently acting.
    """
    gumbel = jax.random.gumbel(key, logits.shape, dtype=jnp.float32)
    action = jnp.argmax(masked_logits(logits, mask) + gumbel, axis=-1)
    empty = ~jnp.any(mask, axis=-1)
    return jnp.where(empty, 0, action), empty


def log_prob(logits: jax.Array, mask: jax.Array, action: jax.Array) -> jax.Array:
    logp_all = jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)
    return jnp.take_along_axis(logp_all, action[..., None].astype(jnp.int32), axis=-1)[..., 0]


def entropy(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """-sum p log p over actions with p > 1e-8, i.e. over valid actions only."""
    logp = jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)
    p = jnp.exp(logp)
    return -jnp.sum(jnp.where(p > ENTROPY_PROB_FLOOR, p * logp, 0.0), axis=-1)


def greedy(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """Argmax of the masked logits, for viewers and evaluation."""
    return jnp.argmax(masked_logits(logits, mask), axis=-1)
