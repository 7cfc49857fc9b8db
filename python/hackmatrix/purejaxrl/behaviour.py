"""Behaviour evaluation: what a policy does over a fixed set of games (training.md §9).

Each policy plays the same games from the canonical start (`EnvParams()`),
one game per env and no auto-reset, until the game ends or `max_steps`
steps have been played; a game still running then is *unfinished*, never
dropped. Games are played in fixed-size batches by one jitted `while_loop`
per batch (compiled once per env, network and mode; the step cap is a
traced argument) that stops as soon as every game of the batch has ended.
Per-game counters are accumulated inside the loop, so memory does not grow
with the cap.

Keys (everything is a function of the game index `i`, the policy and `--seed`):
- game `i` starts from `env.reset(jax.random.PRNGKey(i))`; the JAX engine
  turns that key into the game's uint32 seed with `jax.random.bits` (the
  seed is reported, so a game can be replayed on the Swift engine);
- at step `t` of game `i` the action key is the first half of
  `jax.random.split(fold_in(fold_in(PRNGKey(seed), i), t))` and the env key
  the second (the JAX engine ignores its key). Greedy play reads no key.

`random` is the uniform policy over the valid actions (Gumbel-max over
zero logits, masked exactly as the trained policy is). Everything here is
HackMatrix-specific: death causes and siphon yields are read from the
engine's `EnvState`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from ..analysis import eval_stats
from ..names import (
    FIRST_PROGRAM_ACTION,
    LAST_STAGE,
    MAX_OCCUPANTS,
    NUM_PROGRAMS,
    PROGRAM_COSTS,
    PROGRAM_NAMES,
    SIPHON_ACTION,
    Program,
)
from . import distribution

RANDOM = "random"
MODES = ("greedy", "sample")
DEFAULT_EPISODES = 1024
DEFAULT_MAX_STEPS = 1000
DEFAULT_BATCH = 256
MAX_GAME_INDEX = 2**31 - 1  # PRNGKey(i) of a traced int32

RESET_ACTION = FIRST_PROGRAM_ACTION + Program.RESET
MAX_HP = 3  # the player's (game-rules.md §1)
NUM_STAGES = LAST_STAGE
# How each game ended (`end` code = index).
ENDS = ("won", "died_enemy", "died_siphon_enemy", "died_other", "unfinished")
WON, DIED_ENEMY, DIED_SIPHON_ENEMY, DIED_OTHER, UNFINISHED = range(len(ENDS))
# Reward constants that turn a component back into the count behind it (rewards.md §1).
SIPHON_QUALITY_PER_RESOURCE = 0.5 * 0.05
KILL_REWARD = 0.3
PROGRAM_CREDITS = np.array([credits for credits, _ in PROGRAM_COSTS], np.int32)
PROGRAM_ENERGY = np.array([energy for _, energy in PROGRAM_COSTS], np.int32)
BLOCK_CONTENT = 1  # a cell's `content` code for BLOCK (game-rules.md §1.3; jax_env.constants)


class EvaluationError(ValueError):
    """Bad evaluation input (policy name, counts); the message says what to change."""


# ------------------------------------------------------------------ one step's facts


def _enemy_adjacent(board) -> jnp.ndarray:
    player_row, player_col = board.player_pos // 6, board.player_pos % 6
    distance = jnp.abs(board.e_pos // 6 - player_row) + jnp.abs(board.e_pos % 6 - player_col)
    return jnp.any(board.e_active & (distance == 1))


def step_facts(
    state: Any,
    mask: jax.Array,
    action: jax.Array,
    next_state: Any,
    reward: jax.Array,
    done: jax.Array,
    info: dict,
) -> dict:
    """Per-game counters of one step (unbatched); see training.md §9.2 for their meaning.

    `mask` is the action mask the policy chose from (bool[28]).
    """
    comps = info["reward_components"]
    before, after = state.board, next_state.board
    # The program funnel (§9.2): held -> affordable -> runnable (the mask) -> run.
    held = before.owned
    affordable = (
        held
        & (before.credits >= jnp.asarray(PROGRAM_CREDITS))
        & (before.energy >= jnp.asarray(PROGRAM_ENERGY))
    )
    runnable = mask[FIRST_PROGRAM_ACTION:]
    is_siphon = action == SIPHON_ACTION
    is_program = action >= FIRST_PROGRAM_ACTION
    gained_programs = jnp.sum(after.owned) - jnp.sum(before.owned)
    gained_anything = (
        (after.score != before.score)
        | (after.credits != before.credits)
        | (after.energy != before.energy)
        | (gained_programs != 0)
    )
    # What a siphon drained (game-rules.md §6): the blocks of its cross, by what they bear,
    # the transmissions they queue, and the unsiphoned blocks left anywhere on the board.
    unsiphoned_blocks = (before.content == BLOCK_CONTENT) & ~before.siphoned
    drained = is_siphon & unsiphoned_blocks & after.siphoned
    died = done & info["died"]
    cause = jnp.where(
        comps["siphon_death_penalty"] < 0,
        DIED_SIPHON_ENEMY,
        jnp.where(_enemy_adjacent(after), DIED_ENEMY, DIED_OTHER),
    )
    end = jnp.where(done & info["won"], WON, jnp.where(died, cause, UNFINISHED))
    return {
        "return": reward.astype(jnp.float32),
        "length": jnp.int32(1),
        "end": end.astype(jnp.int32),
        "siphons": is_siphon.astype(jnp.int32),
        "siphons_suboptimal": (is_siphon & (comps["siphon_quality"] < 0)).astype(jnp.int32),
        "siphon_missed_resources": jnp.round(
            -comps["siphon_quality"] / SIPHON_QUALITY_PER_RESOURCE
        ).astype(jnp.int32),
        "siphons_empty": (is_siphon & ~gained_anything).astype(jnp.int32),
        "siphon_points": jnp.where(is_siphon, after.score - before.score, 0).astype(jnp.int32),
        "siphon_programs": jnp.where(is_siphon, gained_programs, 0).astype(jnp.int32),
        "siphon_data_blocks": jnp.sum(drained & before.hidden_is_data).astype(jnp.int32),
        "siphon_program_blocks": jnp.sum(drained & ~before.hidden_is_data).astype(jnp.int32),
        "siphon_transmissions": jnp.sum(jnp.where(drained, before.spawn_count, 0)).astype(
            jnp.int32
        ),
        "siphon_resources": jnp.where(
            is_siphon,
            after.credits - before.credits + after.energy - before.energy,
            0,
        ).astype(jnp.int32),
        "siphon_blocks_on_board": jnp.where(is_siphon, jnp.sum(unsiphoned_blocks), 0).astype(
            jnp.int32
        ),
        "siphon_programs_at_death": jnp.where(is_siphon & died, gained_programs, 0).astype(
            jnp.int32
        ),
        "pickups": (comps["data_siphon"] > 0).astype(jnp.int32),
        "kills": jnp.round(comps["kills"] / KILL_REWARD).astype(jnp.int32),
        "invalid_actions": info["invalid_action"].astype(jnp.int32),
        "program_uses": (
            is_program & (jnp.arange(NUM_PROGRAMS) == action - FIRST_PROGRAM_ACTION)
        ).astype(jnp.int32),
        "program_held_steps": held.astype(jnp.int32),
        "program_affordable_steps": affordable.astype(jnp.int32),
        "program_runnable_steps": runnable.astype(jnp.int32),
        "steps_holding_a_program": jnp.any(held).astype(jnp.int32),
        "steps_a_program_runs": jnp.any(runnable).astype(jnp.int32),
        "resets_by_hp": ((action == RESET_ACTION) & (jnp.arange(MAX_HP + 1) == before.hp)).astype(
            jnp.int32
        ),
        "steps_on_stage": _on_stage(state).astype(jnp.int32),
        **stage_entry_facts(next_state, next_state.stage > state.stage),
    }


def _on_stage(state: Any) -> jax.Array:
    """bool[NUM_STAGES]: true at the stage `state` is on."""
    return jnp.arange(1, NUM_STAGES + 1) == state.stage


def stage_entry_facts(state: Any, entered: jax.Array) -> dict[str, jax.Array]:
    """What the player brings into the stage `state` is on, if `entered` (else zeros): hp,
    enemies and transmissions carry over from stage to stage (game-rules.md §10), so falling
    hp or a growing crowd on entering says whether the later stages are lost by attrition."""
    on = _on_stage(state) & entered
    return {
        "stage_entries": on.astype(jnp.int32),
        "hp_on_entering": jnp.where(on, state.board.hp, 0).astype(jnp.int32),
        "enemies_on_entering": jnp.where(on, jnp.sum(state.board.e_active), 0).astype(jnp.int32),
        "transmissions_on_entering": jnp.where(on, jnp.sum(state.board.t_active), 0).astype(
            jnp.int32
        ),
    }


def _add_step(totals: dict, facts: dict, live) -> dict:
    """Fold one step into the per-game totals of the games still being played."""
    out = {}
    for name, value in facts.items():
        gate = live.reshape(live.shape + (1,) * (value.ndim - 1))
        if name == "end":
            out[name] = jnp.where(live, value, totals[name])
        else:
            out[name] = totals[name] + jnp.where(gate, value, jnp.zeros_like(value))
    return out


# --------------------------------------------------------------------- playing


def _choose(mode, network, params, obs, mask, action_keys):
    if mode == RANDOM:
        logits = jnp.zeros(mask.shape, jnp.float32)
    else:
        logits, _ = network.apply(params, obs)
    if mode == "greedy":
        return distribution.greedy(logits, mask)

    def sample_one(key, game_logits, game_mask):
        return distribution.sample(key, game_logits, game_mask)[0]

    return jax.vmap(sample_one)(action_keys, logits, mask)


@partial(jax.jit, static_argnames=("env", "network", "mode"))
def play_batch(
    game_indices: jax.Array,
    policy_key: jax.Array,
    params: Any,
    max_steps: int,
    env_params: Any,
    *,
    env: ModuleType,
    network: nn.Module | None,
    mode: str,
) -> dict[str, jax.Array]:
    """Play one game per entry of `game_indices` (int32[B]) to its end or `max_steps` steps.

    `env_params` are the game's (`start_params`: canonical unless a probe is asked for).
    Returns per-game arrays: the `step_facts` totals plus `final_stage`
    and `game_seed`.
    """
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(
        jax.vmap(jax.random.PRNGKey)(game_indices), env_params
    )
    game_keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(policy_key, game_indices)
    batch = game_indices.shape[0]

    def step_with_facts(env_keys, state, mask, action):
        next_obs, next_state, reward, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            env_keys, state, action, env_params
        )
        return (
            next_obs,
            next_state,
            done,
            jax.vmap(step_facts)(state, mask, action, next_state, reward, done, info),
        )

    def one_step(carry):
        t, obs, state, live, totals = carry
        keys = jax.vmap(lambda k: jax.random.split(jax.random.fold_in(k, t)))(game_keys)
        mask = jax.vmap(env.action_mask)(state)
        action = _choose(mode, network, params, obs, mask, keys[:, 0])
        next_obs, next_state, done, facts = step_with_facts(keys[:, 1], state, mask, action)
        totals = _add_step(totals, facts, live)

        def keep(old, new):  # finished games stay as they ended
            return jnp.where(live.reshape(live.shape + (1,) * (new.ndim - 1)), new, old)

        state = jax.tree_util.tree_map(keep, state, next_state)
        return t + 1, keep(obs, next_obs), state, live & ~done, totals

    def running(carry):
        t, _, _, live, _ = carry
        return (t < max_steps) & jnp.any(live)

    shapes = jax.eval_shape(
        step_with_facts,
        game_keys,
        state,
        jax.vmap(env.action_mask)(state),
        jnp.zeros(batch, jnp.int32),
    )[3]
    totals = {k: jnp.zeros(v.shape, v.dtype) for k, v in shapes.items()}
    totals["end"] = jnp.full(batch, UNFINISHED, jnp.int32)
    totals.update(jax.vmap(stage_entry_facts)(state, jnp.ones(batch, bool)))  # the start
    carry = (jnp.int32(0), obs, state, jnp.ones(batch, bool), totals)
    _, _, state, _, totals = jax.lax.while_loop(running, one_step, carry)
    return {**totals, "final_stage": state.stage, "game_seed": state.seed}


@dataclass
class Policy:
    """What to evaluate: a label, and a network with parameters (None for the random policy)."""

    label: str
    network: Any = None
    params: Any = None
    source: str | None = None
    config: dict = field(default_factory=dict)

    @property
    def is_random(self) -> bool:
        return self.network is None


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
) -> dict:
    """Play games `first_game .. first_game + episodes - 1`.

    `start_transmissions` > 0 is a probe, not the canonical game: every game
    starts with that many siphon transmissions pending (`start_params`).
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
    parts = [
        jax.device_get(
            play_batch(
                padded[start : start + batch],
                policy_key,
                params,
                jnp.int32(max_steps),
                env_params,
                env=env,
                network=policy.network,
                mode=mode,
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


# -------------------------------------------------------------------- summaries


def _share(part, whole) -> float | None:
    return float(part) / float(whole) if whole else None


UNDO = PROGRAM_NAMES.index("undo")


def program_uses_without_undo(games: dict) -> np.ndarray:
    """Program actions per game other than UNDO: most program actions of the trained agents
    are UNDO (learning.md §15.2, §28.3), which says little about playing the programs."""
    return games["program_uses"].sum(1) - games["program_uses"][:, UNDO]


def per_game_record(games: dict) -> dict[str, list]:
    """The per-game numbers a report keeps (JSON-ready, in game order): what the headline
    means and their standard errors are computed from (`eval_stats`, training.md §9.6)."""
    uses = games["program_uses"].sum(1)
    return {
        "return": [round(float(x), 4) for x in games["return"]],
        "length": [int(x) for x in games["length"]],
        "final_stage": [int(x) for x in games["final_stage"]],
        "end": [ENDS[int(x)] for x in games["end"]],
        "siphons": [int(x) for x in games["siphons"]],
        "kills": [int(x) for x in games["kills"]],
        "programs": [int(x) for x in uses],
        "programs_without_undo": [int(x) for x in program_uses_without_undo(games)],
        "gained_program": [int(x > 0) for x in games["siphon_programs"]],
    }


def stage_completion(final_stages: np.ndarray, wins: int) -> dict[str, dict]:
    """Where the games are lost: for each stage, the games that reached it and the games
    that completed it (reached the next; stage 8 is completed by a win). Enemies and
    transmissions carry over and each stage adds more (game-rules.md §10), so the share
    completed falls stage by stage; its shape shows which stage stops a policy."""
    final_stages = np.asarray(final_stages)
    out = {}
    for stage in range(1, NUM_STAGES + 1):
        reached = int(np.sum(final_stages >= stage))
        completed = int(wins) if stage == NUM_STAGES else int(np.sum(final_stages > stage))
        out[str(stage)] = {
            "reached": reached,
            "completed": completed,
            "share": completed / reached if reached else None,
        }
    return out


# stage_entry's means: key -> (the per-game fact summed, the table's row).
STAGE_ENTRY_MEANS = {
    "mean_hp": ("hp_on_entering", "hp on entering, mean"),
    "mean_enemies": ("enemies_on_entering", "enemies on entering, mean"),
    "mean_transmissions": ("transmissions_on_entering", "transmissions on entering, mean"),
    "mean_steps": ("steps_on_stage", "steps on the stage, mean"),
}


def stage_entry(games: dict) -> dict[str, dict]:
    """For each stage: the games that entered it (or started on it), the mean hp, live
    enemies and transmissions they found, and the mean steps they played on it, the
    exiting step included (None where none did). A report older than the count has no
    such arrays and gets an empty dict."""
    if "stage_entries" not in games:
        return {}
    entries = games["stage_entries"].sum(0)
    return {
        str(stage + 1): {
            "entries": int(entries[stage]),
            **{
                key: _share(games[fact][:, stage].sum(), entries[stage])
                for key, (fact, _) in STAGE_ENTRY_MEANS.items()
            },
        }
        for stage in range(NUM_STAGES)
    }


def summarize(games: dict, checkpoints: int = 1) -> dict:
    """The statistics of training.md §9.2 from `play_games`'s per-game arrays (JSON-ready).

    `checkpoints` > 1: the arrays are that many checkpoints' plays of the same games, one
    after another (`pool_games`); every mean is then the mean over the checkpoints, counts
    are totals, and the standard errors count each game once (training.md §9.8)."""
    n = len(games["return"])
    ends = np.bincount(games["end"], minlength=len(ENDS))
    stages = np.bincount(games["final_stage"], minlength=NUM_STAGES + 1)[1:]
    uses = games["program_uses"]
    used_a_program = uses.sum(1) > 0
    gained_a_program = games["siphon_programs"] > 0
    siphons = int(games["siphons"].sum())
    resets = games["resets_by_hp"].sum(0)
    return {
        "episodes": n,
        "checkpoints": checkpoints,
        "mean_return": float(np.mean(games["return"])),
        "median_return": float(np.median(games["return"])),
        "mean_length": float(np.mean(games["length"])),
        "final_stage_histogram": {str(s + 1): int(c) for s, c in enumerate(stages)},
        "stage_completion": stage_completion(games["final_stage"], ends[WON]),
        "mean_final_stage": float(np.mean(games["final_stage"])),
        "stage1_exit_rate": float(np.mean(games["final_stage"] >= 2)),
        "win_rate": float(ends[WON] / n),
        "unfinished": int(ends[UNFINISHED]),
        "ends": {name: int(c) for name, c in zip(ENDS, ends)},
        "siphons_per_episode": siphons / n,
        "siphon_use_rate": float(np.mean(games["siphons"] > 0)),
        "siphon_suboptimal_share": _share(games["siphons_suboptimal"].sum(), siphons),
        "siphon_missed_resources_per_siphon": _share(
            games["siphon_missed_resources"].sum(), siphons
        ),
        "siphon_empty_share": _share(games["siphons_empty"].sum(), siphons),
        "siphon_points_per_episode": float(games["siphon_points"].sum() / n),
        "siphon_programs_per_episode": float(games["siphon_programs"].sum() / n),
        # What one siphon drains, against what the board offered (learning.md §21).
        "siphon_yield": {
            name: _share(games[f"siphon_{name}"].sum(), siphons)
            for name in (
                "data_blocks",
                "program_blocks",
                "transmissions",
                "resources",
                "blocks_on_board",
            )
        },
        # A program taken on the step the player dies can never be run (learning.md §17.2).
        "siphon_programs_at_death_per_episode": float(games["siphon_programs_at_death"].sum() / n),
        "data_siphon_pickups_per_episode": float(games["pickups"].sum() / n),
        "kills_per_episode": float(games["kills"].sum() / n),
        "programs_per_episode": float(uses.sum() / n),
        "program_use_rate": float(np.mean(used_a_program)),
        "program_use_rate_without_undo": float(np.mean(program_uses_without_undo(games) > 0)),
        # Acquisition or use: which one limits program play (learning.md §16.1)?
        "program_gain_rate": float(np.mean(gained_a_program)),
        "program_use_rate_after_gain": _share(
            np.sum(used_a_program & gained_a_program), np.sum(gained_a_program)
        ),
        "program_uses_per_episode": {
            name: float(uses[:, p].sum() / n) for p, name in enumerate(PROGRAM_NAMES)
        },
        # Why a held program is not run (learning.md §17): the share of steps holding one,
        # of those the share where one can run, of those the share where one is run.
        "program_holding_step_share": _share(
            games["steps_holding_a_program"].sum(), games["length"].sum()
        ),
        "program_runnable_share_when_holding": _share(
            games["steps_a_program_runs"].sum(), games["steps_holding_a_program"].sum()
        ),
        "program_run_share_when_runnable": _share(uses.sum(), games["steps_a_program_runs"].sum()),
        "program_funnel": {
            name: {
                "held_steps": int(games["program_held_steps"][:, p].sum()),
                "affordable_steps": int(games["program_affordable_steps"][:, p].sum()),
                "runnable_steps": int(games["program_runnable_steps"][:, p].sum()),
                "runs": int(uses[:, p].sum()),
            }
            for p, name in enumerate(PROGRAM_NAMES)
        },
        "program_episode_share": {
            name: float(np.mean(uses[:, p] > 0)) for p, name in enumerate(PROGRAM_NAMES)
        },
        "reset_uses": {
            "at_1_hp": int(resets[1]),
            "at_2_hp": int(resets[2]),
            "at_other_hp": int(resets.sum() - resets[1] - resets[2]),
        },
        "stage_entry": stage_entry(games),
        "invalid_actions": int(games["invalid_actions"].sum()),
        # One standard error of each headline mean, over the games (training.md §9.6).
        "standard_errors": eval_stats.standard_errors(per_game_record(games), checkpoints),
    }


@dataclass
class Result:
    label: str
    mode: str
    source: str | None
    summary: dict
    seconds: float
    games: dict = field(repr=False, default_factory=dict)

    @property
    def name(self) -> str:
        return self.label if self.mode == RANDOM else f"{self.label} ({self.mode})"


def evaluate_policy(env: ModuleType, policy: Policy, mode: str, **settings: int) -> Result:
    start = time.perf_counter()
    games = play_games(env, policy, mode, **settings)
    return Result(
        label=policy.label,
        mode=RANDOM if policy.is_random else mode,
        source=policy.source,
        summary=summarize(games),
        seconds=time.perf_counter() - start,
        games=games,
    )


def pool_games(parts: list[dict]) -> dict:
    """Several checkpoints' plays of the same games as one record: each part's per-game
    arrays one after another (part-major), so game `g` of part `k` is row `k * n + g`."""
    first = parts[0]["game_index"]
    for part in parts[1:]:
        if not np.array_equal(part["game_index"], first):
            raise EvaluationError("pooled plays must be of the same games")
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def pooled_label(policies: list[Policy]) -> str:
    """`run/checkpoint_852..checkpoint_932 (3 pooled)` for the checkpoints of one run; a
    lone policy keeps its own label."""
    if len(policies) == 1:
        return policies[0].label
    last = policies[-1].label.rsplit("/", 1)[-1]
    return f"{policies[0].label}..{last} ({len(policies)} pooled)"


def evaluate_pooled(env: ModuleType, policies: list[Policy], mode: str, **settings: int) -> Result:
    """Each policy (a run's last few checkpoints) plays the same games; one result of them
    all. Its numbers describe the run around those updates rather than one checkpoint,
    whose evaluation moves by more than its standard error from save to save (learning.md
    §28.5); its errors count each game once (training.md §9.8)."""
    if len(policies) == 1:
        return evaluate_policy(env, policies[0], mode, **settings)
    if any(policy.is_random for policy in policies):
        raise EvaluationError("only checkpoints are pooled, not the random policy")
    start = time.perf_counter()
    games = pool_games([play_games(env, policy, mode, **settings) for policy in policies])
    return Result(
        label=pooled_label(policies),
        mode=mode,
        source=", ".join(str(policy.source) for policy in policies),
        summary=summarize(games, checkpoints=len(policies)),
        seconds=time.perf_counter() - start,
        games=games,
    )


# ------------------------------------------------------------ loading policies


def load_policy_spec(text: str, *, checkpoint_dir: Path | str = "checkpoints") -> Policy:
    """`random`, `latest`, a `.npz`, a `.pkl` or a run directory -> a `Policy`."""
    from .checkpoint import CheckpointError, latest_run_checkpoint, load_policy

    if text == RANDOM:
        return Policy(label=RANDOM)
    try:
        path = latest_run_checkpoint(Path(checkpoint_dir)) if text == "latest" else Path(text)
        stored = load_policy(path)
    except CheckpointError as error:
        raise EvaluationError(str(error)) from error
    source = stored.source
    label = f"{source.parent.name}/{source.stem}" if source.parent.name else source.stem
    return Policy(
        label=label,
        network=stored.network,
        params=stored.params,
        source=str(source),
        config=stored.config,
    )


def _pooled_run_dir(text: str, flag: str, checkpoint_dir: Path | str) -> Path:
    """The run directory a pooling flag reads: a run directory, or `latest`."""
    from .checkpoint import CheckpointError, latest_run_checkpoint

    try:
        run = latest_run_checkpoint(Path(checkpoint_dir)).parent if text == "latest" else None
    except CheckpointError as error:
        raise EvaluationError(str(error)) from error
    run = run or Path(text)
    if not run.exists():
        raise EvaluationError(f"{text}: no such run directory")
    if not run.is_dir():
        raise EvaluationError(
            f"{text}: {flag} pools a run's checkpoints; give its run directory (or latest), "
            "not one file"
        )
    return run


def last_checkpoint_policies(
    text: str, count: int, *, checkpoint_dir: Path | str = "checkpoints"
) -> list[Policy]:
    """The `count` newest checkpoints of a run (a run directory, or `latest`), oldest
    first: what `--last-checkpoints` pools. `random` stays one policy."""
    from .checkpoint import checkpoints_in

    if count < 1:
        raise EvaluationError(f"--last-checkpoints must be at least 1, got {count}")
    if count == 1 or text == RANDOM:
        return [load_policy_spec(text, checkpoint_dir=checkpoint_dir)]
    run = _pooled_run_dir(text, f"--last-checkpoints {count}", checkpoint_dir)
    found = checkpoints_in(run)
    if len(found) < count:
        raise EvaluationError(
            f"run directory {run}: holds {len(found)} checkpoint_*.pkl, "
            f"fewer than --last-checkpoints {count}"
        )
    return [load_policy_spec(str(path)) for _, path in found[-count:]]


def chosen_checkpoint_policies(
    text: str, updates: list[int], *, checkpoint_dir: Path | str = "checkpoints"
) -> list[Policy]:
    """The checkpoints of a run saved at the named updates, oldest first: what
    `--checkpoint-updates` pools, so that two runs saved on different updates can be read
    at the same ones without copying checkpoints aside. `random` stays one policy."""
    from .checkpoint import checkpoints_in

    if not updates:
        raise EvaluationError("--checkpoint-updates needs at least one update")
    if any(update < 0 for update in updates):
        raise EvaluationError(f"--checkpoint-updates must be updates >= 0, got {updates}")
    if len(set(updates)) != len(updates):
        raise EvaluationError(f"--checkpoint-updates names an update twice: {updates}")
    if text == RANDOM:
        return [load_policy_spec(text, checkpoint_dir=checkpoint_dir)]
    run = _pooled_run_dir(text, "--checkpoint-updates", checkpoint_dir)
    saved = dict(checkpoints_in(run))
    missing = [update for update in updates if update not in saved]
    if missing:
        held = ", ".join(str(update) for update in sorted(saved)) or "none"
        raise EvaluationError(
            f"run directory {run}: no checkpoint_*.pkl for update(s) "
            f"{', '.join(map(str, missing))} (saved: {held})"
        )
    return [load_policy_spec(str(saved[update])) for update in sorted(updates)]


# ---------------------------------------------------------------- presenting


def _fmt(value, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def _fmt_error(summary: dict, key: str, digits: int = 2) -> str:
    """A headline number with its standard error over the games, where the summary has one."""
    error = summary.get("standard_errors", {}).get(key)
    text = _fmt(summary[key], digits)
    return text if error is None else f"{text} ± {error:.{digits}f}"


def _completion_cell(summary: dict) -> str:
    """Each stage's share completed of the games reaching it, in percent, stage 1 first
    (`-`: no game reached it; a report older than the count also reads `-`)."""
    return _stage_cells(summary, "stage_completion", "share", lambda share: f"{100 * share:3.0f}")


def _stage_cells(summary: dict, section: str, key: str, fmt: Callable[[float], str]) -> str:
    """One cell per stage of `summary[section][stage][key]`, formatted; `-` where it is None
    or missing (a report older than the section)."""
    by_stage = summary.get(section, {})
    values = [by_stage.get(stage, {}).get(key) for stage in summary["final_stage_histogram"]]
    return " ".join("  -" if value is None else fmt(value) for value in values)


def _entry_cell(summary: dict, key: str) -> str:
    """Each stage's mean of `key` on entering it, stage 1 first (`-`: none entered it, or a
    report older than the count)."""
    return _stage_cells(
        summary, "stage_entry", key, lambda mean: f"{mean:3.1f}" if mean < 9.95 else f"{mean:3.0f}"
    )


def table_rows(results: list[Result]) -> list[tuple[str, list[str]]]:
    """(row name, one cell per result) for the console table."""
    s = [r.summary for r in results]
    rows = [("episodes", [_fmt(x["episodes"]) for x in s])]
    if any(x.get("checkpoints", 1) > 1 for x in s):
        rows.append(("  checkpoints pooled", [_fmt(x.get("checkpoints", 1)) for x in s]))
    rows += [
        ("mean return", [_fmt_error(x, "mean_return") for x in s]),
        ("median return", [_fmt(x["median_return"]) for x in s]),
        ("mean length", [_fmt_error(x, "mean_length", 1) for x in s]),
        ("mean final stage", [_fmt_error(x, "mean_final_stage") for x in s]),
        ("stage-1 exit rate", [_fmt_error(x, "stage1_exit_rate", 3) for x in s]),
        ("win rate", [_fmt_error(x, "win_rate", 3) for x in s]),
    ]
    rows += [
        (f"  final stage {k}", [_fmt(x["final_stage_histogram"][k]) for x in s])
        for k in s[0]["final_stage_histogram"]
    ]
    rows.append(("  stage", [" ".join(f"{k:>3}" for k in x["final_stage_histogram"]) for x in s]))
    rows.append(("    completed, of games reaching it (%)", [_completion_cell(x) for x in s]))
    rows += [
        (f"    {label}", [_entry_cell(x, key) for x in s])
        for key, (_, label) in STAGE_ENTRY_MEANS.items()
    ]
    rows += [
        (f"  ended: {name.replace('_', ' ')}", [_fmt(x["ends"][name]) for x in s]) for name in ENDS
    ]
    rows += [
        ("siphons / episode", [_fmt_error(x, "siphons_per_episode") for x in s]),
        ("  episodes with a siphon", [_fmt_error(x, "siphon_use_rate", 3) for x in s]),
        ("  suboptimal siphon share", [_fmt(x["siphon_suboptimal_share"], 3) for x in s]),
        ("  missed resources / siphon", [_fmt(x["siphon_missed_resources_per_siphon"]) for x in s]),
        ("  empty siphon share", [_fmt(x["siphon_empty_share"], 3) for x in s]),
        ("  points / episode", [_fmt(x["siphon_points_per_episode"]) for x in s]),
        ("  programs gained / episode", [_fmt(x["siphon_programs_per_episode"]) for x in s]),
        (
            "    of those, as the player dies",
            [_fmt(x["siphon_programs_at_death_per_episode"]) for x in s],
        ),
        ("  per siphon: data blocks", [_fmt(x["siphon_yield"]["data_blocks"]) for x in s]),
        ("    program blocks", [_fmt(x["siphon_yield"]["program_blocks"]) for x in s]),
        ("    transmissions queued", [_fmt(x["siphon_yield"]["transmissions"]) for x in s]),
        ("    credits + energy", [_fmt(x["siphon_yield"]["resources"]) for x in s]),
        (
            "    unsiphoned blocks on the board",
            [_fmt(x["siphon_yield"]["blocks_on_board"]) for x in s],
        ),
        ("data-siphon pickups / episode", [_fmt(x["data_siphon_pickups_per_episode"]) for x in s]),
        ("kills / episode", [_fmt_error(x, "kills_per_episode") for x in s]),
        ("programs / episode", [_fmt_error(x, "programs_per_episode") for x in s]),
        ("  episodes with a program", [_fmt_error(x, "program_use_rate", 3) for x in s]),
        (
            "    other than UNDO",
            [_fmt_error(x, "program_use_rate_without_undo", 3) for x in s],
        ),
        ("  episodes gaining a program", [_fmt_error(x, "program_gain_rate", 3) for x in s]),
        ("  of those, using a program", [_fmt(x["program_use_rate_after_gain"], 3) for x in s]),
        ("  steps holding a program", [_fmt(x["program_holding_step_share"], 3) for x in s]),
        ("    one can run", [_fmt(x["program_runnable_share_when_holding"], 3) for x in s]),
        ("    one is run", [_fmt(x["program_run_share_when_runnable"], 3) for x in s]),
    ]
    used = [
        name for name in PROGRAM_NAMES if any(x["program_uses_per_episode"][name] > 0 for x in s)
    ]
    rows += [
        (f"  {name} / episode", [_fmt(x["program_uses_per_episode"][name], 3) for x in s])
        for name in used
    ]
    rows += [
        ("  RESET at 1 HP", [_fmt(x["reset_uses"]["at_1_hp"]) for x in s]),
        ("  RESET at 2 HP", [_fmt(x["reset_uses"]["at_2_hp"]) for x in s]),
        ("invalid actions", [_fmt(x["invalid_actions"]) for x in s]),
        ("seconds", [_fmt(r.seconds, 1) for r in results]),
    ]
    return rows


def format_table(results: list[Result]) -> str:
    return eval_stats.format_grid([r.name for r in results], table_rows(results))


def report(results: list[Result], settings: dict) -> dict:
    """The JSON document: settings, the game seeds, and each result's summary and per-game
    record (what `--reports` computes paired differences from; a pooled result's record
    holds its checkpoints' plays of those games one after another)."""
    first = results[0]
    games = len(first.games["game_seed"]) // first.summary.get("checkpoints", 1)
    return {
        "settings": settings,
        "game_seeds": [int(x) for x in first.games["game_seed"][:games]],
        "results": [
            {
                "label": r.label,
                "mode": r.mode,
                "source": r.source,
                "seconds": r.seconds,
                "summary": r.summary,
                **({"per_game": per_game_record(r.games)} if r.games else {}),
            }
            for r in results
        ],
    }


def write_png(results: list[Result], path: Path) -> Path:
    """Four panels, one bar per result in each group.

    The panels: final stage, how games ended, programs, siphons.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(15, 9))
    width = 0.8 / len(results)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]

    def bars(ax, groups, values_of, title, ylabel, rotate=False):
        x = np.arange(len(groups))
        for i, r in enumerate(results):
            ax.bar(
                x + (i - (len(results) - 1) / 2) * width,
                values_of(r.summary),
                width,
                label=r.name,
                color=colours[i % len(colours)],
            )
        ax.set_xticks(x, groups, rotation=60 if rotate else 0, ha="right" if rotate else "center")
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)

    stages = list(results[0].summary["final_stage_histogram"])
    bars(
        axes[0, 0],
        stages,
        lambda s: [s["final_stage_histogram"][k] / s["episodes"] for k in stages],
        "Final stage",
        "share of games",
    )
    axes[0, 0].set_xlabel("stage reached when the game ended")
    bars(
        axes[0, 1],
        [e.replace("died_", "died: ").replace("_", " ") for e in ENDS],
        lambda s: [s["ends"][e] / s["episodes"] for e in ENDS],
        "How games ended",
        "share of games",
    )
    bars(
        axes[1, 0],
        list(PROGRAM_NAMES),
        lambda s: [s["program_uses_per_episode"][p] for p in PROGRAM_NAMES],
        "Programs run",
        "uses per game",
        rotate=True,
    )
    siphon_rows = [
        ("siphons\n/ game", "siphons_per_episode"),
        ("games with\na siphon", "siphon_use_rate"),
        ("suboptimal\nshare", "siphon_suboptimal_share"),
        ("empty\nshare", "siphon_empty_share"),
        ("programs gained\n/ game", "siphon_programs_per_episode"),
    ]
    bars(
        axes[1, 1],
        [name for name, _ in siphon_rows],
        lambda s: [s[key] or 0.0 for _, key in siphon_rows],
        "Siphons",
        "value",
    )
    axes[0, 0].legend(fontsize=9)
    n = results[0].summary["episodes"]
    fig.suptitle(f"Behaviour over {n:,} games (canonical start)")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


# ------------------------------------------------------------- during training

TRAINING_KEYS = {
    "eval/num_episodes": "episodes",
    "eval/mean_episode_return": "mean_return",
    "eval/median_episode_return": "median_return",
    "eval/mean_episode_length": "mean_length",
    "eval/mean_final_stage": "mean_final_stage",
    "eval/stage1_exit_rate": "stage1_exit_rate",
    "eval/win_rate": "win_rate",
    "eval/siphons_per_episode": "siphons_per_episode",
    "eval/siphon_suboptimal_share": "siphon_suboptimal_share",
    "eval/programs_per_episode": "programs_per_episode",
    "eval/program_use_rate": "program_use_rate",
    "eval/program_use_rate_without_undo": "program_use_rate_without_undo",
    "eval/program_gain_rate": "program_gain_rate",
    "eval/siphon_programs_at_death_per_episode": "siphon_programs_at_death_per_episode",
    "eval/program_holding_step_share": "program_holding_step_share",
}


def training_metrics(summary: dict, seconds: float) -> dict[str, float]:
    """The `eval/*` keys logged at each checkpoint (training.md §9.5)."""
    n = summary["episodes"]
    metrics = {
        key: float("nan") if summary[name] is None else float(summary[name])
        for key, name in TRAINING_KEYS.items()
    }
    metrics.update({f"eval/end_{name}_rate": summary["ends"][name] / n for name in ENDS})
    # Block avoidance (learning.md §21.1): blocks drained and transmissions queued per siphon.
    drained = summary["siphon_yield"]
    if drained["data_blocks"] is None:
        blocks = transmissions = float("nan")
    else:
        blocks = drained["data_blocks"] + drained["program_blocks"]
        transmissions = drained["transmissions"]
    metrics["eval/siphon_blocks_per_siphon"] = float(blocks)
    metrics["eval/siphon_transmissions_per_siphon"] = float(transmissions)
    metrics["eval/seconds"] = seconds
    return metrics


class CheckpointEvaluation:
    """Plays the fixed evaluation games at each checkpoint; a failure is a warning, never raised."""

    def __init__(
        self,
        env: ModuleType,
        network: nn.Module,
        *,
        episodes: int,
        mode: str = "greedy",
        max_steps: int = DEFAULT_MAX_STEPS,
        seed: int = 0,
        say: Callable[..., Any] = print,
    ):
        check_settings(
            mode, episodes=episodes, first_game=0, max_steps=max_steps, batch=DEFAULT_BATCH
        )
        self.env, self.network, self.mode = env, network, mode
        self.settings = dict(
            episodes=episodes, max_steps=max_steps, batch=min(episodes, DEFAULT_BATCH), seed=seed
        )
        self.say = say

    def run(self, update: int, params: Any) -> dict[str, float] | None:
        try:
            result = evaluate_policy(
                self.env,
                Policy(label="training", network=self.network, params=params),
                self.mode,
                **self.settings,
            )
        except Exception as error:
            self.say(
                f"WARNING: behaviour evaluation at update {update} failed "
                f"({type(error).__name__}: {error})"
            )
            return None
        s = result.summary
        self.say(
            f"Eval ({self.mode}, {s['episodes']} games, {result.seconds:.1f} s): "
            f"return {s['mean_return']:.2f}, "
            f"length {s['mean_length']:.1f}, stage {s['mean_final_stage']:.2f}, exit rate "
            f"{s['stage1_exit_rate']:.3f}, wins {s['ends']['won']}, unfinished {s['unfinished']}, "
            f"siphons {s['siphons_per_episode']:.2f}/game, "
            f"programs {s['programs_per_episode']:.2f}/game"
        )
        return training_metrics(s, result.seconds)
