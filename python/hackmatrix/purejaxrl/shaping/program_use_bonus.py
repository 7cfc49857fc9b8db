"""`--program-use-bonus`: pay once per episode, at its first program action (training.md §1.1).

Bounded, so no loop of programs and UNDO can farm it. The carry is bool[E], "this episode
has run a program", cleared when the episode ends. A program lever.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ...names import FIRST_PROGRAM_ACTION
from .base import Levers, Shaper, StepFacts


def make(config, reward_names: tuple) -> Shaper | None:
    bonus = np.float32(config.program_use_bonus)
    if bonus == 0:
        return None

    def term(facts: StepFacts, used, levers: Levers):
        ran_program = facts.action >= FIRST_PROGRAM_ACTION
        paid = bonus * (ran_program & ~used).astype(jnp.float32)
        return paid, (used | ran_program) & ~facts.done

    return Shaper(
        name="program_use_bonus",
        metric="program_use_bonus",
        term=term,
        init_carry=lambda num_envs: jnp.zeros(num_envs, bool),
        program_lever=True,
    )
