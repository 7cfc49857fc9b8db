"""`--program-bonus`: pay for each program taken into hand (training.md §1.1).

The term is weight x (programs owned after the step - before it), from the engine's
`info["programs_gained"]`, so programs a curriculum start hands out are not paid and an
UNDO that takes a program back takes its bonus back (a pick-up cannot be farmed). With
`--program-bonus-scale spawn-cost` a program counts its block's spawn cost instead of 1:
a block queues that many transmissions as a data block queues its points. With
`--program-bonus-at-death withhold` a program taken on the step the player dies pays
nothing, since it can never be run. A program lever (`--program-levers-from-update`).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ...names import PROGRAM_SPAWN_COSTS
from .base import Levers, Shaper, StepFacts, require_info

SCALES = ("flat", "spawn-cost")


def program_sizes(scale: str) -> np.ndarray:
    """What one taken program counts for, per program: 1 (flat) or its spawn cost."""
    if scale == "flat":
        return np.ones(len(PROGRAM_SPAWN_COSTS), np.float32)
    if scale == "spawn-cost":
        return np.asarray(PROGRAM_SPAWN_COSTS, np.float32)
    raise ValueError(f"--program-bonus-scale must be flat or spawn-cost, got {scale!r}")


def bonus_term(weight: float, at_death: str = "pay", scale: str = "flat"):
    """`term(info) -> f32[E]`, the bonus of one step from the engine's facts."""
    weight32 = np.float32(weight)
    sizes = program_sizes(scale)

    def term(info):
        require_info(info, "programs_gained", "--program-bonus")
        gained = info["programs_gained"].astype(jnp.float32)
        paid = weight32 * (gained @ sizes)
        if at_death == "withhold":
            require_info(info, "died", "--program-bonus-at-death withhold")
            paid = jnp.where(info["died"], jnp.minimum(paid, 0.0), paid)
        return paid

    return term


def make(config, reward_names: tuple) -> Shaper | None:
    if config.program_bonus == 0:
        return None
    bonus = bonus_term(
        config.program_bonus, config.program_bonus_at_death, config.program_bonus_scale
    )

    def term(facts: StepFacts, carry, levers: Levers):
        return bonus(facts.info), carry

    return Shaper(name="program_bonus", metric="program_bonus", term=term, program_lever=True)
