"""Pytree helpers."""

from typing import TypeVar

import jax
import jax.numpy as jnp

Tree = TypeVar("Tree")


def select(pred: jax.Array, on_true: Tree, on_false: Tree) -> Tree:
    """jnp.where(pred, on_true, on_false) on every leaf of two pytrees of one structure."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(pred, a, b), on_true, on_false)
