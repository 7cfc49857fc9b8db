"""`--distance-shaping potential`: charge a lost cell what a gained one pays (training.md §1.1).

The canonical `distance_shaping` pays 0.05 per cell gained toward the exit and nothing for
a cell lost (rewards.md §4.6), so stepping away and back earns 0.05 - 2 x 0.01 a round
trip. This term charges 0.05 per cell lost, from the engine's signed
`info["exit_distance_delta"]`, making the shaping the difference of a potential
(-0.05 x distance): a loop then earns nothing. Scaled by the `distance_shaping` weight.
"""

from __future__ import annotations

import jax.numpy as jnp

from .base import Levers, Shaper, StepFacts, component_weight, require_info

MODES = ("canonical", "potential")


def make(config, reward_names: tuple) -> Shaper | None:
    if config.distance_shaping == "canonical":
        return None
    index = reward_names.index("distance_shaping")

    def term(facts: StepFacts, carry, levers: Levers):
        require_info(facts.info, "exit_distance_delta", "--distance-shaping potential")
        lost = jnp.minimum(facts.info["exit_distance_delta"], 0).astype(jnp.float32)
        return component_weight(levers, index) * jnp.float32(0.05) * lost, carry

    return Shaper(name="distance_potential", metric="distance_retreat", term=term)
