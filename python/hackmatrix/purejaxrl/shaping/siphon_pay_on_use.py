"""`--siphon-pay-on-use`: a data siphon pays when spent, not when picked up (training.md §1.1).

The canonical `data_siphon` (rewards.md §4.5) pays 1.0 for walking onto a data siphon,
spent or not, so agents that stop siphoning keep collecting them. The term takes that pay
off the pickup and pays it on the siphon action instead. An UNDO that gives siphons back
charges 1.0 for each (the engine's `info["data_siphons_gained"]`), so a siphon-UNDO loop
nets 0. Scaled by the `data_siphon` weight; not a program lever (never delayed).
"""

from __future__ import annotations

import jax.numpy as jnp

from ...names import FIRST_PROGRAM_ACTION, SIPHON_ACTION, Program
from .base import Levers, Shaper, StepFacts, component_weight, require_info

UNDO_ACTION = FIRST_PROGRAM_ACTION + Program.UNDO


def moved_pay(action, siphons_gained, pickup_pay):
    """spent - given back by UNDO - the pickup's canonical pay (unweighted)."""
    regained = jnp.maximum(siphons_gained, 0).astype(jnp.float32)
    given_back = jnp.where(action == UNDO_ACTION, regained, 0)
    spent = (action == SIPHON_ACTION).astype(jnp.float32)
    return spent - given_back - pickup_pay


def make(config, reward_names: tuple) -> Shaper | None:
    if not config.siphon_pay_on_use:
        return None
    index = reward_names.index("data_siphon")

    def term(facts: StepFacts, carry, levers: Levers):
        require_info(facts.info, "data_siphons_gained", "--siphon-pay-on-use")
        pay = moved_pay(
            facts.action, facts.info["data_siphons_gained"], facts.components[..., index]
        )
        return component_weight(levers, index) * pay, carry

    return Shaper(name="siphon_pay_on_use", metric="siphon_pay_moved", term=term)
