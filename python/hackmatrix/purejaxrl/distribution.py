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


def two_way_split(mask: jax.Array, group: jax.Array) -> jax.Array:
    """True where the valid actions lie on both sides of `group` (bool[A]): only there is
    "an action in the group or not" a choice."""
    return jnp.any(mask & group, axis=-1) & jnp.any(mask & ~group, axis=-1)


def group_entropy(logits: jax.Array, mask: jax.Array, group: jax.Array) -> jax.Array:
    """Entropy of the two-way choice "an action in `group` or one outside it" under the
    masked policy: -(q log q + (1 - q) log(1 - q)), q the probability of the group's valid
    actions. 0 where the valid actions all lie on one side (no choice to keep open).

    Both log-masses come from log-sum-exp over finitely masked log-probs, so a side with no
    valid action gives a finite ~-1e9 and no NaN reaches the gradient.
    """
    logp = jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)
    log_in = jax.nn.logsumexp(jnp.where(mask & group, logp, MASKED_LOGIT), axis=-1)
    log_out = jax.nn.logsumexp(jnp.where(mask & ~group, logp, MASKED_LOGIT), axis=-1)
    h = -(jnp.exp(log_in) * log_in + jnp.exp(log_out) * log_out)
    return jnp.where(two_way_split(mask, group), h, 0.0)


def greedy(logits: jax.Array, mask: jax.Array) -> jax.Array:
    """Argmax of the masked logits, for viewers and evaluation."""
    return jnp.argmax(masked_logits(logits, mask), axis=-1)
