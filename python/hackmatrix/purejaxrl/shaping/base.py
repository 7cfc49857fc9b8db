"""What a reward shaper is, and what one env step tells it (training.md §1.1).

A shaper turns one env step into a term of the reward PPO trains on. The trainer adds the
terms of the active shapers to the base reward (the env's own, or the weighted sum of its
components) in registry order, logs each term as `train/<metric>`, and keeps each shaper's
carry (per-env state across steps, reset with the episode) in the runner. Everything a
shaper reads about the game comes from the engine's `info`, never from the scaled
observation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp


class StepFacts(NamedTuple):
    """One batched env step, before the auto-reset replaces finished games."""

    action: jax.Array  # i32[E]
    reward: jax.Array  # f32[E]: the env's own reward
    components: jax.Array  # f32[E, 15]: the reward components, canonical order
    done: jax.Array  # bool[E]: the episode ended here (a time limit included)
    info: dict  # the engine's info for the step (reward_components, died, ...)


class Levers(NamedTuple):
    """The traced or constant settings in force at this update (schedule values)."""

    weights: Any  # f32[15]: the component weights in force (None: no weighting)
    program_levers: Any  # f32[] 1 when the program levers pay, 0 before (None: always)
    # f32[] 1 once --search-select picks the searched envs, 0 before (None: always); read
    # by expert iteration's acting, not by a shaper
    search_select: Any = None


@dataclasses.dataclass(frozen=True)
class Shaper:
    """One lever of the trained reward.

    `term(facts, carry, levers) -> (f32[E], new_carry)`; `init_carry(num_envs)` makes the
    carry (None: the shaper keeps none). A `program_lever` shaper's term is multiplied by
    the program levers' switch. A `base` shaper's term replaces the env's reward as the
    start of the sum instead of being added to it (the component weights).
    """

    name: str
    metric: str
    term: Callable[[StepFacts, Any, Levers], tuple[jax.Array, Any]]
    init_carry: Callable[[int], Any] | None = None
    program_lever: bool = False
    base: bool = False


def component_weight(levers: Levers, index: int) -> jax.Array:
    """The weight of component `index` in force (1 when the run weighs nothing)."""
    return jnp.float32(1.0) if levers.weights is None else levers.weights[index]


def require_info(info: dict, key: str, flag: str) -> None:
    """A clear error for a game module whose info lacks a fact a shaper reads."""
    if key not in info:
        raise ValueError(
            f"{flag} needs the env's info[{key!r}]; this game module does not provide it"
        )
