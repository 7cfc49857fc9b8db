"""What a step did, as named records (game-rules.md §13.1).

`StepEvents` mirrors the Swift `StepEvents` (swift/Sources/HackMatrixCore/
Engine.swift) in the fields the rewards read; `ActionEvents` is the part the
player's action itself reports (§5-§7), before the enemy phase and the end
check add the rest.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp


class ActionEvents(NamedTuple):
    enemies_killed: jax.Array  # int32, removed enemies not from a scheduled task
    transmissions_killed: jax.Array  # int32, likewise
    data_siphon_collected: jax.Array  # bool: the player stepped onto a data-siphon pickup
    exit_reached: jax.Array  # bool

    @staticmethod
    def none() -> "ActionEvents":
        """An action that killed, collected and reached nothing."""
        zero = jnp.asarray(0, jnp.int32)
        return ActionEvents(zero, zero, jnp.asarray(False), jnp.asarray(False))


class StepEvents(NamedTuple):
    exit_reached: jax.Array
    game_won: jax.Array
    player_died: jax.Array
    enemies_killed: jax.Array
    transmissions_killed: jax.Array
    data_siphon_collected: jax.Array
    siphon_used: jax.Array
    reset_at_two: jax.Array  # RESET used at 2 hp (rewards.md §4.14)
    died_to_siphon_enemy: jax.Array  # died next to an enemy spawned by a siphon (rewards.md §4.15)
