"""The shared-trunk actor-critic (training.md §2.3)."""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp

NUM_ACTIONS = 28
OBS_SIZE = 1545


class ActorCritic(nn.Module):
    """`num_layers` Dense+ReLU trunk, then a 28-way logit head and a value head.

    Submodules are created in order so the parameter names are
    Dense_0..Dense_{L-1} (trunk), Dense_L (actor), Dense_{L+1} (critic); the
    viewers infer the architecture from them. With `compute_dtype=bfloat16`
    the matmuls run in bf16 while parameters stay float32; outputs are float32.
    """

    hidden_dim: int = 256
    num_layers: int = 2
    num_actions: int = NUM_ACTIONS
    compute_dtype: jnp.dtype = jnp.float32

    @nn.compact
    def __call__(self, obs):
        x = obs.astype(self.compute_dtype)
        for _ in range(self.num_layers):
            x = nn.relu(nn.Dense(self.hidden_dim, dtype=self.compute_dtype)(x))
        logits = nn.Dense(self.num_actions, dtype=self.compute_dtype)(x)
        value = nn.Dense(1, dtype=self.compute_dtype)(x)
        return logits.astype(jnp.float32), jnp.squeeze(value, -1).astype(jnp.float32)


def make_network(hidden_dim: int, num_layers: int, bf16: bool = False) -> ActorCritic:
    return ActorCritic(hidden_dim=hidden_dim, num_layers=num_layers,
                       compute_dtype=jnp.bfloat16 if bf16 else jnp.float32)
