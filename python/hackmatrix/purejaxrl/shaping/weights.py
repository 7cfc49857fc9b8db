"""`--reward-weights`: train on a weighted sum of the reward components (training.md §1.1).

The base of the trained reward: sum_i w_i x component_i (w_i = 1 for components not named),
added left to right in canonical order like the env's own total (rewards.md §2). Without
weights the trainer keeps the env's reward itself, not a recomputed sum, so a run without
the flag is unchanged. The weights in force come from their schedule (`--reward-weights-
anneal` moves them), so the other shapers that scale by a component's weight follow it.
"""

from __future__ import annotations

from .base import Levers, Shaper, StepFacts


def weighted_sum(components, vector):
    total = vector[0] * components[..., 0]
    for i in range(1, components.shape[-1]):
        total = total + vector[i] * components[..., i]
    return total


def make(config, reward_names: tuple) -> Shaper | None:
    if config.reward_weights is None:
        return None
    from ..config import check_reward_weight_names

    check_reward_weight_names(config.reward_weights, reward_names)

    def term(facts: StepFacts, carry, levers: Levers):
        return weighted_sum(facts.components, levers.weights), carry

    return Shaper(name="reward_weights", metric="", term=term, base=True)
