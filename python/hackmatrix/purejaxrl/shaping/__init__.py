"""Reward shaping as a layer: each lever of the trained reward is one shaper (training.md §1.1).

`build(config, reward_names)` returns the active shapers in registry order; `shape` turns
one step into the reward PPO trains on, each shaper's term (for the `train/*` metrics) and
the shapers' new carries. A new lever is one module with a `make(config, reward_names)`,
one entry in `REGISTRY` and one test.

The order of `REGISTRY` is the order the terms are added in: it fixes the floating-point
sum, so a run's results do not depend on anything but its settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax

from . import (
    distance_potential,
    free_spending,
    program_bonus,
    program_use_bonus,
    siphon_pay_on_use,
    weights,
)
from .base import Levers, Shaper, StepFacts

REGISTRY = (
    weights.make,
    program_bonus.make,
    distance_potential.make,
    program_use_bonus.make,
    free_spending.make,
    siphon_pay_on_use.make,
)


def build(config: Any, reward_names: Sequence[str]) -> tuple[Shaper, ...]:
    """The shapers `config` turns on, in registry order (empty: train on the env's reward)."""
    names = tuple(reward_names)
    made = (make(config, names) for make in REGISTRY)
    return tuple(shaper for shaper in made if shaper is not None)


def init_carries(shapers: Sequence[Shaper], num_envs: int) -> dict[str, Any]:
    """{shaper name: its initial carry} for the shapers that keep one."""
    return {s.name: s.init_carry(num_envs) for s in shapers if s.init_carry is not None}


def shape(
    shapers: Sequence[Shaper], facts: StepFacts, carries: dict, levers: Levers
) -> tuple[jax.Array, dict[str, jax.Array], dict[str, Any]]:
    """(trained reward, {metric: term}, new carries) of one step.

    The trained reward starts from the env's reward, or from a base shaper's term (the
    weighted components), and adds the other terms in order; a program lever's term is
    multiplied by the levers' switch when the run delays the levers.
    """
    reward = facts.reward
    terms: dict[str, jax.Array] = {}
    new_carries = dict(carries)
    for shaper in shapers:
        term, carry = shaper.term(facts, carries.get(shaper.name), levers)
        if shaper.program_lever and levers.program_levers is not None:
            term = levers.program_levers * term
        if shaper.name in carries:
            new_carries[shaper.name] = carry
        if shaper.base:
            reward = term
        else:
            reward = reward + term
            terms[shaper.metric] = term
    return reward, terms, new_carries


__all__ = ["REGISTRY", "Levers", "Shaper", "StepFacts", "build", "init_carries", "shape"]
