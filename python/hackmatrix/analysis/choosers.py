"""Policies as `play` uses them: a chooser maps one step of a batch of games to actions.

A chooser is called as `chooser(key, obs, mask, state) -> action` on a batch: `obs`
(f32[B, 1545]), `mask` (bool[B, 28]) and `state` (the engine's batched `EnvState`) of
the games being played, and `key` from the key schedule `play` was given: one key per
game (`GameKeys`, key[B]) or one key for the batch (`KeyStream`). It returns int32[B].

Choosers are `flax.struct` dataclasses, so `play` receives them as ordinary arguments:
their arrays (the parameters) are traced, their static fields (the network, any
setting) are part of what `play` is compiled for. Another way of choosing, such as a
tree search over the engine's `step` from `state`, plugs in as one more dataclass of
this shape.
"""

from __future__ import annotations

from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
from flax import struct

from ..purejaxrl import distribution

RANDOM = "random"
MODES = ("greedy", "sample")  # the ways a network's policy is played


def _one_key_for_the_batch(keys: jax.Array) -> bool:
    """True for a single PRNG key, False for one key per game (raw uint32 or typed keys)."""
    if jax.dtypes.issubdtype(keys.dtype, jax.dtypes.prng_key):
        return keys.ndim == 0
    return keys.ndim == 1


def sample_actions(keys: jax.Array, logits: jax.Array, mask: jax.Array) -> jax.Array:
    """Gumbel-max samples of the masked logits (int32[B]): each game from its own key, or
    the whole batch from one key (as `distribution.sample` draws it)."""
    if _one_key_for_the_batch(keys):
        return distribution.sample(keys, logits, mask)[0]

    def sample_one(key, game_logits, game_mask):
        return distribution.sample(key, game_logits, game_mask)[0]

    return jax.vmap(sample_one)(keys, logits, mask)


@struct.dataclass
class Greedy:
    """The network's most likely valid action; reads no key."""

    network: nn.Module = struct.field(pytree_node=False)
    params: Any

    def __call__(self, key: jax.Array, obs: jax.Array, mask: jax.Array, state: Any) -> jax.Array:
        logits, _ = self.network.apply(self.params, obs)
        return distribution.greedy(logits, mask)


@struct.dataclass
class Sample:
    """A valid action drawn from the network's masked policy."""

    network: nn.Module = struct.field(pytree_node=False)
    params: Any

    def __call__(self, key: jax.Array, obs: jax.Array, mask: jax.Array, state: Any) -> jax.Array:
        logits, _ = self.network.apply(self.params, obs)
        return sample_actions(key, logits, mask)


@struct.dataclass
class Uniform:
    """The random policy: uniform over the valid actions (Gumbel-max over zero logits,
    masked exactly as a network's policy is)."""

    def __call__(self, key: jax.Array, obs: jax.Array, mask: jax.Array, state: Any) -> jax.Array:
        return sample_actions(key, jnp.zeros(mask.shape, jnp.float32), mask)


def chooser(mode: str, network: nn.Module | None = None, params: Any = None) -> Any:
    """The chooser of a mode: `greedy` or `sample` (a network and its parameters), or
    `random` (neither)."""
    if mode == RANDOM:
        return Uniform()
    if network is None:
        raise ValueError(f"the {mode!r} policy needs a network")
    if mode == "greedy":
        return Greedy(network=network, params=params)
    if mode == "sample":
        return Sample(network=network, params=params)
    raise ValueError(f"unknown policy mode {mode!r}: use one of {', '.join(MODES)} or {RANDOM!r}")
