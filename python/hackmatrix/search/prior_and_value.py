"""One network's policy with another network's value, as the one network a search reads.

The search asks a network for two things at every node: a prior over the
actions (which moves its few simulations consider, and how its improved policy
starts) and a value (what a leaf is worth). They need not come from the same
network. A network trained toward the search's advantages (experiments §53)
plays better alone but proposes few siphons, and the search finds the siphons
its prior proposes; the policy that ships still proposes them. `PriorAndValue`
lets a search take its prior from one and its value from the other.

It has the shape of a flax module as the search and the play tools use one
(`apply(params, obs) -> (logits, value)`) and is hashable, so it is a static
argument of the jitted search like any network. Its params are the pair
`(prior_params, value_params)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import flax.linen as nn
import jax


@dataclass(frozen=True)
class PriorAndValue:
    """`prior`'s logits and `value`'s value head, from the same observations."""

    prior: nn.Module
    value: nn.Module

    def apply(self, params: tuple[Any, Any], obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        prior_params, value_params = params
        prior_outputs: Any = self.prior.apply(prior_params, obs)
        value_outputs: Any = self.value.apply(value_params, obs)
        # the prior's value head and the value's policy head are dead code to XLA
        return prior_outputs[0], value_outputs[1]
