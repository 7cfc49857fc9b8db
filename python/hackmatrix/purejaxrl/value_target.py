"""`--value-target`: the scale the value head learns on (training.md §2.6).

`raw` (the default): the head predicts the return itself. Returns grow with
the stage reached (stage rewards 1 to 100, a win 500 + 100 x score), so the
squared error, and with it the value's share of the shared layers' gradient,
grows as the agent improves (specs/experiments/31-vf-coef-01.md §31.0).

`symlog`: the head predicts symlog(return) = sign(x) ln(1 + |x|) and the
squared error is taken there; the value V the rollout and GAE use is
symexp(head). Small returns keep nearly their own scale (symlog(x) ~ x near
0) while a win's 600 becomes 6.4, so one rare large return cannot swamp a
minibatch. The transform is fixed, so nothing is carried in the checkpoint
beyond the flag itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from .config import VALUE_TARGETS


def symlog(x: jax.Array) -> jax.Array:
    return jnp.sign(x) * jnp.log1p(jnp.abs(x))


def symexp(x: jax.Array) -> jax.Array:
    return jnp.sign(x) * jnp.expm1(jnp.abs(x))


def _same(x: jax.Array) -> jax.Array:
    return x


class ValueScale(NamedTuple):
    """The two maps between the value head's output and the return's own units."""

    to_value: Callable[[Any], Any]  # head output -> V, in return units
    to_head: Callable[[Any], Any]  # a return target -> what the head learns


def make_value_scale(mode: str) -> ValueScale:
    """The maps for `--value-target mode`; `raw` leaves every array untouched."""
    if mode == "raw":
        return ValueScale(_same, _same)
    if mode == "symlog":
        return ValueScale(symexp, symlog)
    raise ValueError(f"--value-target must be {' or '.join(VALUE_TARGETS)}, got {mode!r}")
