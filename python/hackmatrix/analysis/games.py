"""The behaviour evaluation's games: a fixed set, the same for every policy (training.md §9.1).

Each policy plays the same games from the canonical start (`EnvParams()`), one game per
env and no auto-reset, until the game ends or `max_steps` steps have been played; a game
still running then is *unfinished*, never dropped. Games are played in fixed-size
batches through `play.play` with the `facts.Facts` watcher, which stops as soon as every
game of the batch has ended and keeps per-game counters, so memory does not grow with
the cap (a traced argument: one compile per env, network and mode).

Keys (everything is a function of the game index `i`, the policy and `--seed`):
- game `i` starts from `env.reset(jax.random.PRNGKey(i))`; the JAX engine turns that key
  into the game's uint32 seed with `jax.random.bits` (the seed is reported, so a game can
  be replayed on the Swift engine);
- at step `t` of game `i` the action key is the first half of
  `jax.random.split(fold_in(fold_in(PRNGKey(seed), i), t))` and the env key the second
  (`play.GameKeys`; the JAX engine ignores its key). Greedy play reads no key.

`random` is the uniform policy over the valid actions (`choosers.Uniform`).
"""

from __future__ import annotations

import dataclasses
from types import ModuleType
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..names import MAX_OCCUPANTS
from .choosers import MODES, RANDOM, chooser
from .facts import FACTS
from .play import GameKeys, play
from .policies import EvaluationError, Policy

DEFAULT_EPISODES = 1024
DEFAULT_MAX_STEPS = 1000
DEFAULT_BATCH = 256
MAX_GAME_INDEX = 2**31 - 1  # PRNGKey(i) of a traced int32


def play_batch(
    game_indices: np.ndarray,
    policy_key: jax.Array,
    policy: Any,
    max_steps: int,
    env_params: Any,
    *,
    env: ModuleType,
) -> dict[str, jax.Array]:
    """Play one game per entry of `game_indices` (int32[B]) to its end or `max_steps` steps
    with the chooser `policy` (`choosers.py`).

    `env_params` are the game's (`start_params`: canonical unless a probe is asked for).
    Returns per-game arrays: the `facts.step_facts` totals plus `final_stage` and
    `game_seed`.
    """
    indices = jnp.asarray(game_indices, jnp.int32)
    played = play(
        policy,
        GameKeys.of(policy_key, indices),
        jax.vmap(jax.random.PRNGKey)(indices),
        jnp.int32(max_steps),
        env_params,
        env=env,
        watcher=FACTS,
    )
    state = played["state"]
    return {**played["counts"], "final_stage": state.stage, "game_seed": state.seed}


def play_games(
    env: ModuleType,
    policy: Policy,
    mode: str,
    *,
    episodes: int = DEFAULT_EPISODES,
    first_game: int = 0,
    max_steps: int = DEFAULT_MAX_STEPS,
    batch: int = DEFAULT_BATCH,
    seed: int = 0,
    start_transmissions: int = 0,
    search: Any = None,
) -> dict:
    """Play games `first_game .. first_game + episodes - 1`.

    `start_transmissions` > 0 is a probe, not the canonical game: every game
    starts with that many siphon transmissions pending (`start_params`).
    `search` (a `hackmatrix.search.search.SearchConfig`) plays the network through
    the fair search instead of directly (specs/search.md); `mode` then picks the
    search's selection (greedy or sampled from its improved policy).
    Returns per-game numpy arrays (see `play_batch`).

    The last batch is padded to the batch size (padding games are dropped)
    so every batch reuses one compiled function.
    """
    mode = RANDOM if policy.is_random else mode
    check_settings(mode, episodes=episodes, first_game=first_game, max_steps=max_steps, batch=batch)
    batch = min(batch, episodes)
    indices = np.arange(first_game, first_game + episodes, dtype=np.int64)
    padded = np.concatenate([indices, np.full((-len(indices)) % batch, indices[-1])]).astype(
        np.int32
    )
    env_params = start_params(env, start_transmissions)
    policy_key = jax.random.PRNGKey(seed)
    params = None if policy.is_random else jax.device_get(policy.params)
    choose = chooser(mode, policy.network, params)
    if search is not None and not policy.is_random:
        from ..search.search import SearchChooser

        selection = "sample" if mode == "sample" else search.selection
        config = dataclasses.replace(search, selection=selection)
        choose = SearchChooser(network=policy.network, config=config, params=params)
    parts = [
        jax.device_get(
            play_batch(
                padded[start : start + batch], policy_key, choose, max_steps, env_params, env=env
            )
        )
        for start in range(0, len(padded), batch)
    ]
    games = {name: np.concatenate([p[name] for p in parts])[:episodes] for name in parts[0]}
    games["game_index"] = indices
    return games


def start_params(env: ModuleType, start_transmissions: int = 0) -> Any:
    """The game's params: canonical starts, or the probe of `--start-transmissions`.

    The probe starts every game with `start_transmissions` siphon transmissions
    pending (a curriculum start at stage 1 asking for nothing else): they
    appear after the first turn as a siphon's would, so the games measure how
    the agent fights siphon-spawned enemies it did not choose to queue.
    """
    if not isinstance(start_transmissions, (int, np.integer)) or not (
        0 <= start_transmissions <= MAX_OCCUPANTS
    ):
        raise EvaluationError(
            f"start transmissions must be an integer in 0..{MAX_OCCUPANTS}, "
            f"got {start_transmissions!r}"
        )
    if start_transmissions == 0:
        return env.EnvParams()
    if not hasattr(env, "curriculum_params"):
        raise EvaluationError(
            f"the game module {getattr(env, '__name__', env)!r} has no curriculum starts, "
            "so it cannot start games with pending transmissions"
        )
    count = int(start_transmissions)
    return env.curriculum_params(1.0, transmissions=(count, count))


def check_settings(
    mode: str, *, episodes: int, first_game: int, max_steps: int, batch: int
) -> None:
    if mode not in (*MODES, RANDOM):
        raise EvaluationError(
            f"unknown policy mode {mode!r}: use one of {', '.join(MODES)} "
            f"(or the policy name {RANDOM!r})"
        )
    for name, value in (("episodes", episodes), ("max_steps", max_steps), ("batch", batch)):
        if value < 1:
            raise EvaluationError(f"{name} must be at least 1, got {value}")
    if first_game < 0 or first_game + episodes - 1 > MAX_GAME_INDEX:
        raise EvaluationError(
            f"game indices {first_game}..{first_game + episodes - 1} "
            f"must lie in 0..{MAX_GAME_INDEX}"
        )
