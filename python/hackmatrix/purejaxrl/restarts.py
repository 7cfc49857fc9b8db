"""Restarting a share of finished games from states the agent itself reached late in its
games (`--restart-share`, training.md §1.7).

The agent is lost on stages 5-8 (specs/experiments/39), and few training games
get there: most of its experience is of stages 1-4. A curriculum that starts
games at later stages with a generated kit failed (experiments/40): the kit was
not the kit the agent would hold there. This layer starts games where the agent
itself has been, with what it held.

* **Remember.** On every env step, one env whose live game has reached
  `--restart-min-stage` (chosen at random among them) is copied into a ring of
  `--restart-buffer` states.
* **Restart.** A finished game is replaced by a new one as always; then, with
  chance `--restart-share` (once the ring holds a state), by a remembered state
  instead, passed through the search's fair sampler (`search.sampler.sample_root`):
  the observation, the kit and the counters the player tracks are kept, every
  hidden field (question blocks, hidden cryptogs, transmission types) is redrawn
  and the game gets a fresh seed. A restart is a new future from a position the
  agent reached, not a replay of one it has seen.

Episode statistics (returns, lengths, final stages) count only games that began
at a reset, so the console and the metrics still describe whole games; the
restarted ones are counted in `restarts/*`. The ring is not saved in checkpoints:
a resumed run refills it within `--restart-buffer` steps.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ..jax_env.machinery.batching import apply_compacted
from ..search.sampler import sample_root


class Restarts(NamedTuple):
    """The ring of remembered states, and which of the envs' games began at a restart."""

    states: Any  # EnvState batched [K]
    remembered: jax.Array  # i32: states remembered so far (the ring holds min(this, K))
    cursor: jax.Array  # i32: the slot the next remembered state goes to
    restarted: jax.Array  # bool[E]: the env's current game began at a restart


def init(states: Any, size: int) -> Restarts:
    """An empty ring of `size` states shaped like one of `states` (a batch of E games)."""
    if size < 1:
        raise ValueError(f"the restart ring needs at least 1 state, got {size}")
    num_envs = jax.tree_util.tree_leaves(states)[0].shape[0]
    return Restarts(
        states=jax.tree_util.tree_map(lambda x: jnp.repeat(x[:1], size, axis=0), states),
        remembered=jnp.zeros((), jnp.int32),
        cursor=jnp.zeros((), jnp.int32),
        restarted=jnp.zeros(num_envs, bool),
    )


def _size(restarts: Restarts) -> int:
    """K, the states the ring has room for."""
    return jax.tree_util.tree_leaves(restarts.states)[0].shape[0]


def held(restarts: Restarts) -> jax.Array:
    """i32: the states the ring holds now (the remembered ones, at most K)."""
    return jnp.minimum(restarts.remembered, _size(restarts))


def remember(restarts: Restarts, key: jax.Array, states: Any, eligible: jax.Array) -> Restarts:
    """Copy one of the `eligible` envs' states (uniformly chosen) into the ring; nothing when
    none is eligible."""
    size = _size(restarts)
    scores = jnp.where(eligible, jax.random.uniform(key, eligible.shape), -1.0)
    chosen = jnp.argmax(scores)
    found = jnp.any(eligible)
    slot = restarts.cursor

    def write(ring, batch):
        return ring.at[slot].set(jnp.where(found, batch[chosen], ring[slot]))

    return restarts._replace(
        states=jax.tree_util.tree_map(write, restarts.states, states),
        remembered=restarts.remembered + found.astype(jnp.int32),
        cursor=jnp.where(found, (slot + 1) % size, slot),
    )


def restart(
    restarts: Restarts,
    key: jax.Array,
    done: jax.Array,
    states: Any,
    obs: jax.Array,
    share: float,
    env: ModuleType,
) -> tuple[Restarts, Any, jax.Array, jax.Array]:
    """After the auto-reset: each finished game (`done`) restarts, with chance `share` and
    once the ring holds a state, from a fair sample of a remembered state.

    Returns (restarts, states, obs, chosen): `chosen` bool[E] marks the restarted envs.
    """
    k_pick, k_slot, k_root = jax.random.split(key, 3)
    num_envs = done.shape[0]
    count = held(restarts)
    chosen = done & (jax.random.uniform(k_pick, (num_envs,)) < share) & (count > 0)
    slots = jax.random.randint(k_slot, (num_envs,), 0, jnp.maximum(count, 1))

    def fresh(args):
        root_key, slot = args
        remembered = jax.tree_util.tree_map(lambda x: x[slot], restarts.states)
        root = sample_root(root_key, remembered)
        return env.flatten_observation(env.observe(root)), root

    obs, states = apply_compacted(
        fresh, chosen, (jax.random.split(k_root, num_envs), slots), (obs, states)
    )
    restarted = jnp.where(done, chosen, restarts.restarted)
    return restarts._replace(restarted=restarted), states, obs, chosen
