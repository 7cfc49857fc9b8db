"""The one loop that plays games: every analysis tool plays through `play`.

`play` starts a batch of games with `env.reset` from `reset_keys`, then steps all of
them together in one jitted `while_loop`:

- a *chooser* (`choosers.py`) picks each game's action from its observation, mask and
  state;
- a *key schedule* gives each step its keys: `GameKeys` (a key per game, folded with
  the step number: the behaviour evaluation's, training.md §9.1) or `KeyStream` (one key
  split at every step: the auto-reset returns of `returns.py`);
- a *watcher* keeps per-game counters over the steps (`facts.Facts`, the behaviour
  counters; `Trajectory` below) and says what of each step to record.

Without auto-reset a game that ends stays as it ended (its later steps are not its own:
`live` is False for them) and the loop stops once every game has ended or after
`max_steps` steps (traced: one compile serves every cap). With `auto_reset` an ended
game is replaced by a new one (`autoreset.make_auto_reset`) and the loop runs exactly
`max_steps` steps. With `record_steps` > 0 the watcher's record of each of the first
`record_steps` steps is kept, stacked on a leading time axis (steps never played, after
an early stop, stay zero); recording adds outputs and changes nothing that is played
or counted.

`play` is compiled once per env module, chooser kind (its static fields), key schedule,
watcher, `record_steps`, `auto_reset` and batch size.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import Any, NamedTuple, Protocol

import jax
import jax.numpy as jnp
from flax import struct

from ..purejaxrl.autoreset import make_auto_reset


class Step(NamedTuple):
    """One step of a batch of games, as a watcher sees it (every field batched)."""

    t: jax.Array  # the step's number, from 0 (int32 scalar)
    state: Any  # the states the actions were chosen in
    mask: jax.Array  # bool[B, A]: the masks they were chosen from
    action: jax.Array  # int32[B]
    next_state: Any  # the states the step led to (before any reset)
    reward: jax.Array
    done: jax.Array
    info: dict
    live: jax.Array  # bool[B]: the games still being played when the step was taken


class Watcher(Protocol):
    """Per-game counters over a game, and what to record of each step. Watchers are
    hashable (frozen dataclasses): `play` is compiled for each."""

    def start(self, env: ModuleType, env_params: Any, obs: jax.Array, state: Any) -> Any:
        """The counters at the start of the games."""
        ...

    def add(self, env: ModuleType, counts: Any, step: Step) -> tuple[Any, Any]:
        """(the counters after `step`, the step's record)."""
        ...


@struct.dataclass
class GameKeys:
    """Keys per game: step `t` of the game with key `k` draws its action from the first
    half of `jax.random.split(fold_in(k, t))` and steps the env with the second."""

    game_keys: jax.Array  # key[B]

    @classmethod
    def of(cls, policy_key: jax.Array, game_indices: jax.Array) -> GameKeys:
        """Game `i` of a policy seeded with `policy_key` gets `fold_in(policy_key, i)`."""
        return cls(jax.vmap(jax.random.fold_in, in_axes=(None, 0))(policy_key, game_indices))

    def next(self, t: jax.Array, batch: int) -> tuple[GameKeys, jax.Array, jax.Array, None]:
        keys = jax.vmap(lambda k: jax.random.split(jax.random.fold_in(k, t)))(self.game_keys)
        return self, keys[:, 0], keys[:, 1], None


@struct.dataclass
class KeyStream:
    """One key for the batch, split four ways at every step: the next key, the action key
    (one for the whole batch), the env keys (split per game) and the reset key."""

    key: jax.Array

    def next(self, t: jax.Array, batch: int) -> tuple[KeyStream, jax.Array, jax.Array, jax.Array]:
        key, action_key, step_key, reset_key = jax.random.split(self.key, 4)
        return KeyStream(key), action_key, jax.random.split(step_key, batch), reset_key


@dataclass(frozen=True)
class Trajectory:
    """Records each step of each game as the game stands after it, for frames and traces:
    `state` (an ended game stays as it ended), `action`, `reward`, `components` (f32[15],
    in `env.REWARD_COMPONENT_NAMES` order), `done` (only on the step that ends the game),
    `mask` (the mask at the new state) and `live`. Counts each game's `length` (its steps,
    up to the cap) and keeps its `start_state`, `start_obs` and `start_mask`."""

    def start(self, env: ModuleType, env_params: Any, obs: jax.Array, state: Any) -> dict:
        return {
            "start_state": state,
            "start_obs": obs,
            "start_mask": jax.vmap(env.action_mask)(state),
            "length": jnp.zeros(obs.shape[0], jnp.int32),
        }

    def add(self, env: ModuleType, counts: dict, step: Step) -> tuple[dict, dict]:
        kept = jax.tree_util.tree_map(partial(keep_live, step.live), step.state, step.next_state)
        names = env.REWARD_COMPONENT_NAMES
        record = {
            "state": kept,
            "action": step.action,
            "reward": step.reward,
            "components": jnp.stack([step.info["reward_components"][n] for n in names], -1),
            "done": step.done & step.live,
            "mask": jax.vmap(env.action_mask)(kept),
            "live": step.live,
        }
        return {**counts, "length": counts["length"] + step.live}, record


TRAJECTORY = Trajectory()


def keep_live(live: jax.Array, old: jax.Array, new: jax.Array) -> jax.Array:
    """`new` for the live games, `old` for the ended ones (`live` broadcast over a leaf)."""
    return jnp.where(live.reshape(live.shape + (1,) * (new.ndim - 1)), new, old)


@partial(jax.jit, static_argnames=("env", "watcher", "record_steps", "auto_reset"))
def play(
    chooser: Any,
    keys: GameKeys | KeyStream,
    reset_keys: jax.Array,
    max_steps: jax.Array,
    env_params: Any,
    *,
    env: ModuleType,
    watcher: Watcher,
    record_steps: int = 0,
    auto_reset: bool = False,
) -> dict[str, Any]:
    """Play a batch of games, one per reset key (key[B]); see the module docstring.

    Returns `counts` (the watcher's), `trace` (the records of the first `record_steps`
    steps, or None), `state`, `obs` and `live` (where the games stand at the end) and
    `steps` (the steps played).
    """
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(reset_keys, env_params)
    batch = reset_keys.shape[0]
    reset = make_auto_reset(env, env_params, batch) if auto_reset else None

    def advance(carry):
        t, keys, obs, state, live, counts = carry
        keys, action_keys, env_keys, reset_key = keys.next(t, batch)
        mask = jax.vmap(env.action_mask)(state)
        action = chooser(action_keys, obs, mask, state)
        next_obs, next_state, reward, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            env_keys, state, action, env_params
        )
        step = Step(t, state, mask, action, next_state, reward, done, info, live)
        counts, record = watcher.add(env, counts, step)
        if reset is not None:
            state, obs = reset(reset_key, done, next_state, next_obs)
        else:  # ended games stay as they ended
            state = jax.tree_util.tree_map(partial(keep_live, live), state, next_state)
            obs, live = keep_live(live, obs, next_obs), live & ~done
        return (t + 1, keys, obs, state, live, counts), record

    counts = watcher.start(env, env_params, obs, state)
    start = (jnp.int32(0), keys, obs, state, jnp.ones(batch, bool), counts)
    trace = None
    if record_steps > 0:
        shapes = jax.eval_shape(advance, start)[1]
        trace = jax.tree_util.tree_map(
            lambda s: jnp.zeros((record_steps, *s.shape), s.dtype), shapes
        )

    def one_step(carry):
        carry, trace = carry
        carry, record = advance(carry)
        if trace is not None:  # the step just taken is carry[0] - 1; later ones are dropped
            trace = jax.tree_util.tree_map(
                lambda buffer, value: buffer.at[carry[0] - 1].set(value, mode="drop"),
                trace,
                record,
            )
        return carry, trace

    def running(carry):
        t, _, _, _, live, _ = carry[0]
        return (t < max_steps) & jnp.any(live)

    (t, _, obs, state, live, counts), trace = jax.lax.while_loop(running, one_step, (start, trace))
    return {"counts": counts, "trace": trace, "state": state, "obs": obs, "live": live, "steps": t}
