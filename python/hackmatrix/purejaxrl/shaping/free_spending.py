"""`--free-program-spending`: programs spend credits and energy for free (training.md §1.1).

`resource_gain` (rewards.md §4.9) pays 0.05 per credit or energy gained and charges 0.05
per unit spent, so every program run costs its price and hoarding pays. The term adds back
the negative part of `resource_gain` on a program action other than UNDO, and takes away
the positive part on UNDO (giving spent resources back is then worth nothing), so a
program-UNDO loop earns nothing; UNDO's negative part (taking a siphon's gain back) stays,
so a siphon-UNDO loop still nets 0. Scaled by the `resource_gain` weight; a program lever.
"""

from __future__ import annotations

import jax.numpy as jnp

from ...names import FIRST_PROGRAM_ACTION, Program
from .base import Levers, Shaper, StepFacts, component_weight

UNDO_ACTION = FIRST_PROGRAM_ACTION + Program.UNDO


def refund(action, gain):
    """What the refund adds to one step's `resource_gain` (unweighted)."""
    spent_on_program = (action >= FIRST_PROGRAM_ACTION) & (action != UNDO_ACTION)
    return jnp.where(
        action == UNDO_ACTION,
        -jnp.maximum(gain, 0.0),
        jnp.where(spent_on_program, -jnp.minimum(gain, 0.0), 0.0),
    )


def make(config, reward_names: tuple) -> Shaper | None:
    if not config.free_program_spending:
        return None
    index = reward_names.index("resource_gain")

    def term(facts: StepFacts, carry, levers: Levers):
        back = refund(facts.action, facts.components[..., index])
        return component_weight(levers, index) * back, carry

    return Shaper(
        name="free_program_spending", metric="spending_refund", term=term, program_lever=True
    )
